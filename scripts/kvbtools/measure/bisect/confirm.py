"""kvb bisect's third phase: the confirmation (docs/compare.md, the bisect's step 5).

The commit the search ends on is measured against its parent with old and new, on the most links
any series of the range reached and twice the rounds of the longest, fixed before any value is
seen (judge.confirm), and its instruction counts are the second witness: the same counts make a
timed difference a code-placement effect; counts that move by the threshold confirm what time
could not tell; either only where the counts witness the change time measured (agreement.py).
"""
from __future__ import annotations

import math

from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.bisect import agreement, judge, witness
from kvbtools.measure.bisect.records import Confirm, ConfirmSeries, MultiStep, Step, ivjson
from kvbtools.measure.bisect.search import Search
from kvbtools.measure.bisect.state import KvbenchMode
from kvbtools.measure.bisect.trees import git
from kvbtools.measure.runner import BuildError


def confirmation(search: Search, blamed: str) -> Confirm:
    done = search.recorded(Confirm)
    if done:
        return done[0]
    old, new = search.old, search.new
    parent = git(search.s.repo, "rev-parse", f"{blamed}^").stdout.strip()
    same = search.state.compiled is not None and \
        search.fingerprint(parent) == search.fingerprint(blamed)
    rec = Confirm(blamed, parent, same)
    for sha in (parent, blamed):
        if sha not in search.ws.built:
            search.say(f"building {sha[:12]} for the confirmation")
            try:
                search.build(sha)
            except BuildError as e:
                rec.reasons = [f"{sha[:12]} does not build: {e}"]
                search.record(rec)
                return rec
    search.built(old)
    search.built(new)
    links, n = confirm_size(search)
    search.say(f"confirming {blamed[:12]} against its parent {parent[:12]}: {n} rounds on "
               f"{links} link(s) with old and new")
    roles = {"parent": parent, "blamed": blamed, "old": old, "new": new}
    m, out = search.series(search.plan("confirm", list(roles.values()), fixed=n, links=links),
                           roles, lambda m: True, lambda m: [])
    v = m.levels()
    j = search.state.judgement
    c = judge.confirm(v["parent"], v["blamed"], v["old"], v["new"], sign=search.sign(),
                      alpha=j.alpha, threshold=j.threshold, same_sources=same,
                      exact=search.exact)
    rec.series = ConfirmSeries(
        out.spent.rounds, m, ivjson(c.ratio), c.p, ivjson(c.change),
        c.explained if math.isfinite(c.explained) else None,
        c.before if math.isfinite(c.before) else None, c.unit, out.spent)
    rec.reasons = list(c.reasons)
    check_counts(search, rec, parent, blamed)
    search.record(rec)
    return rec


def confirm_size(search: Search) -> tuple[int, int]:
    """(links, rounds) of the confirmation, fixed before any of its values is seen, so its p
    stays a p-value: the most links any series of this range reached, and twice the rounds
    of the longest (at least twice --repeats), as many as the budget of a series buys at
    the pace of the series so far (a round of four commits for 4/3 of one of three)."""
    series = [r for r in search.records if r.measured and r.measured.values]
    links = max([search.layouts()] + [r.measured.links for r in series])
    rounds = 2 * max([search.s.budget.first] + [r.rounds_taken for r in search.records])
    # (spent, commits a round): the series of a step of several ran k + 2 a round, the others
    # are paced as three (what a round of four costs: 4/3 of theirs)
    spent = [(r.spent, 3) for r in series if getattr(r, "spent", None)] + \
        [(r.series.spent, r.paced if isinstance(r, MultiStep) else 3) for r in series
         if isinstance(r, (Step, MultiStep)) and r.series and r.series.spent]
    paced = [(x.measuring, x.links * x.rounds_per_link * (v / 3 if v != 3 else 1))
             for x, v in spent if x.links * x.rounds_per_link > 0]
    if paced:
        per_round = 4 / 3 * sum(t for t, _ in paced) / sum(n for _, n in paced)
        seconds = search.plan("confirm", [search.old, search.new], paid=[]).seconds()
        rounds = min(rounds, max(int(seconds / per_round), 2 * search.s.budget.first))
    rounds = max(rounds, 2 * links if links > 1 else rounds)
    return links, -(-rounds // links) * links


def check_counts(search: Search, rec: Confirm, parent: str, blamed: str) -> None:
    """Instruction counts of parent and blamed (witness.py). Time says changed but the
    instructions are the same: a code-placement effect, not confirmed. Time cannot tell the
    commit from its parent but the counts change by the threshold in the direction looked
    for (--witness auto or instructions): confirmed by the counts. Either only where the counts
    witness this change (agreement.py): else the note says why they decide nothing."""
    count, why = witness.counter(search.state.mode)
    if count is None:
        rec.witness_note = why if witness.counted(search.state.mode) else ""
        return
    try:
        cp, cb = search.counts([parent, blamed])
    except (BuildError, RunError, UsageError) as e:
        rec.witness_note = f"counting instructions failed: {e}"
        return
    mode = witness.counted(search.state.mode)
    preset = (witness.witness_preset(mode.preset) or "") \
        if isinstance(mode, KvbenchMode) else ""
    w = witness.Witness(cp, cb, preset)
    rec.witness = w
    moved = search.count_sign() * math.log(cb / cp) if cp > 0 and cb > 0 else 0.0
    timing = [x for x in rec.reasons if "does not differ significantly" in x]
    placement = w.same and not rec.reasons
    decides = search.s.witness != "time" and timing and \
        moved >= math.log1p(search.s.judgement.threshold)
    if not (placement or decides):
        return
    rec.witness_note = search.refuted or agreement.disagreement(search, [])
    if rec.witness_note:
        return
    if placement:
        rec.placement_effect = True
        rec.reasons.append(f"a code-placement effect: time differs but the {w.text()}")
    else:
        rec.reasons.remove(timing[0])
        rec.witness_decided = True
