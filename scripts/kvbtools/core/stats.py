"""Statistics for comparing two sets of repeated measurements (standard library only).

- Mann-Whitney U, two-sided: the exact distribution when there are no ties and the samples are
  small, else the normal approximation with tie and continuity corrections (as scipy's
  `mannwhitneyu(method="auto")` does: exact for n <= 8 without ties).
- A bootstrap interval of the ratio of medians, seeded so the same data give the same interval.
- The geometric mean of ratios, and the verdict rule every table uses (`verdict`).
"""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

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


# Verdict words. "worse" wording depends on the metric: slower for time and throughput, larger for
# sizes; see Metric in samples.py.
NO_CHANGE = "no significant change"
NOISE_UNKNOWN = "n=1: noise unknown"


@dataclass(frozen=True)
class Verdict:
    ratio: float        # median(other) / median(base)
    better: bool | None  # None: no significant change or noise unknown
    word: str           # faster / slower / larger / smaller / NO_CHANGE / NOISE_UNKNOWN
    test: UTest | None
    note: str = ""      # e.g. why a difference was not called significant

    @property
    def regression(self) -> bool:
        return self.better is False


def verdict(base: Sequence[float], other: Sequence[float], *, higher_is_better: bool,
            threshold: float, alpha: float, better_word: str = "faster",
            worse_word: str = "slower") -> Verdict:
    """faster/slower only when the U test rejects at `alpha` AND the change of the medians is at
    least `threshold` (a fraction: 0.05 = 5%); otherwise no significant change. With a single
    value on either side there is no noise estimate, so no verdict."""
    mb, mo = statistics.median(base), statistics.median(other)
    ratio = mo / mb if mb else (1.0 if mo == 0 else float("nan"))
    if len(base) < 2 or len(other) < 2:
        return Verdict(ratio, None, NOISE_UNKNOWN, None)
    test = mann_whitney_u(other, base)
    if not math.isfinite(ratio):
        return Verdict(ratio, None, NO_CHANGE, test, "base median is 0")
    improved = ratio > 1 if higher_is_better else ratio < 1
    change = abs(ratio - 1.0)
    if test.p >= alpha:
        note = ""
        if min_p(len(base), len(other)) >= alpha:
            note = (f"n={len(base)}+{len(other)} cannot reach p<{alpha:g}; "
                    "use more repeats")
        return Verdict(ratio, None, NO_CHANGE, test, note)
    if change < threshold:
        return Verdict(ratio, None, NO_CHANGE, test, f"p<{alpha:g} but under the threshold")
    return Verdict(ratio, improved, better_word if improved else worse_word, test)


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation (sample standard deviation / mean); 0 for fewer than 2 values."""
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0
