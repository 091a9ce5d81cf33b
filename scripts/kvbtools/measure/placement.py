"""Statistics that know placements exist: a series' samples are (placement, round).

A binary is one sample of code placement (docs/placement.md): relinking the same objects with
another lld --shuffle-sections seed moves the hot code, and on some CPUs that alone changes the
speed by tens of percent. Rounds of one link cannot see that: they measure the noise of one
placement, and an interval made from them says "changed" when only the linker moved the code.

So placement is a random effect. The unit of every test here is a placement: each link's values
are reduced to their median (robust to a slow round), in log space, and the per-placement
medians of two builds are compared with a t interval whose variance is pooled over the builds of
the series (old, new and the commit under test are each linked K times; their placement spreads
estimate one spread, with sum(K_i - 1) degrees of freedom). Why this and not the alternatives:

- the Hodges-Lehmann/U interval of kvbtools.rounds on the units needs 4 placements a side before
  it is finite (3 vs 3 cannot reach 95%), and 4+ relinks per commit is the cost we avoid;
- a hierarchical bootstrap (resample placements, then rounds) is invalid at K = 3: it sees at
  most 10 distinct resamples of 3 placements, and understates the spread;
- pooling across the builds gives 6 degrees of freedom at K = 3 for a bisect step, so a real
  25% change resolves with 3 links while a placement effect of +-20% does not look like one.

With a single placement a side (--layouts 1) everything falls back to the rounds as units and to
kvbtools.rounds' interval, exactly as before placements existed.

No command's verdict uses the pooled t any longer: kvb bisect, matrix and versions run their
builds in the same rounds and judge paired rounds, or link pairs with Yuen's trimmed t
(core/levels.py), which a rare slow link does not throw (docs/placement.md). What they print from
here is the placement spread (`spread_text`), beside their verdicts.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence, Union

from kvbtools.core import stats
from kvbtools.measure import rounds
from kvbtools.measure.rounds import Interval


@dataclass(frozen=True)
class Sample:
    """One build's values, each with the layout seed of the link that measured it."""
    values: tuple[float, ...]
    seeds: tuple[int, ...]

    def by_seed(self) -> dict[int, list[float]]:
        out: dict[int, list[float]] = {}
        for v, s in zip(self.values, self.seeds):
            out.setdefault(s, []).append(v)
        return out

    @property
    def placements(self) -> int:
        return len(set(self.seeds))

    def units(self) -> list[float]:
        """log of each placement's median (the placements with positive values)."""
        return [math.log(statistics.median(v)) for v in self.by_seed().values()
                if min(v) > 0]


Values = Union[Sample, Sequence[float]]


def sample(values: Values, seeds: Sequence[int] | None = None) -> Sample:
    """A Sample from a Sample, or from plain values (one placement unless `seeds` says)."""
    if isinstance(values, Sample):
        return values
    vals = tuple(float(v) for v in values)
    return Sample(vals, tuple(seeds) if seeds is not None else (0,) * len(vals))


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail P(|T| >= |t|) of Student's t with df degrees of freedom."""
    if t == 0.0 or not math.isfinite(t):
        return 1.0 if t == 0.0 else 0.0
    x = df / (df + t * t)
    a, b = df / 2.0, 0.5
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return min(1.0, front * _betacf(a, b, x) / a)
    return min(1.0, 1.0 - front * _betacf(b, a, 1.0 - x) / b)


def t_quantile(level: float, df: float) -> float:
    """The t with P(|T| <= t) = level (bisection on t_sf2)."""
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > 1.0 - level:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_sf2(mid, df) > 1.0 - level else (lo, mid)
    return (lo + hi) / 2.0


def _own_variance(s: Sample) -> tuple[float, int]:
    u = s.units()
    if len(u) < 2:
        return 0.0, 0
    m = sum(u) / len(u)
    return sum((x - m) ** 2 for x in u) / (len(u) - 1), len(u) - 1


def pooled_variance(samples: Sequence[Sample]) -> tuple[float, int]:
    """The variance of per-placement log medians within a build, pooled over `samples`, and
    its degrees of freedom. (0, 0) when no build has two placements."""
    ss, df = 0.0, 0
    for s in samples:
        u = s.units()
        if len(u) >= 2:
            m = sum(u) / len(u)
            ss += sum((x - m) ** 2 for x in u)
            df += len(u) - 1
    return (ss / df, df) if df else (0.0, 0)


def placement_aware(*samples: Sample) -> bool:
    """True when every build was measured on at least two placements."""
    return all(s.placements >= 2 for s in samples)


@dataclass(frozen=True)
class Comparison:
    interval: Interval     # other / base: estimate and its interval
    p: float               # two-sided
    df: int                # 0: rounds as units (one placement)


def compare(base: Values, other: Values, pool: Sequence[Values] = (),
            level: float = rounds.LEVEL) -> Comparison:
    """other / base with placements as the units (see the module doc); the variance is pooled
    over base, other and `pool` (the other builds of the same series). With one placement a side:
    kvbtools.rounds' Hodges-Lehmann interval and the U test on the rounds."""
    b, o = sample(base), sample(other)
    if not placement_aware(b, o):
        iv = rounds.ratio_interval(list(b.values), list(o.values), level)
        p = stats.mann_whitney_u(list(o.values), list(b.values)).p if b.values and o.values \
            else 1.0
        return Comparison(iv, p, 0)
    ub, uo = b.units(), o.units()
    n = min(len(ub), len(uo))
    if len(ub) < 2 or len(uo) < 2:
        return Comparison(Interval(math.nan, 0.0, math.inf, n), 1.0, 0)
    var, df = pooled_variance([b, o, *(sample(x) for x in pool)])
    d = sum(uo) / len(uo) - sum(ub) / len(ub)
    se, df = _standard_error(var, df, b, o)
    if se == 0.0:
        return Comparison(Interval(math.exp(d), math.exp(d), math.exp(d), n), 0.0 if d else 1.0,
                          df)
    q = t_quantile(level, df)
    p = t_sf2(d / se, df)
    return Comparison(Interval(math.exp(d), math.exp(d - q * se), math.exp(d + q * se), n), p, df)


def _standard_error(var: float, df: int, b: Sample, o: Sample) -> tuple[float, int]:
    """The standard error of the difference of mean units, and its degrees of freedom. Each
    build's variance is the pooled one unless its own is larger: a commit that moves code can
    be more sensitive to placement than the builds it is pooled with, and pooling would then
    understate its spread. Then the Welch-Satterthwaite degrees of freedom of the two builds'
    own variances are used instead of the pooled ones."""
    parts = []
    welch = False
    for s in (b, o):
        own, own_df = _own_variance(s)
        n = len(s.units())
        welch = welch or own > var * (1 + 1e-9)
        parts.append((max(own, var) / n, own_df))
    se2 = sum(v for v, _ in parts)
    if welch:
        denom = sum(v * v / k for v, k in parts if k > 0)
        df = max(1, int(se2 * se2 / denom)) if denom > 0 else df
    return math.sqrt(se2), df


def ratio_interval(base: Values, other: Values, pool: Sequence[Values] = ()) -> Interval:
    return compare(base, other, pool).interval


def spread(samples: Sequence[Values]) -> tuple[float, int]:
    """The placement spread: the standard deviation of per-placement medians within a build,
    pooled over `samples`, as a fraction (0.03 = +-3%), and the most placements any build had.
    (nan, K) when no build had two placements."""
    ss = [sample(s) for s in samples]
    k = max((s.placements for s in ss), default=0)
    var, df = pooled_variance(ss)
    return (math.exp(math.sqrt(var)) - 1.0 if df else math.nan), k


def spread_text(samples: Sequence[Values]) -> str:
    """'placement: +-4.1% over 3 links' (what every report prints beside the control's drift)."""
    x, k = spread(samples)
    if k < 2 or not math.isfinite(x):
        return "placement: not sampled (one link per build; --layouts K samples it)"
    return f"placement: \u00b1{x * 100:.1f}% over {k} links"


def seed_of_round(r: int, layouts: int) -> int:
    """The layout seed every build runs in round r (1-based): rounds rotate through the seeds,
    so drift and placement never line up with one build."""
    return (r - 1) % max(1, layouts)
