"""The placement spread: how far the links of one build are apart (docs/placement.md).

A binary is one sample of code placement: relinking the same objects with another lld
--shuffle-sections seed moves the hot code, and on some CPUs that alone changes the speed by tens
of percent. No verdict rests on this module: kvb bisect, matrix and versions run their builds in
the same rounds and judge link pairs paired by round with Yuen's trimmed t (core/levels.py). What
every report prints beside its verdicts is the spread computed here: each link's values reduced
to their median (robust to a slow round), in log space, and the variance of those medians within a
build, pooled over the builds (sum(K_i - 1) degrees of freedom).
"""
from __future__ import annotations

import math
import statistics
from typing import Sequence

from kvbtools.core.levels import Sample


def _link_logs(s: Sample) -> list[float]:
    """log of each link's median (the links whose values are all positive)."""
    by: dict[str, list[float]] = {}
    for v, w in zip(s.values, s.where):
        by.setdefault(w.link, []).append(v)
    return [math.log(statistics.median(v)) for v in by.values() if min(v) > 0]


def spread(samples: Sequence[Sample]) -> tuple[float, int]:
    """The placement spread: the standard deviation of per-link medians within a build, pooled
    over `samples` (one a build), as a fraction (0.03 = +-3%), and the most links any build had.
    (nan, K) when no build had two links."""
    ss, df, k = 0.0, 0, 0
    for s in samples:
        u = _link_logs(s)
        k = max(k, len(s.links()))
        if len(u) >= 2:
            m = sum(u) / len(u)
            ss += sum((x - m) ** 2 for x in u)
            df += len(u) - 1
    return (math.exp(math.sqrt(ss / df)) - 1.0 if df else math.nan), k


def spread_text(samples: Sequence[Sample]) -> str:
    """'placement: +-4.1% over 3 links' (what every report prints beside the control's drift)."""
    x, k = spread(samples)
    if k < 2 or not math.isfinite(x):
        return "placement: not sampled (one link per build; --layouts K samples it)"
    return f"placement: \u00b1{x * 100:.1f}% over {k} links"
