"""Adaptive rounds: measure in interleaved rounds until every answer is clear or a budget is spent.

matrix and versions (`--until-resolved [--max-rounds N] [--max-time DURATION]`, parsed into a
Budget by commands/arguments.py) and every series of bisect add rounds here. A round runs every
side once (the control included), so drift lands on all sides alike; after each round the
caller's rule says whether it is settled.

The interval is the Hodges-Lehmann interval of the ratio, inverted from the Mann-Whitney U test:
on log values, the differences log(other_j) - log(base_i) of every pair, sorted; the 95% interval
runs from the C-th smallest to the C-th largest, C from the exact distribution of U (the normal
approximation past 25 values a side). It is the interval of the very test whose p-value the
tables print, so the two never disagree; it is distribution-free (benchmark noise is skewed),
deterministic (no resampling), and valid at the small n where a bootstrap of medians is not (the
median of 5 resampled values takes a handful of values).

A matrix row is resolved when its interval is narrower than the threshold (hi / lo - 1 <
threshold). The stopping rule looks at the width only, never at where the interval lies or at a
p-value, so looking after every round does not make differences appear: the width depends on the
noise, not on the sign or size of the difference (docs/compare.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from kvbtools.core import stats

DEFAULT_MAX_ROUNDS = 20

# The interval lives in core/stats.py (the verdicts use it too); these names stay for callers.
LEVEL = stats.LEVEL
EXACT_MAX_N = stats.INTERVAL_EXACT_MAX_N
Interval = stats.Interval
cut = stats.cut
log_shifts = stats.log_shifts
ratio_interval = stats.ratio_interval


# ---- a row of a table ------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    word: str          # faster/slower (better/worse words), "same", or "unresolved at n=K"
    interval: Interval
    resolved: bool


def decide(base: Sequence[float], other: Sequence[float], judgement: stats.Judgement
           ) -> Decision:
    """Resolved when the interval is narrower than the judgement's threshold; then the word is
    the table's own verdict (U test at alpha and a change of at least the threshold), 'same'
    for no significant change."""
    iv = ratio_interval(base, other)
    if iv.width >= judgement.threshold:
        return Decision(f"unresolved at n={iv.n}", iv, False)
    v = stats.verdict(base, other, judgement)
    if not v.decided:  # narrow, but astride the threshold
        return Decision(f"unresolved at n={iv.n}", iv, False)
    return Decision(v.word if v.better is not None else "same", iv, True)


# ---- the budget and the loop -----------------------------------------------------------------

@dataclass(frozen=True)
class Budget:
    first: int                 # rounds always run
    max_rounds: int            # rounds at most (>= first)
    max_seconds: float | None


@dataclass
class Outcome:
    rounds: int
    settled: bool
    seconds: float
    why: str           # "settled", "max rounds", "max time"


def run(budget: Budget, one_round: Callable[[int], None], settled: Callable[[int], bool],
        clock: Callable[[], float] = time.monotonic) -> Outcome:
    """Runs rounds 1..budget.first, then one more while `settled(rounds)` is false and the
    budget allows: no round past max_rounds, none started when the longest round so far would
    end after max_seconds."""
    t0 = clock()
    longest = 0.0
    r = 0
    while True:
        if r >= budget.first:
            if settled(r):
                return Outcome(r, True, clock() - t0, "settled")
            if r >= budget.max_rounds:
                return Outcome(r, False, clock() - t0, "max rounds")
            if budget.max_seconds is not None and clock() - t0 + longest > budget.max_seconds:
                return Outcome(r, False, clock() - t0, "max time")
        start = clock()
        r += 1
        one_round(r)
        longest = max(longest, clock() - start)
