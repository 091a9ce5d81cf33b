"""Statistics for comparing two sets of repeated measurements (standard library only).

- Mann-Whitney U, two-sided: the exact distribution when there are no ties and the samples are
  small, else the normal approximation with tie and continuity corrections (as scipy's
  `mannwhitneyu(method="auto")` does: exact for n <= 8 without ties).
- A bootstrap interval of the ratio of medians, seeded so the same data give the same interval.
- The Hodges-Lehmann interval of the ratio, inverted from the U test.
- The geometric mean of ratios, and the three-valued Verdict every table prints (decided in one
  place, core/levels.judge): changed, no change, or undecided with its reason.
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Protocol, Sequence

# Exact p-values when both samples have at most this many values and there are no ties.
EXACT_MAX_N = 8


@dataclass(frozen=True)
class UTest:
    u: float          # U of the first sample: pairs (a, b) with a > b, ties counting 1/2
    p: float          # two-sided p-value
    method: str       # "exact" or "normal"


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties getting the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return out


@lru_cache(maxsize=None)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of orderings of m x's and n y's giving each U = 0..m*n (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    # The largest value is an x (it beats all n y's: U - n for the rest) or a y (adds nothing).
    with_x = _u_counts(m - 1, n)
    with_y = _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(with_x):
        out[u + n] += c
    for u, c in enumerate(with_y):
        out[u] += c
    return tuple(out)


def mann_whitney_u(a: Sequence[float], b: Sequence[float], *, exact: bool | None = None) -> UTest:
    """Two-sided Mann-Whitney U test of `a` against `b` (each needs at least one value).
    exact=None chooses (exact without ties up to EXACT_MAX_N values per side); True forces the
    exact distribution (ties then make it approximate); False forces the normal one."""
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        raise ValueError("both samples need at least one value")
    r = ranks(list(a) + list(b))
    u = sum(r[:m]) - m * (m + 1) / 2.0
    tied = len(set(a) | set(b)) < m + n
    if exact or (exact is None and not tied and max(m, n) <= EXACT_MAX_N):
        counts = _u_counts(m, n)
        total = sum(counts)
        k = int(round(min(u, m * n - u)))
        p = min(1.0, 2.0 * sum(counts[: k + 1]) / total)
        return UTest(u, p, "exact")
    mu = m * n / 2.0
    # Tie correction: sum over tie groups of (t^3 - t).
    groups: dict[float, int] = {}
    for v in list(a) + list(b):
        groups[v] = groups.get(v, 0) + 1
    t = sum(c ** 3 - c for c in groups.values())
    big_n = m + n
    var = m * n / 12.0 * ((big_n + 1) - t / (big_n * (big_n - 1)))
    if var <= 0:
        return UTest(u, 1.0, "normal")
    z = (abs(u - mu) - 0.5) / math.sqrt(var)
    p = min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))
    return UTest(u, p, "normal")


def min_p(m: int, n: int) -> float:
    """The smallest two-sided p-value the exact test can give for sample sizes m and n."""
    if m == 0 or n == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(m + n, m))


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of the finite values: 0 when one of them is 0 (a ratio of 0 is not left
    out, which would make (0, 1, 0) read 1.00); NaN when there are none, or one is negative."""
    vals = [v for v in values if math.isfinite(v)]
    if not vals or any(v < 0 for v in vals):
        return float("nan")
    if any(v == 0 for v in vals):
        return 0.0
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def bootstrap_ratio_ci(a: Sequence[float], b: Sequence[float], *, seed: int = 1,
                       resamples: int = 2000, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of median(b) / median(a). Deterministic for a seed."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        ma = statistics.median(rng.choices(a, k=len(a)))
        mb = statistics.median(rng.choices(b, k=len(b)))
        if ma > 0:
            ratios.append(mb / ma)
    if not ratios:
        return float("nan"), float("nan")
    ratios.sort()
    lo = ratios[int(math.floor((1 - level) / 2 * (len(ratios) - 1)))]
    hi = ratios[int(math.ceil((1 + level) / 2 * (len(ratios) - 1)))]
    return lo, hi


# ---- the interval of the ratio ------------------------------------------------------------------
# The Hodges-Lehmann interval, inverted from the Mann-Whitney U test: on log values, the
# differences log(other_j) - log(base_i) of every pair, sorted; the 95% interval runs from the
# C-th smallest to the C-th largest, C from the exact distribution of U (the normal approximation
# past 25 values a side). It is the interval of the very test whose p-value the tables print, so
# the two never disagree; it is distribution-free (benchmark noise is skewed), deterministic (no
# resampling), and valid at the small n where a bootstrap of medians is not. core/levels'
# unpaired units (kvb compare of files) use it.

LEVEL = 0.95
# Exact distribution of U up to this many values a side; the normal approximation beyond.
INTERVAL_EXACT_MAX_N = 25


def cut(m: int, n: int, level: float = LEVEL) -> int:
    """How many pairwise differences the interval leaves out at each end: the largest C with
    P(U <= C - 1) <= (1 - level) / 2 under 'same distribution'. 0: no finite interval."""
    tail = (1.0 - level) / 2.0
    if max(m, n) <= INTERVAL_EXACT_MAX_N:
        counts = _u_counts(m, n)  # the U test's own exact distribution (cached)
        total = sum(counts)
        acc, c = 0, 0
        for u, k in enumerate(counts):
            acc += k
            if acc / total > tail:
                break
            c = u + 1
        return c
    z = NormalDist().inv_cdf(1.0 - tail)
    return max(0, int(math.floor(m * n / 2.0 - z * math.sqrt(m * n * (m + n + 1) / 12.0) + 0.5)))


@dataclass(frozen=True)
class Interval:
    """other / base: the Hodges-Lehmann estimate and its interval (ratios, not logs)."""
    estimate: float
    lo: float
    hi: float
    n: int            # values per side (the smaller side)

    @property
    def finite(self) -> bool:
        return self.lo > 0 and math.isfinite(self.hi)

    @property
    def width(self) -> float:
        """hi / lo - 1: 0.04 is an interval 4% wide."""
        return self.hi / self.lo - 1.0 if self.finite else math.inf

    def text(self) -> str:
        return f"[{self.lo:.3f}, {self.hi:.3f}]" if self.finite else "[unbounded]"


def shift_interval(base: Sequence[float], other: Sequence[float],
                   level: float = LEVEL) -> tuple[float, float, float]:
    """The Hodges-Lehmann shift other - base (the median of every pair's difference) and its
    `level` interval, the C-th smallest to the C-th largest difference; (-inf, inf) when C is 0
    (too few values for a finite interval). Logs of the values give the log of a ratio."""
    d = sorted(o - b for o in other for b in base)
    c = cut(len(base), len(other), level)
    est = statistics.median(d)
    if c == 0:
        return est, -math.inf, math.inf
    return est, d[c - 1], d[len(d) - c]


# Verdict words. "worse" wording depends on the metric: slower for time and throughput, larger for
# sizes; see Metric in metrics.py. A verdict is one of three: changed (the better or worse word),
# NO_CHANGE, or UNDECIDED with the reason in its note.
NO_CHANGE = "no change"
UNDECIDED = "undecided"


# What a verdict's ratio is (Verdict.estimator; docs/compare.md, "The ratio"): the quotient of
# the sides' medians (one process a side, exact or constant values), the Hodges-Lehmann estimate
# over unpaired units (the U test's own), or the trimmed mean over units paired by round (Yuen's).
MEDIANS = "medians"
HODGES_LEHMANN = "Hodges-Lehmann"
TRIMMED_MEAN = "trimmed mean"


@dataclass(frozen=True)
class Verdict:
    ratio: float        # other / base: the estimate named by `estimator`
    better: bool | None  # None: no change or undecided
    word: str           # faster / slower / larger / smaller / NO_CHANGE / UNDECIDED
    test: UTest | None
    note: str = ""      # why undecided; or a remark on a decided one
    interval: Interval | None = None  # of other / base at 1 - alpha (None: no test)
    unit: str = ""      # what it rested on (core/levels.Units.text): "8 link pairs paired by round"
    p_adjusted: float | None = None   # the test's p adjusted over the comparison's family
    estimator: str = MEDIANS          # what `ratio` is: MEDIANS, HODGES_LEHMANN, TRIMMED_MEAN

    @property
    def regression(self) -> bool:
        return self.better is False

    @property
    def decided(self) -> bool:
        return self.word != UNDECIDED


@dataclass(frozen=True)
class Judgement:
    """How a comparison judges a ratio: the smallest change that counts (`threshold`, a fraction:
    0.05 = 5%), the significance level (`alpha`), the better direction and the verdict words.
    One value travels where these five travelled as loose keywords (compare, matrix, versions,
    bisect, trend); `for_metric` fills the direction and words from a metric."""
    threshold: float
    alpha: float
    higher_is_better: bool = True
    better_word: str = "faster"
    worse_word: str = "slower"

    def for_metric(self, metric: "HasDirection") -> "Judgement":
        return Judgement(self.threshold, self.alpha, metric.higher_is_better,
                         metric.better_word, metric.worse_word)

    def word(self, improved: bool) -> str:
        return self.better_word if improved else self.worse_word


class HasDirection(Protocol):
    """What Judgement.for_metric reads of a metric (core/metrics.Metric has it)."""
    higher_is_better: bool
    better_word: str
    worse_word: str


def runs_needed(alpha: float) -> int:
    """The fewest values a side with which the U test can reach p < alpha."""
    n = 2
    while min_p(n, n) >= alpha and n < 1000:
        n += 1
    return n


def constant(base: Sequence[float], other: Sequence[float]) -> bool:
    """Every value of each side is the same (a count, a size, instructions): no noise."""
    return min(base) == max(base) and min(other) == max(other)


def within(iv: Interval, threshold: float) -> bool:
    """The interval lies inside [1 - threshold, 1 + threshold]: any change is smaller than it."""
    return iv.lo > 0 and math.isfinite(iv.hi) and iv.lo >= 1 - threshold - 1e-12 \
        and iv.hi <= 1 + threshold + 1e-12


def pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation (sample standard deviation / mean); 0 for fewer than 2 values."""
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0
