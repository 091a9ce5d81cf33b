"""kvb bisect's second phase: the steps (docs/compare.md, the bisect's step 2).

git's bisection (`git rev-list --bisect-all`) names the commit to test; a commit that compiles a
judged commit's sources takes its verdict without a build or a run; any other is measured with
old and new in the same rounds and judged like old, like new or uncertain (judge.classify), by
time or, when time cannot decide within the budget, by its instruction counts. The recorded steps
of a resumed bisect are replayed first.
"""
from __future__ import annotations

import math
import os
import time

from kvbtools.core import levels
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.measure.bisect import judge, witness
from kvbtools.measure.bisect.records import (COUNTED, INSTRUCTIONS, MEASURED, SAME_SOURCES,
                                             Measured, Step, StepSeries, iv_text, ivjson)
from kvbtools.measure.bisect.search import Ending, Search, rows
from kvbtools.measure.bisect.series import CommitCannotRun
from kvbtools.measure.bisect.trees import git
from kvbtools.measure.runner import BuildError


def _pct(x: float) -> str:
    return f"{x * 100 + 0.0:.0f}%".replace("-0%", "0%") if math.isfinite(x) else "?"


def step_line(rec: Step) -> str:
    """One step of the search, as the progress lines and the report show it."""
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
        line += (f"{rule}; time: this/old {iv_text(s.to_old)}, this/new {iv_text(s.to_new)}, "
                 f"new/old {iv_text(s.change)} ({s.unit or f'n={s.measured.n}'}"
                 + (f"; {s.spent.text()}" if s.spent else f", {s.seconds:.1f} s") + ")")
    if rec.counts:
        c = rec.counts
        line += (f"; instructions: old {c['old']:.4g}, new {c['new']:.4g}, this "
                 f"{c['this']:.4g}")
    return line + f"; decided by {'instructions' if rec.witness == INSTRUCTIONS else 'time'}" \
        if rec.verdict != judge.UNCERTAIN else line + "; undecided"



def replay(search: Search) -> Ending | None:
    """Takes the verdicts of the recorded steps; an Ending when one of them ended the
    search."""
    for rec in search.recorded(Step):
        if rec.verdict == judge.UNCERTAIN:
            return undecided_ending(search, rec)
        mark(search, rec.verdict, rec.commit)
        if rec.fingerprint:
            search.known.setdefault(rec.fingerprint, (rec.verdict, rec.commit))
    return None


def steps(search: Search) -> Ending | str:
    """Bisects until the first new commit is known (returned) or the search ends."""
    while True:
        cands = candidates(search)
        rest = [c for c in cands if c != search.new_ref]
        testable = [c for c in rest if c not in search.skipped]
        if not rest:
            return search.new_ref
        if not testable:
            return Ending(1, "could not narrow it down: the commits left do not build or "
                             "run; the first new commit is one of " +
                             ", ".join(s[:12] for s in rest + [search.new_ref]))
        sha = testable[0]
        n = search.first_step + len(search.recorded(Step))
        about = n - 1 + max(1, math.ceil(math.log2(len(testable) + 1)))
        subject = git(search.s.repo, "log", "-1", "--format=%s", sha).stdout.strip()
        search.say(f"step {n} of about {about}: {sha[:12]} {subject[:60]} "
                 f"({len(cands)} commits left)")
        rec = step(search, n, sha)
        if search.sub:
            rec.ends = (search.old, search.new)
        search.record(rec)
        search.say(step_line(rec))
        if rec.verdict == judge.UNCERTAIN:
            return undecided_ending(search, rec)
        mark(search, rec.verdict, sha)


def step(search: Search, n: int, sha: str) -> Step:
    fp = search.fingerprint(sha)
    same = search.same_sources_as(fp)
    if same:
        verdict, like = same
        return Step(n, sha, fp, verdict, SAME_SOURCES, same_as=like)
    if search.by_counts:
        return counted_step(search, n, sha, fp, None)
    try:
        search.build(sha)
    except BuildError as e:
        if fp:
            search.known[fp] = ("skip", sha)
        return Step(n, sha, fp, "skip", "does not build",
                    why=str(e).replace(search.dir + os.sep, ""))
    try:
        rec = timed_step(search, n, sha, fp)
    except CommitCannotRun as e:
        return Step(n, sha, fp, "skip", "does not run", why=str(e))
    if rec.verdict == judge.UNCERTAIN and search.can_count():
        counted = counted_step(search, n, sha, fp, rec.series)
        if counted.witness == INSTRUCTIONS:
            # Time could not place a commit between these ends within a budget; the next
            # commit lies between them too: count the rest rather than spend a timed
            # build and budget on each first.
            search.by_counts = True
            search.say(f"step {n}: time could not decide within its budget; the steps left "
                     "are decided by instruction counts")
        return counted
    if fp and rec.verdict != judge.UNCERTAIN:
        search.known[fp] = (rec.verdict, sha)
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


def counted_step(search: Search, n: int, sha: str, fp: str, timed: StepSeries | None) -> Step:
    """The step decided by instruction counts: the halfway rule on exact values."""
    try:
        co, cn, ct = search.counts([search.old, search.new, sha])
    except (BuildError, RunError, UsageError) as e:
        if timed is not None:
            return Step(n, sha, fp, judge.UNCERTAIN, MEASURED, series=timed,
                        why=f"counting instructions failed: {e}")
        return Step(n, sha, fp, "skip", "does not count", why=str(e))
    p = levels.Sample.processes
    c = judge.classify(p([co]), p([cn]), p([ct]), final=True, exact=True)
    if fp and c.verdict != judge.UNCERTAIN:
        search.known[fp] = (c.verdict, sha)
    return Step(n, sha, fp, c.verdict, MEASURED if timed else COUNTED, series=timed,
                witness=INSTRUCTIONS, counts={"old": co, "new": cn, "this": ct})


def undecided_ending(search: Search, rec: Step) -> Ending:
    a, b = newest_old(search), search.new_ref
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
                  f"commit is in {a[:12]}..{b[:12]} ({len(candidates(search))} commit(s) "
                  "left)" + placement_caveat(search, a, b))


def placement_caveat(search: Search, a: str, b: str) -> str:
    """Honest ranges (docs/placement.md): a range bounded by verdicts measured on
    one link per commit holds the change only if those verdicts were not placement effects.
    Names them and the range that holds the change either way (old or new in their place).
    Verdicts taken by content hash or by counts, and those made over several links, are not
    sensitive."""
    if search.layouts() > 1:
        return ""
    judged = {r.commit: r for r in search.recorded(Step)}
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


def mark(search: Search, verdict: str, sha: str) -> None:
    if verdict == judge.NEW:
        search.new_ref = sha
    elif verdict == judge.OLD:
        search.olds.append(sha)
    else:
        search.skipped.add(sha)


def candidates(search: Search) -> list[str]:
    """The commits that may be the first new one (new_ref included), best to test first:
    `git rev-list --bisect-all`, git bisect's own choice, without its state."""
    out = git(search.s.repo, "rev-list", "--bisect-all", search.new_ref, "--not",
              *search.olds).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def newest_old(search: Search) -> str:
    """Of the commits known to be like old, the one with the most history."""
    depth = {s: int(git(search.s.repo, "rev-list", "--count", s).stdout.strip() or 0)
             for s in search.olds}
    return max(search.olds, key=lambda s: depth[s])
