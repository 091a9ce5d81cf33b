"""Changes in a series: E-divisive means with Hunter's t-test (core/edivisive.py) and drift, with
the parameters of kvb trend (docs/history.md). kvb trend reports them; kvb history --html draws
them."""
from __future__ import annotations

from dataclasses import dataclass, field

from kvbtools.core import edivisive, stats
from kvbtools.core.series import Series

@dataclass(frozen=True)
class Params:
    window: int = 50
    # A change counts when its t-test's p is below the judgement's alpha (--pvalue) and it moves
    # the mean by at least its threshold (--min-magnitude); direction and words: each metric's.
    judgement: stats.Judgement = stats.Judgement(threshold=0.0, alpha=0.001)
    min_size: int = 3

@dataclass
class Analysis:
    series: Series
    changes: list[edivisive.Change] = field(default_factory=list)
    drift: edivisive.Drift | None = None

def analyse(s: Series, params: Params) -> Analysis:
    xs = s.values()
    j = params.judgement
    changes = edivisive.hunter(xs, window=params.window, max_pvalue=j.alpha,
                               min_magnitude=j.threshold, min_size=params.min_size)
    d = edivisive.drift(xs, changes, j.alpha)
    if d is not None and d.start_value and abs(d.end_value / d.start_value - 1.0) < j.threshold:
        return Analysis(s, [], None)  # a slope, but less than --min-magnitude end to end
    return Analysis(s, [] if d else changes, d)
