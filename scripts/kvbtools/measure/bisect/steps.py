"""kvb bisect's second phase: the steps (docs/compare.md, the bisect's step 2).

git's bisection (`git rev-list --bisect-all`) names the commit to test, or a step tests k
commits that cut the range (multistep.py, sections.py: k by what a step costs); a commit that
compiles a judged commit's sources takes its verdict without a build or a run; any other is
measured with old and new in the same rounds and judged like old, like new or uncertain
(judge.classify), by time or, when time cannot decide within the budget, by its instruction
counts where they witness the same change (agreement.py). The recorded steps of a resumed
bisect are replayed first.
"""
from __future__ import annotations

import math
import os
import time

from kvbtools.core.errors import EXIT_UNDECIDED
from kvbtools.measure.bisect import agreement, judge, multistep, sections, witness
from kvbtools.measure.bisect.records import (INSTRUCTIONS, MEASURED, SAME_SOURCES, TIME,
                                             Measured, MultiStep, Step, StepSeries, iv_text,
                                             ivjson)
from kvbtools.measure.bisect.search import Ending, Search, rows
from kvbtools.measure.bisect.series import CommitCannotRun
from kvbtools.measure.bisect.trees import git
from kvbtools.measure.runner import BuildError


def _pct(x: float) -> str:
    return f"{x * 100 + 0.0:.0f}%".replace("-0%", "0%") if math.isfinite(x) else "?"


def step_line(rec: Step, cost: bool = True, measured: str = TIME) -> str:
    """One step of the search, as the progress lines and the report show it (`cost`: what its
    series cost; a candidate of a step of several says it on the step's line; `measured`: what
    the series measured, metrics.series_word)."""
    sha = rec.commit[:12]
    if rec.how == SAME_SOURCES and rec.verdict == "skip":
        return (f"step {rec.step}: {sha} skipped: no build: it compiles the same sources "
                f"as {rec.same_as[:12]}, which does not build or run")
    if rec.how == SAME_SOURCES:
        return (f"step {rec.step}: {sha} like {rec.verdict}: no build, no run: it "
                f"compiles the same sources as {rec.same_as[:12]}")
    if rec.verdict == "skip" or (rec.series is None and not rec.counts):
        return f"step {rec.step}: {sha} skipped: {rec.how}: {rec.why[:300]}"
    word = "uncertain" if rec.verdict == judge.UNCERTAIN else f"like {rec.verdict}"
    line = f"step {rec.step}: {sha} {word}, at {_pct(rec.position)} of old -> new"
    s = rec.series
    if s is not None:
        rule = f" by the {s.rule}" if s.rule == judge.HALFWAY and rec.witness != INSTRUCTIONS \
            else ""
        spent = (f"; {s.spent.text()}" if s.spent else f", {s.seconds:.1f} s") if cost else ""
        line += (f"{rule}; {measured}: this/old {iv_text(s.to_old)}, this/new {iv_text(s.to_new)}, "
                 f"new/old {iv_text(s.change)} ({s.unit or f'n={s.measured.n}'}{spent})")
    if rec.counts:
        c = rec.counts
        line += (f"; instructions: old {c['old']:.4g}, new {c['new']:.4g}, this "
                 f"{c['this']:.4g}")
    if rec.verdict == judge.UNCERTAIN:
        line += "; undecided"
    else:
        line += f"; decided by {INSTRUCTIONS if rec.witness == INSTRUCTIONS else measured}"
    return line + (f" ({rec.note})" if rec.note else "")


def replay(search: Search) -> Ending | None:
    """Takes the verdicts of the recorded steps (and what they say of the witnesses); an Ending
    when one of them ended the search."""
    for rec in search.records:
        if isinstance(rec, MultiStep):
            for one in rec.steps:
                _replayed(search, one)
            stuck, _ = sections.settle(search, rec)
            search.forced = stuck if stuck is not None and search.refuted else None
            if stuck is not None and search.forced is None:
                return undecided_ending(search, stuck)
        elif isinstance(rec, Step):
            _replayed(search, rec)
            if rec.verdict == judge.UNCERTAIN:
                return undecided_ending(search, rec)
            search.forced = None
            search.mark(rec.verdict, rec.commit)
    return None


def _replayed(search: Search, rec: Step) -> None:
    """What a recorded step says beyond its verdict: what compiles like it, whether the counts
    decided it (every later step is counted) or were found no witness of the change."""
    search.know(rec.fingerprint, rec.verdict, rec.commit,
                "" if rec.verdict == "skip" else rec.witness)
    if rec.witness == INSTRUCTIONS and rec.how != SAME_SOURCES:
        search.by_counts = True
    if rec.note:
        search.refuted = rec.note


def steps(search: Search) -> Ending | str:
    """Bisects until the first new commit is known (returned) or the search ends: a step of
    one commit as git bisect chooses it, or of k (sections.py) that cut the range."""
    while True:
        cands = search.candidates()
        rest = [c for c in cands if c != search.new_ref]
        testable = [c for c in rest if c not in search.skipped]
        if not rest:
            return search.new_ref
        if not testable:
            return Ending(1, "could not narrow it down: the commits left do not build or "
                             "run; the first new commit is one of " +
                             ", ".join(s[:12] for s in rest + [search.new_ref]))
        n = search.first_step + search.step_count()
        forced, search.forced = search.forced, None
        k, how = (1, "") if forced else sections.how_many(search, len(testable) + 1)
        if k > 1:
            ending = many(search, n, k, how, len(cands))
            if ending is not None:
                return ending
            continue
        sha = forced.commit if forced else testable[0]
        about = n - 1 + max(1, math.ceil(math.log2(len(testable) + 1)))
        subject = git(search.s.repo, "log", "-1", "--format=%s", sha).stdout.strip()
        search.say(f"step {n} of about {about}: {sha[:12]} {subject[:60]} "
                   f"({len(cands)} commits left)")
        rec = agreement.measure_on(search, n, forced) if forced else step(search, n, sha)
        if search.sub:
            rec.ends = (search.old, search.new)
        search.record(rec)
        search.say(step_line(rec, measured=search.measured))
        if rec.verdict == judge.UNCERTAIN:
            return undecided_ending(search, rec)
        search.mark(rec.verdict, sha)


def many(search: Search, n: int, k: int, how: str, left: int) -> Ending | None:
    """A step of k candidates (multistep.py), the range narrowed by their verdicts; an Ending
    when a candidate in the range left could not be placed."""
    shas = sections.cuts(search, k)
    about = n - 1 + max(1, math.ceil(math.log(left) / math.log(k + 1)))
    search.say(f"step {n} of about {about}: {len(shas)} candidates ({how}): "
               + ", ".join(x[:12] for x in shas) + f" ({left} commits left)")
    rec = multistep.step(search, n, shas)
    if search.sub:
        rec.ends = (search.old, search.new)
    search.record(rec)
    for line in multi_lines(rec, search.measured):
        search.say(line)
    stuck, said = sections.settle(search, rec)
    for line in said:
        search.say(line)
    if stuck is None:
        return None
    if search.refuted and stuck.series is not None:
        search.forced = stuck    # measured on by time as the next step, after these rounds
        return None
    return undecided_ending(search, stuck)


def multi_lines(rec: MultiStep, measured: str = TIME) -> list[str]:
    """A step of several candidates as the progress lines and the report show it: the series,
    then each candidate's line (`measured`: step_line's)."""
    s = rec.series
    where = "in the same rounds" if not rec.nodes else (
        "each on a node of its own, in rounds of its own: " + ", ".join(
            f"{r} on {'+'.join(n) or 'none'}" for r, n in rec.nodes.items()))
    head = (f"step {rec.step}: {len(rec.steps)} candidates, "
            + (f"{rec.variants - 2} measured with old and new {where} ("
               f"{s.unit or f'n={s.measured.n}'}"
               + (f"; {s.spent.text()}" if s.spent else "") + ")" if s is not None
               else "none measured"))
    return [head] + ["  " + step_line(x, cost=False, measured=measured) for x in rec.steps]


def step(search: Search, n: int, sha: str) -> Step:
    fp = search.fingerprint(sha)
    same = search.same_sources_as(fp)
    if same:
        verdict, like, w = same
        return Step(n, sha, fp, verdict, SAME_SOURCES, same_as=like, witness=w or TIME)
    if search.by_counts:
        return agreement.counted_step(search, n, sha, fp, None)
    try:
        search.build(sha)
    except BuildError as e:
        search.know(fp, "skip", sha, "")
        return Step(n, sha, fp, "skip", "does not build",
                    why=str(e).replace(search.dir + os.sep, ""))
    try:
        rec = timed_step(search, n, sha, fp)
    except CommitCannotRun as e:
        return Step(n, sha, fp, "skip", "does not run", why=str(e))
    if rec.verdict != judge.UNCERTAIN:
        search.know(fp, rec.verdict, sha, TIME)
        return rec
    rec = agreement.by_counts(search, n, [rec])[0]
    if rec.verdict == judge.UNCERTAIN and search.refuted and rec.series is not None:
        return agreement.measure_on(search, n, rec)
    return rec


def timed_step(search: Search, n: int, sha: str, fp: str) -> Step:
    old, new = search.old, search.new
    search.built(old)
    search.built(new)
    roles = {"old": old, "new": new, "this": sha}
    t = time.monotonic()

    def call(m: Measured, final: bool = False) -> judge.StepCall:
        v = m.levels()
        return judge.classify(v["old"], v["new"], v["this"], final=final, exact=search.exact)

    m, out = search.series(
        search.plan(f"step {n}", [old, new, sha], paid=[sha]), roles,
        lambda m: call(m).settled,
        lambda m: rows(m, [("old", "this"), ("new", "this")]), under_test=sha)
    c = call(m, final=True)
    st = StepSeries(out.spent.rounds, out.spent.stopped_by, c.narrow,
                    round(time.monotonic() - t, 3), m, ivjson(c.to_old), ivjson(c.to_new),
                    ivjson(c.change), c.position, c.unit, c.rule, out.spent)
    return Step(n, sha, fp, c.verdict, MEASURED, series=st)


def undecided_ending(search: Search, rec: Step) -> Ending:
    a, b = search.newest_old(), search.new_ref
    pos = rec.position
    where = f"it sits {pos * 100:.0f}% of the way from old to new" \
        if math.isfinite(pos) else ""
    n = rec.series.measured.n if rec.series else 0
    spent = f", {rec.series.spent.text()}" if rec.series and rec.series.spent else ""
    why = (f"the change is within the noise at n={n}{spent} (step {rec.step}, "
           f"{rec.commit[:12]}" + (f": {where}" if where else "") + ")")
    if rec.why:
        why += f"; {rec.why}"
    elif search.s.witness != "time" and not search.can_count():
        why += f"; no instruction counts: {witness.counter(search.state.mode)[1]}"
    return Ending(EXIT_UNDECIDED,
                  f"could not decide between {a[:12]} and {b[:12]}: {why}; the first new "
                  f"commit is in {a[:12]}..{b[:12]} ({len(search.candidates())} commit(s) "
                  "left)" + placement_caveat(search, a, b))


def placement_caveat(search: Search, a: str, b: str) -> str:
    """Honest ranges (docs/placement.md): a range bounded by verdicts measured on
    one link per commit holds the change only if those verdicts were not placement effects.
    Names them and the range that holds the change either way (old or new in their place).
    Verdicts taken by content hash or by counts, and those made over several links, are not
    sensitive."""
    if search.layouts() > 1:
        return ""
    judged = {r.commit: r for r in search.judged()}
    sensitive = [x for x in (a, b) if x in judged and judged[x].how == MEASURED
                 and judged[x].witness != INSTRUCTIONS]
    if not sensitive:
        return ""
    lo = search.s.old if a in sensitive else a
    hi = search.s.new if b in sensitive else b
    return ("; placement-sensitive: " + ", ".join(
        f"step {judged[x].step} ({x[:12]} like {judged[x].verdict})" for x in sensitive)
        + f" was judged on one link per commit (--layouts 1) and may be a code-placement "
          f"effect; if so the first new commit is in {lo[:12]}..{hi[:12]}")
