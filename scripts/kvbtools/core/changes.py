"""Changes in a series: E-divisive means with Hunter's t-test (core/edivisive.py) and drift, with
the parameters of kvb trend (docs/history.md). kvb trend reports them; kvb history --html draws
them."""
from __future__ import annotations

from dataclasses import dataclass, field

from kvbtools.core import edivisive
from kvbtools.core.series import Series

@dataclass
class Params:
    window: int = 50
    max_pvalue: float = 0.001
    min_magnitude: float = 0.0
    min_size: int = 3

@dataclass
class Analysis:
    series: Series
    changes: list[edivisive.Change] = field(default_factory=list)
    drift: edivisive.Drift | None = None

def analyse(s: Series, params: Params) -> Analysis:
    xs = s.values()
    changes = edivisive.hunter(xs, window=params.window, max_pvalue=params.max_pvalue,
                               min_magnitude=params.min_magnitude, min_size=params.min_size)
    d = edivisive.drift(xs, changes, params.max_pvalue)
    if d is not None and d.start_value and \
            abs(d.end_value / d.start_value - 1.0) < params.min_magnitude:
        return Analysis(s, [], None)  # a slope, but less than --min-magnitude end to end
    return Analysis(s, [] if d else changes, d)
