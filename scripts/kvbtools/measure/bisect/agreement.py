"""When time cannot decide a step: the instruction counts, where they witness the same change
(docs/compare.md, the witness decides when time cannot).

Time and instructions can both be right about different things: a change in time made by
commits that execute the same instructions (cache misses, placement, a data layout), and a change
in instructions elsewhere that time barely sees. So before the counts decide a step time could
not, the commits time has placed in this range are counted too: old and new, and every commit a
step decided by time. The counts are a witness of this change only where they place those
commits where time did: old -> new moves the counts in the direction looked for (beyond
witness.SAME_INSTRUCTIONS), every commit time judged like old sits before the halfway point of
the counts and every one like new at or after it, and each commit time could not place sits,
by its counts, within time's 95% interval of its place. Where they do not, the search says so
(`instructions are not a witness of this change: C is at 78% by time and 30% by instructions`),
counts no step of the range, and measures the commit on by time with the budget it needs (up to
--max-rounds rounds, until the intervals clear the halfway point or are narrow enough for the
halfway rule). Once the counts decided a step, every later step of the range is counted.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Sequence

from kvbtools.core import levels
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.bisect import judge, witness
from kvbtools.measure.bisect.records import (COUNTED, INSTRUCTIONS, MEASURED, TIME, Measured,
                                             Step, StepSeries, ivjson)
from kvbtools.measure.bisect.search import Search, rows
from kvbtools.measure.plan import Budget
from kvbtools.measure.runner import BuildError


def by_counts(search: Search, n: int, uncertain: list[Step], also: Sequence[Step] = ()
              ) -> list[Step]:
    """The steps time could not decide (`uncertain`, measured), decided by the counts where
    they witness this change (`also`: commits of this step decided by time, not recorded yet);
    else as they were, with the note that says why not."""
    if not uncertain or not search.can_count() or search.refuted:
        return [dataclasses.replace(s, note=search.refuted) for s in uncertain]
    why = disagreement(search, uncertain, also)
    if why:
        search.refuted = why
        search.say(why + "; the search goes on by time")
        return [dataclasses.replace(s, note=why) for s in uncertain]
    count_all(search, [s.commit for s in uncertain])
    out = [counted_step(search, n, s.commit, s.fingerprint, s.series) for s in uncertain]
    if any(c.witness == INSTRUCTIONS for c in out):
        # Time could not place a commit between these ends within a budget; the next commit
        # lies between them too: count the rest rather than spend a timed build and budget
        # on each first.
        search.by_counts = True
        search.say(f"step {n}: time could not decide within its budget; the steps left are "
                   "decided by instruction counts")
    return out


def count_all(search: Search, shas: list[str]) -> None:
    """Old, new and `shas` counted at once (Search.counts may count them side by side); a
    failure is each commit's own, said by counted_step when it counts it again."""
    try:
        search.counts([search.old, search.new, *shas])
    except (BuildError, RunError, UsageError):
        pass


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
    search.know(fp, c.verdict, sha, INSTRUCTIONS)
    return Step(n, sha, fp, c.verdict, MEASURED if timed else COUNTED, series=timed,
                witness=INSTRUCTIONS, counts={"old": co, "new": cn, "this": ct})


def _place(c: float, old: float, new: float) -> float:
    """Where a count sits between old's and new's: 0 like old, 1 like new."""
    return math.log(c / old) / math.log(new / old) if min(c, old, new) > 0 and new != old \
        else math.nan


def _pct(x: float) -> str:
    return f"{round(x * 100) + 0}%" if math.isfinite(x) else "?"


def disagreement(search: Search, uncertain: list[Step], also: Sequence[Step] = ()) -> str:
    """'' when the counts place old, new, the commits decided by time (those recorded and
    `also`) and the `uncertain` ones where time did (the module doc); else the sentence that
    says where they do not. Counting fails: that sentence too."""
    decided = [s for s in [*search.judged(), *also] if s.how == MEASURED and
               s.witness == TIME and s.verdict in (judge.OLD, judge.NEW)]
    head = "instructions are not a witness of this change: "
    try:   # old and new first: where they do not differ so, nothing else need be counted
        co, cn = search.counts([search.old, search.new])
        moved = search.count_sign() * math.log(cn / co) if co > 0 and cn > 0 else 0.0
        if moved <= math.log1p(witness.SAME_INSTRUCTIONS):
            return head + (f"old -> new changes them by {cn / co:.3f}x (new/old), not in the "
                           "direction looked for" if co > 0 else "old has no count")
        shas = list(dict.fromkeys(s.commit for s in decided + uncertain))
        counts = dict(zip(shas, search.counts(shas)))
    except (BuildError, RunError, UsageError) as e:
        return f"{head}counting them failed: {e}"
    for s in decided:
        p = _place(counts[s.commit], co, cn)
        if (p >= 0.5) != (s.verdict == judge.NEW):
            return head + (f"{s.commit[:12]} is at {_pct(s.position)} by time and {_pct(p)} "
                           "by instructions")
    for s in uncertain:
        lo, hi = _time_span(s)
        p = _place(counts[s.commit], co, cn)
        if math.isfinite(lo) and not lo <= p <= hi:
            return head + (f"{s.commit[:12]} is at {_pct(s.position)} by time ({_pct(lo)} to "
                           f"{_pct(hi)}) and {_pct(p)} by instructions")
    return ""


def _time_span(s: Step) -> tuple[float, float]:
    """Time's 95% interval of where a measured commit sits (0 like old, 1 like new)."""
    ser = s.series
    if ser is None or not ser.to_old or ser.to_old[1] is None or not ser.change[0] > 0 or \
            ser.change[0] == 1:
        return math.nan, math.nan
    d = math.log(ser.change[0])
    a, b = math.log(ser.to_old[1]) / d, math.log(ser.to_old[2]) / d
    return min(a, b), max(a, b)


def measure_on(search: Search, n: int, timed: Step) -> Step:
    """The commit of a step time could not decide, measured on with old and new by time (its
    rounds after the step's), until it is decided or --max-rounds rounds are spent; the note
    says why the counts did not decide it."""
    ser = timed.series
    assert ser is not None
    left = search.s.budget.max_rounds - ser.rounds
    if left < 1:
        return Step(n, timed.commit, timed.fingerprint, timed.verdict, timed.how,
                    series=ser, note=search.refuted, why="--max-rounds reached")
    old, new, sha = search.old, search.new, timed.commit
    roles = {"old": old, "new": new, "this": sha}
    per_round = (ser.spent.measuring if ser.spent else ser.seconds) / max(1, ser.rounds)
    budget = Budget(search.s.budget.first, left, max(1.0, 2 * per_round * left))
    plan = dataclasses.replace(search.plan(f"step {n} on", [old, new, sha], paid=[sha],
                                           links=ser.measured.links), budget=budget)
    t = time.monotonic()

    def call(m: Measured) -> judge.StepCall:
        v = m.levels()
        return judge.classify(v["old"], v["new"], v["this"], final=True, exact=search.exact)

    search.say(f"step {n}: measuring {sha[:12]} on by time (up to {left} more rounds)")
    m, out = search.series(plan, roles, lambda m: call(m).settled,
                           lambda m: rows(m, [("old", "this"), ("new", "this")]),
                           under_test=sha, prior=ser.measured)
    c = call(m)
    spent = out.spent if ser.spent is None else dataclasses.replace(
        ser.spent + out.spent, building=ser.spent.building, builds=ser.spent.builds,
        budget=ser.spent.budget + out.spent.budget, max_rounds=search.s.budget.max_rounds,
        stopped_by=out.spent.stopped_by)
    st = StepSeries(ser.rounds + out.spent.rounds, out.spent.stopped_by, c.narrow,
                    round(ser.seconds + time.monotonic() - t, 3), m, ivjson(c.to_old),
                    ivjson(c.to_new), ivjson(c.change), c.position, c.unit, c.rule, spent)
    search.know(timed.fingerprint, c.verdict, sha, TIME)
    return Step(n, sha, timed.fingerprint, c.verdict, MEASURED, series=st, note=search.refuted)
