"""kvb bisect's three judgements, on values measured in the same interleaved rounds.

Every judgement works on the Hodges-Lehmann ratio intervals of kvbtools.rounds, in log space so
that "halfway between old and new" means the geometric middle. `sign` is +1 when the change the
bisect looks for (--find slower|faster, in the metric's better direction) makes log(new/old)
positive, -1 when it makes it negative.

- check_change: is old -> new a change of at least the threshold in the direction looked for?
- classify: is a commit like old, like new, or uncertain?
- confirm: does the blamed commit, against its parent, explain the change?
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from kvbtools.core import stats
from kvbtools.measure.rounds import Interval, ratio_interval

# check_change states
ESTABLISHED, SAME, OPPOSITE, UNDECIDED = "established", "same", "opposite", "undecided"
# classify verdicts
OLD, NEW, UNCERTAIN = "old", "new", "uncertain"


def want_sign(find: str, higher_is_better: bool) -> int:
    """+1 when the change looked for raises the metric, -1 when it lowers it."""
    worse = find == "slower"
    return -1 if worse == higher_is_better else 1


def _logs(iv: Interval, sign: int) -> tuple[float, float]:
    """The interval as sign * log(ratio), low end first."""
    a, b = sign * math.log(iv.lo), sign * math.log(iv.hi)
    return min(a, b), max(a, b)


@dataclass(frozen=True)
class ChangeCheck:
    state: str           # ESTABLISHED, SAME, OPPOSITE or UNDECIDED
    interval: Interval   # new / old


def check_change(old: Sequence[float], new: Sequence[float], *, sign: int,
                 threshold: float) -> ChangeCheck:
    """ESTABLISHED: the whole 95% interval of new/old lies beyond the threshold on the side
    looked for (at most 1 - threshold for a fall, at least 1 + threshold for a rise, as the
    tables' verdicts count a change). OPPOSITE: the interval excludes 1 on the other side.
    SAME: it lies within 1 +- threshold, a change smaller than the threshold. UNDECIDED:
    otherwise (more rounds may tell)."""
    iv = ratio_interval(old, new)
    if not iv.finite:
        return ChangeCheck(UNDECIDED, iv)
    if (iv.hi <= 1.0 - threshold) if sign < 0 else (iv.lo >= 1.0 + threshold):
        return ChangeCheck(ESTABLISHED, iv)
    if (iv.lo > 1.0) if sign < 0 else (iv.hi < 1.0):
        return ChangeCheck(OPPOSITE, iv)
    if 1.0 - threshold < iv.lo and iv.hi < 1.0 + threshold:
        return ChangeCheck(SAME, iv)
    return ChangeCheck(UNDECIDED, iv)


@dataclass(frozen=True)
class StepCall:
    verdict: str          # OLD, NEW or UNCERTAIN
    to_old: Interval      # this / old
    to_new: Interval      # this / new
    change: Interval      # new / old, in the same rounds
    narrow: bool          # uncertain with intervals too narrow for more rounds to help

    @property
    def position(self) -> float:
        """Where the commit sits: 0 = like old, 1 = like new (estimates)."""
        d = math.log(self.change.estimate) if self.change.estimate > 0 else 0.0
        if d == 0 or not self.to_old.estimate > 0:
            return math.nan
        return math.log(self.to_old.estimate) / d

    @property
    def settled(self) -> bool:
        return self.verdict != UNCERTAIN or self.narrow


def classify(old: Sequence[float], new: Sequence[float], this: Sequence[float]) -> StepCall:
    """Like old when the 95% intervals of this/old and of this/new both lie on old's side of
    the halfway point between old and new (D = log(new/old) measured in the same rounds: this/old
    below D/2 and this/new below -D/2, in the direction of D); like new when both lie on new's
    side; otherwise uncertain. Uncertain with both intervals narrower than half the change is
    'narrow': the commit sits between old and new (a partial change), and more rounds would not
    move it to either side. No verdict while old and new do not differ in these rounds."""
    change = ratio_interval(old, new)
    to_old = ratio_interval(old, this)
    to_new = ratio_interval(new, this)
    uncertain = StepCall(UNCERTAIN, to_old, to_new, change, False)
    if not (change.finite and to_old.finite and to_new.finite) or change.lo <= 1 <= change.hi:
        return uncertain
    d = math.log(change.estimate)
    sign = 1 if d > 0 else -1
    half = abs(d) / 2
    al, ah = _logs(to_old, sign)
    bl, bh = _logs(to_new, sign)
    if ah < half and bh < -half:
        return StepCall(OLD, to_old, to_new, change, False)
    if al > half and bl > -half:
        return StepCall(NEW, to_old, to_new, change, False)
    narrow = max(ah - al, bh - bl) < half
    return StepCall(UNCERTAIN, to_old, to_new, change, narrow)


@dataclass(frozen=True)
class Confirmation:
    ratio: Interval       # blamed / parent
    p: float              # Mann-Whitney U, two-sided
    change: Interval      # new / old in the same rounds
    explained: float      # log(blamed/parent) / log(new/old)
    reasons: tuple[str, ...]   # why not confirmed; empty when confirmed

    @property
    def confirmed(self) -> bool:
        return not self.reasons


def confirm(parent: Sequence[float], blamed: Sequence[float], old: Sequence[float],
            new: Sequence[float], *, sign: int, alpha: float,
            same_sources: bool) -> Confirmation:
    """Confirmed when the blamed commit differs from its parent significantly (U test at alpha)
    in the direction looked for, explains at least half of old -> new (in log ratio, both
    measured in the same rounds), and changes something the build compiles."""
    ratio = ratio_interval(parent, blamed)
    p = stats.mann_whitney_u(blamed, parent).p
    change = ratio_interval(old, new)
    x = sign * math.log(ratio.estimate) if ratio.estimate > 0 else math.nan
    total = sign * math.log(change.estimate) if change.estimate > 0 else math.nan
    explained = x / total if total > 0 else math.nan
    reasons = []
    if same_sources:
        reasons.append("it changes nothing the build compiles (its compiled sources hash like "
                       "its parent's), so the difference cannot come from its code")
    if not (p < alpha and x > 0):
        reasons.append(f"it does not differ significantly from its parent in that direction "
                       f"(p={p:.3g}, alpha {alpha:g})")
    if not explained >= 0.5:
        shown = f"{explained * 100:.0f}%" if math.isfinite(explained) else "none"
        reasons.append(f"it explains {shown} of the old -> new change, less than half")
    return Confirmation(ratio, p, change, explained, tuple(reasons))
