"""Rounds: the budget of --repeats, --max-rounds and --max-time, and the Hodges-Lehmann interval.

A Budget is what commands/arguments.py parses those three flags into; kvb matrix --presets, kvb
versions and kvb bisect spend it in measure/round_loop.py's loop (every side once a round, the
links and rounds added where the variance is), judged on core/levels' unit.

The interval of the ratio that kvb compare's unpaired units use is the Hodges-Lehmann interval,
inverted from the Mann-Whitney U test: on log values, the differences log(other_j) - log(base_i)
of every pair, sorted; the 95% interval runs from the C-th smallest to the C-th largest, C from
the exact distribution of U (the normal approximation past 25 values a side). It is the interval
of the very test whose p-value the tables print, so the two never disagree; it is
distribution-free (benchmark noise is skewed), deterministic (no resampling), and valid at the
small n where a bootstrap of medians is not (the median of 5 resampled values takes a handful of
values). It lives in core/stats.py; these names stay for callers.
"""
from __future__ import annotations

from dataclasses import dataclass

from kvbtools.core import stats

LEVEL = stats.LEVEL
EXACT_MAX_N = stats.INTERVAL_EXACT_MAX_N
Interval = stats.Interval
cut = stats.cut
ratio_interval = stats.ratio_interval


@dataclass(frozen=True)
class Budget:
    first: int                 # rounds always run (--repeats)
    max_rounds: int            # rounds at most (>= first)
    max_seconds: float | None  # --max-time; None: as the command's default says
