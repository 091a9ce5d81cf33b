"""kvb bisect's three judgements, on core/levels' estimate of values measured in the same
rounds (a round is a block: the log ratio of two commits within it cancels the CPU, the moment
and the link they shared): per link pair the median of its rounds' log ratios with Yuen's trimmed
t (two commits' links: 30%), or the per-round log ratios on one link; instruction counts are
exact. `sign` is +1 when the change looked for (--find, in the metric's better direction) makes
log(new/old) positive; "halfway" is the geometric middle of old and new.

- check_change: is old -> new a change of at least the threshold in the direction looked for?
- classify: is a commit like old, like new, or uncertain (the halfway rule for a commit between
  them, once its intervals are narrow against the change)?
- confirm: does the blamed commit differ from its parent by the threshold in that direction,
  and what share of old -> new does it carry?
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from kvbtools.core import levels, stats
from kvbtools.core.levels import Sample
from kvbtools.core.stats import Interval

# check_change states
ESTABLISHED, SAME, OPPOSITE, UNDECIDED = "established", "same", "opposite", "undecided"
# classify verdicts
OLD, NEW, UNCERTAIN = "old", "new", "uncertain"
# how a step was decided: both intervals clear of the halfway point, or by its estimate
CLEAR, HALFWAY = "intervals", "halfway rule"
# A step's intervals are narrow against the change when each is narrower than this fraction of
# it (in log ratio): the commit's place is then known to within a quarter of the change either
# way, and the halfway rule decides by the estimate.
NARROW = 0.5


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
    unit: str            # what it rested on ("8 link pairs, paired by round (2 rounds each)")


def check_change(old: Sample, new: Sample, *, sign: int, threshold: float,
                 exact: bool = False) -> ChangeCheck:
    """ESTABLISHED: the whole 95% interval of new/old lies beyond the threshold on the side
    looked for (at most 1 - threshold for a fall, at least 1 + threshold for a rise, as the
    tables' verdicts count a change). OPPOSITE: the interval excludes 1 on the other side.
    SAME: it lies within 1 +- threshold, a change smaller than the threshold. UNDECIDED:
    otherwise (more rounds or links may tell)."""
    e = levels.estimate(old, new, exact=exact)
    iv, unit = e.interval, e.units.text()
    if not iv.finite:
        return ChangeCheck(UNDECIDED, iv, unit)
    if (iv.hi <= 1.0 - threshold) if sign < 0 else (iv.lo >= 1.0 + threshold):
        return ChangeCheck(ESTABLISHED, iv, unit)
    if (iv.lo > 1.0) if sign < 0 else (iv.hi < 1.0):
        return ChangeCheck(OPPOSITE, iv, unit)
    if stats.within(iv, threshold):
        return ChangeCheck(SAME, iv, unit)
    return ChangeCheck(UNDECIDED, iv, unit)


@dataclass(frozen=True)
class StepCall:
    verdict: str          # OLD, NEW or UNCERTAIN
    to_old: Interval      # this / old
    to_new: Interval      # this / new
    change: Interval      # new / old, in the same rounds
    narrow: bool          # both intervals narrow against the change (NARROW)
    unit: str = ""
    rule: str = ""        # CLEAR or HALFWAY when decided

    @property
    def position(self) -> float:
        """Where the commit sits: 0 = like old, 1 = like new (estimates): its share of the
        change old -> new, in log ratio."""
        d = math.log(self.change.estimate) if self.change.estimate > 0 else 0.0
        if d == 0 or not self.to_old.estimate > 0:
            return math.nan
        return math.log(self.to_old.estimate) / d

    @property
    def settled(self) -> bool:
        """Nothing more to measure: decided with both intervals clear of the halfway point."""
        return self.verdict != UNCERTAIN


def classify(old: Sample, new: Sample, this: Sample, *, final: bool = False,
             exact: bool = False) -> StepCall:
    """Like old when the 95% intervals of this/old and of this/new both lie on old's side of
    the halfway point between old and new (D = log(new/old) measured in the same rounds: this/old
    below D/2 and this/new below -D/2, in the direction of D); like new when both lie on new's
    side (rule CLEAR). Otherwise uncertain; but when `final` (the budget is spent) and both
    intervals are narrower than NARROW x |D|, the halfway rule decides by the estimate: a commit
    that carries less than half of the change so far is like old, half or more like new (rule
    HALFWAY): a change spread over several commits is followed to the commit where it crosses
    halfway. No verdict while old and new do not differ in these rounds."""
    ch, o, n = levels.estimate(old, new, exact=exact), levels.estimate(old, this, exact=exact), levels.estimate(new, this, exact=exact)
    change, to_old, to_new = ch.interval, o.interval, n.interval
    unit = o.units.text()
    uncertain = StepCall(UNCERTAIN, to_old, to_new, change, False, unit)
    if not (change.finite and to_old.finite and to_new.finite) or change.lo <= 1 <= change.hi:
        return uncertain
    d = math.log(change.estimate)
    sign = 1 if d > 0 else -1
    half = abs(d) / 2
    al, ah = _logs(to_old, sign)
    bl, bh = _logs(to_new, sign)
    narrow = max(ah - al, bh - bl) < NARROW * abs(d)
    if ah < half and bh < -half:
        return StepCall(OLD, to_old, to_new, change, narrow, unit, CLEAR)
    if al > half and bl > -half:
        return StepCall(NEW, to_old, to_new, change, narrow, unit, CLEAR)
    call = StepCall(UNCERTAIN, to_old, to_new, change, narrow, unit)
    if final and narrow and math.isfinite(call.position):
        return StepCall(OLD if call.position < 0.5 else NEW, to_old, to_new, change, narrow,
                        unit, HALFWAY)
    return call


@dataclass(frozen=True)
class Confirmation:
    ratio: Interval       # blamed / parent
    p: float              # two-sided (Yuen's trimmed t on the unit; nan: exact)
    change: Interval      # new / old in the same rounds
    explained: float      # log(blamed/parent) / log(new/old)
    before: float         # log(parent/old) / log(new/old): the share before the blamed commit
    reasons: tuple[str, ...]   # why not confirmed; empty when confirmed
    unit: str = ""

    @property
    def confirmed(self) -> bool:
        return not self.reasons


def _share(part: Interval, whole: Interval, sign: int) -> float:
    x = sign * math.log(part.estimate) if part.estimate > 0 else math.nan
    total = sign * math.log(whole.estimate) if whole.estimate > 0 else math.nan
    return x / total if total > 0 else math.nan


def confirm(parent: Sample, blamed: Sample, old: Sample, new: Sample, *, sign: int,
            alpha: float, threshold: float, same_sources: bool,
            exact: bool = False) -> Confirmation:
    """Confirmed when the blamed commit differs from its parent significantly (Yuen's trimmed t
    at alpha on the unit core/levels chooses; exact counts need no test) in the direction looked
    for, by at least the threshold, and changes something the build compiles. The share of old
    -> new it explains, and the share before it (old -> parent), are reported, not required: a
    change spread over several commits is confirmed commit by commit."""
    e = levels.estimate(parent, blamed, exact=exact)
    ratio, p = e.interval, (e.p if e.p is not None else (0.0 if exact else 1.0))
    change = levels.estimate(old, new, exact=exact).interval
    explained = _share(ratio, change, sign)
    before = _share(levels.estimate(old, parent, exact=exact).interval, change, sign) \
        if change.estimate > 0 else math.nan
    x = sign * math.log(ratio.estimate) if ratio.estimate > 0 else math.nan
    reasons = []
    if same_sources:
        reasons.append("it changes nothing the build compiles (its compiled sources hash like "
                       "its parent's), so the difference cannot come from its code")
    if not (p < alpha and x > 0):
        shown = f"p={p:.3g}, alpha {alpha:g}" if not exact else "exact counts"
        reasons.append(f"it does not differ significantly from its parent in that direction "
                       f"({shown}; {e.units.text()})")
    elif abs(ratio.estimate - 1.0) < threshold:
        reasons.append(f"it differs from its parent by {abs(ratio.estimate - 1) * 100:.1f}%, "
                       f"less than the {threshold * 100:g}% threshold")
    return Confirmation(ratio, p, change, explained, before, tuple(reasons), e.units.text())
