"""Change points in a series of numbers: E-divisive means with Hunter's changes (standard library).

E-divisive means (Matteson & James, "A Nonparametric Approach for Multiple Change Point Analysis
of Multivariate Data", JASA 2014), univariate, with exponent alpha = 1: the divergence between
the points before a split tau and the points after it is

    E(tau) = 2/(m n) sum|x_i - y_j| - 1/C(m,2) sum|x_i - x_k| - 1/C(n,2) sum|y_j - y_k|

(m points before, n after) and the candidate is the tau that maximises Q(tau) = m n/(m+n) E(tau).
Segments are split one candidate at a time (bisection), each new segment searched again.

Hunter's changes (Fleming et al., "Hunter: Using Change Point Detection to Hunt for Performance
Regressions", arXiv 2301.03034), as Apache Otava keeps them:
  - significance by a Student t-test between the two sides of a candidate (p < max_pvalue)
    instead of E-divisive's permutation test: deterministic, and cheap;
  - windowed: the search runs on windows of `window` points overlapping by half, so a long
    history does not hide a small recent change behind an old big one;
  - weak points re-tested: once all windows are done, each change point is tested again against
    its neighbours (the points from the previous change to the next), and the weakest is dropped
    while any has p >= max_pvalue (or a change smaller than min_magnitude); so a point that
    only looked significant inside one window does not survive.

Also here: a drift test (Student's t distribution: core/tdist.py): a straight line
fitted to the whole series, preferred to the step model when its Bayesian information
criterion is lower and its slope is significant, so a slow 1% per point slide is reported as
a drift instead of a staircase of steps.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from kvbtools.core.tdist import t_quantile, t_sf2


@dataclass(frozen=True)
class TTest:
    t: float
    df: int
    p: float
    mean_a: float
    mean_b: float
    se: float         # standard error of mean_b - mean_a (pooled variance)


def student_t(a: Sequence[float], b: Sequence[float]) -> TTest:
    """Two-sample Student t-test with pooled variance (as Hunter uses), two-sided."""
    m, n = len(a), len(b)
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    df = m + n - 2
    if m < 1 or n < 1 or df < 1:
        return TTest(float("nan"), max(df, 0), 1.0, ma, mb, float("nan"))
    ss = sum((x - ma) ** 2 for x in a) + sum((x - mb) ** 2 for x in b)
    se = math.sqrt(ss / df * (1.0 / m + 1.0 / n))
    if se == 0.0:
        t = 0.0 if ma == mb else math.copysign(math.inf, mb - ma)
    else:
        t = (mb - ma) / se
    return TTest(t, df, t_sf2(t, df), ma, mb, se)


# ---- E-divisive means ---------------------------------------------------------------------------

def best_split(xs: Sequence[float], min_size: int) -> tuple[int, float]:
    """The tau in [min_size, len - min_size] maximising Q(tau), and Q; (-1, 0) when none."""
    n = len(xs)
    if n < 2 * min_size:
        return -1, 0.0
    # left[t]: sum of |xi - xk| over i < k < t; right[t]: over t <= i < k; O(n^2) in all.
    left = [0.0] * (n + 1)
    for t in range(1, n + 1):
        left[t] = left[t - 1] + sum(abs(xs[i] - xs[t - 1]) for i in range(t - 1))
    right = [0.0] * (n + 1)
    for t in range(n - 1, -1, -1):
        right[t] = right[t + 1] + sum(abs(xs[t] - xs[k]) for k in range(t + 1, n))
    total = left[n]
    best, best_q = -1, 0.0
    for t in range(min_size, n - min_size + 1):
        m, k = t, n - t
        cross = total - left[t] - right[t]
        within_x = left[t] / (m * (m - 1) / 2) if m > 1 else 0.0
        within_y = right[t] / (k * (k - 1) / 2) if k > 1 else 0.0
        e = 2.0 * cross / (m * k) - within_x - within_y
        q = m * k / (m + k) * e
        if q > best_q:
            best, best_q = t, q
    return best, best_q


def e_divisive(xs: Sequence[float], max_pvalue: float, min_size: int) -> list[int]:
    """Change points of xs (the index of the first point after each change), by bisection: the
    best split of each segment is kept while the t-test between its sides rejects."""
    found: list[int] = []
    segments = [(0, len(xs))]
    while segments:
        start, end = segments.pop()
        tau, _ = best_split(xs[start:end], min_size)
        if tau < 0:
            continue
        test = student_t(xs[start:start + tau], xs[start + tau:end])
        if test.p < max_pvalue:
            found.append(start + tau)
            segments += [(start, start + tau), (start + tau, end)]
    return sorted(found)


@dataclass(frozen=True)
class Change:
    index: int            # first point after the change
    test: TTest           # before = the points since the previous change, after = until the next
    n_before: int
    n_after: int

    @property
    def ratio(self) -> float:
        return self.test.mean_b / self.test.mean_a if self.test.mean_a else float("nan")

    def relative_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The interval of (mean after - mean before), relative to the mean before."""
        d = self.test.mean_b - self.test.mean_a
        if not self.test.mean_a or not math.isfinite(self.test.se):
            return float("nan"), float("nan")
        h = t_quantile(level, self.test.df) * self.test.se
        return (d - h) / abs(self.test.mean_a), (d + h) / abs(self.test.mean_a)


def _tests(xs: Sequence[float], points: list[int]) -> list[Change]:
    bounds = [0, *points, len(xs)]
    out = []
    for i, cp in enumerate(points):
        a, b = xs[bounds[i]:cp], xs[cp:bounds[i + 2]]
        out.append(Change(cp, student_t(a, b), len(a), len(b)))
    return out


def hunter(xs: Sequence[float], *, window: int = 50, max_pvalue: float = 0.001,
           min_magnitude: float = 0.0, min_size: int = 3) -> list[Change]:
    """Windowed E-divisive with t-tests, weak change points re-tested and dropped."""
    xs = list(xs)
    window = max(window, 2 * min_size)
    points: set[int] = set()
    start = 0
    while True:
        end = min(start + window, len(xs))
        points.update(start + p for p in e_divisive(xs[start:end], max_pvalue, min_size))
        if end >= len(xs):
            break
        start += max(window // 2, 1)
    cps = sorted(points)
    while cps:
        changes = _tests(xs, cps)
        # Neighbours closer than min_size (one change found by two windows) and changes that
        # are not significant against their neighbours: drop the weakest, test again.
        def weakness(c: Change) -> tuple[int, float]:
            short = min(c.n_before, c.n_after) < min_size
            small = abs(c.ratio - 1.0) < min_magnitude if math.isfinite(c.ratio) else False
            return (1 if short or small or c.test.p >= max_pvalue else 0, c.test.p)
        weakest = max(changes, key=weakness)
        if weakness(weakest)[0] == 0:
            return changes
        cps.remove(weakest.index)
    return []


# ---- drift ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Drift:
    slope: float          # per point, in the series' unit
    start_value: float    # the fitted line at the first point
    end_value: float      # ... and at the last
    p: float              # the slope's two-sided t-test
    slope_interval: tuple[float, float]

    @property
    def relative_per_point(self) -> float:
        return self.slope / abs(self.start_value) if self.start_value else float("nan")


def _bic(rss: float, n: int, k: int) -> float:
    return n * math.log(max(rss, 1e-300) / n) + k * math.log(n)


def _line(xs: Sequence[float]) -> tuple[float, float, float, float]:
    """Least-squares line over the point indices: intercept, slope, slope's standard error, RSS."""
    n = len(xs)
    mt, mx = (n - 1) / 2.0, statistics.fmean(xs)
    sxx = sum((t - mt) ** 2 for t in range(n))
    slope = sum((t - mt) * (x - mx) for t, x in enumerate(xs)) / sxx
    icpt = mx - slope * mt
    rss = sum((x - icpt - slope * t) ** 2 for t, x in enumerate(xs))
    return icpt, slope, math.sqrt(rss / (n - 2) / sxx), rss


def _steps_rss(xs: Sequence[float], changes: list[Change]) -> float:
    bounds = [0, *[c.index for c in changes], len(xs)]
    rss = 0.0
    for a, b in zip(bounds, bounds[1:]):
        m = statistics.fmean(xs[a:b])
        rss += sum((x - m) ** 2 for x in xs[a:b])
    return rss


def drift(xs: Sequence[float], changes: list[Change], max_pvalue: float,
          min_points: int = 8) -> Drift | None:
    """A straight line over the whole series, when it explains the series better than steps.

    Reported when the line's slope is significant (p < max_pvalue) and either no change was
    found, or the changes are a staircase: two or more, all in one direction, and the line has
    the lower Bayesian information criterion (a line has 2 parameters; c steps have 2c + 1: c
    positions and c + 1 levels). A single step is never read as a drift: one step and a line
    are too alike over a few dozen points to tell apart, and a step is what bisect can find."""
    n = len(xs)
    if n < min_points:
        return None
    icpt, slope, se, rss = _line(xs)
    p = t_sf2(slope / se, n - 2) if se > 0 else (0.0 if slope else 1.0)
    if p >= max_pvalue:
        return None
    if changes:
        one_way = all(c.ratio > 1 for c in changes) or all(c.ratio < 1 for c in changes)
        if len(changes) < 2 or not one_way or \
                _bic(rss, n, 2) >= _bic(_steps_rss(xs, changes), n, 2 * len(changes) + 1):
            return None
    h = t_quantile(0.95, n - 2) * se
    return Drift(slope, icpt, icpt + slope * (n - 1), p, (slope - h, slope + h))
