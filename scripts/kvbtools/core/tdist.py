"""Student's t distribution (standard library only): its two-sided tail and quantile, from the
regularised incomplete beta function (a continued fraction, modified Lentz). The one copy:
core/levels (Yuen's trimmed t), core/edivisive (Hunter's t-test, the drift's slope) and
measure/allocation (through levels) use it."""
from __future__ import annotations

import math


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                     + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail P(|T| >= |t|) of Student's t with df degrees of freedom (1 for NaN)."""
    if math.isnan(t) or t == 0.0:
        return 1.0
    if math.isinf(t):
        return 0.0
    return min(1.0, betainc(df / 2.0, 0.5, df / (df + t * t)))


def t_quantile(level: float, df: float) -> float:
    """The t with P(|T| <= t) = level (bisection on t_sf2); the one-sided quantile of p is
    t_quantile(2 p - 1, df)."""
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > 1.0 - level:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_sf2(mid, df) > 1.0 - level else (lo, mid)
    return (lo + hi) / 2.0
