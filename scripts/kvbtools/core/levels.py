"""The unit of a verdict: hosts > links (code placements) > processes > repetitions.

A value kvb compares was measured by a repetition, inside a process, running one link of a build
(one placement of its code: docs/placement.md). Each level is a random effect (Kalibera & Jones,
"Rigorous benchmarking in reasonable time", ISMM 2013; Georges et al., OOPSLA 2007): the
repetitions of one process share its binary, heap and page layout, its CPU and its stretch of the
machine's load, so they measure that process, not the build. A verdict therefore rests on the
highest level that has at least two samples a side, each unit reduced from the levels below it
(a process to the median of its repetitions, a link to the median of its processes), so that the
variance of every lower level is carried up inside the units' spread:

- hosts, when the sides were measured in paired rounds on at least MIN_HOSTS hosts (kvb's Slurm
  executor: every node measures every build in rounds of its own, docs/fleet.md), each host the
  median of its link pairs (or of its paired rounds), tested with Yuen's trimmed t over the hosts;
- links, when each side ran at least two links;
- else processes, when each side ran at least two;
- else nothing: one process a side gives no estimate of the noise that matters, and the verdict is
  undecided (ONE_PROCESS says why), unless the caller says the repetitions are independent
  (kvb compare --repetitions-independent: Google's compare.py's model, said on the verdict line).

Paired by round. When both sides were measured in the same rounds (kvb matrix, versions and bisect
run every series once per round, back to back on one CPU), a round is a block: the log ratio of the
two sides within a round cancels the CPU and the moment they share. The units are then the per-round
log ratios (process level), or per link pair the median of its rounds' log ratios (link level),
tested with Yuen's trimmed t (trimmed mean, winsorized variance): a rare slow link or a round a
neighbour disturbed moves a trimmed mean little, where it widens a t interval on every side of 1
(docs/placement.md shows the power and false-positive rates on generated data). The trimming
follows the design. 20% where the pairs share their placement (paired rounds of one link a side;
link pairs of one binary, as the A/A control and its base): only a disturbed round is rare there.
30% where each pair joins two builds' links (two independent placements): each side's slow links
land in the pairs' differences, one in eight a side puts nearly a quarter of the pairs in the
tails, and lz4's compressor showed one in five and one in four; 20% trimming then winsorizes at
the edge of the slow group and its interval stays wide however many links are added. Without rounds
(kvb compare of files), the two sides' units are compared with the Mann-Whitney U test and its
Hodges-Lehmann interval, compare.py's test on the right unit.

Hosts. A round runs on one host, so a round's log ratio never joins two hosts' values; link pairs
are taken within a host (a link measured on two hosts is two units), and the values of two hosts
are never compared unpaired. Hosts are a level of their own from MIN_HOSTS = 3: Yuen's t over n
host units has n - 1 degrees of freedom (no trimming below 5), and over 2 hosts its 95% quantile
is 12.7, an interval about 18 times the hosts' spread of the ratio, which no comparison narrows
below a 5% threshold: two hosts would leave every row undecided however long each measured
(over 3 hosts the quantile is 4.30, about 5 times the spread). With one or two hosts the verdict
rests on the level below, the link pairs (or paired rounds) of every host pooled, and the unit
line names the hosts and says that two are too few to rest on (docs/placement.md).

Exact values (instruction counts under callgrind) have no noise: decided at any n. A metric whose
every value is the same on each side (two values a side at least: a count, a size) is decided too.
Values that are not all positive (a count of 0 stalls), or that span more than LOG_SPAN (sys CPU
per op near 0), are compared as differences, shown as a ratio to the base's median: on logs the
smallest values rule, and two processes of 0.0005 and 0.0195 us/op against 0.004 and 0.006 read
1.57 (the ratio of their geometric means) where the medians halve; as differences, 0.50.

The ratio a verdict carries is the estimate it tested (stats.Verdict.estimator): the
Hodges-Lehmann shift of unpaired units, the trimmed mean of paired ones, the quotient of the
medians with one process a side or exact values; docs/compare.md, "The ratio", says why.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

from kvbtools.core import stats, tdist

TRIM = 0.2  # Yuen's trimmed t: the fraction trimmed from each end (Wilcox's usual 20%)
TRIM_BUILDS = 0.3  # ... over link pairs of two builds (the module doc says why)
# Values that span more than this factor are compared as differences (the module doc says why).
LOG_SPAN = 10.0

HOST, LINK, PROCESS, REPETITION, EXACT, NONE = ("host", "link", "process", "repetition", "exact",
                                                "none")
# Hosts with paired rounds a comparison needs before they are the unit (the module doc says why).
MIN_HOSTS = 3
# Hosts a unit line names before it says how many more.
NAMED_HOSTS = 4

ONE_PROCESS = ("one process a side: its repetitions share one placement and one machine state; "
               "run more processes (kvb matrix/versions interleave them) or pass "
               "--repetitions-independent")


@dataclass(frozen=True)
class Where:
    """Where one value was measured."""
    link: str = ""              # the binary's placement (its build and layout seed); "" unknown
    process: str = ""           # the process (a file, a run)
    block: int | None = None    # the round, when the sides were measured in the same rounds
    host: str = ""              # the host (a Slurm node) the round ran on; "" unknown or local


@dataclass(frozen=True)
class Sample:
    """The values of one side of one row, each with where it was measured."""
    values: tuple[float, ...]
    where: tuple[Where, ...]

    def __post_init__(self) -> None:
        if len(self.values) != len(self.where):
            raise ValueError("a Sample needs one Where per value")

    @staticmethod
    def processes(values: Iterable[float], link: str = "") -> "Sample":
        """Each value from a process of its own (e.g. one file each, one repetition each)."""
        vals = tuple(float(v) for v in values)
        return Sample(vals, tuple(Where(link, f"p{i}") for i in range(len(vals))))

    @staticmethod
    def rounds(values: Iterable[float], blocks: Sequence[int],
               links: Sequence[str] | None = None) -> "Sample":
        """One process per value, value i measured in round blocks[i] on link links[i]."""
        vals = tuple(float(v) for v in values)
        ls = list(links) if links is not None else [""] * len(vals)
        return Sample(vals, tuple(Where(ls[i], f"r{blocks[i]}", blocks[i])
                                  for i in range(len(vals))))

    def links(self) -> list[str]:
        return list(dict.fromkeys(w.link for w in self.where))

    def process_values(self) -> dict[tuple[str, str], list[float]]:
        out: dict[tuple[str, str], list[float]] = {}
        for v, w in zip(self.values, self.where):
            out.setdefault((w.link, w.process), []).append(v)
        return out

    def block_values(self) -> dict[tuple[str, int], tuple[str, list[float]]]:
        """(host, round) -> (its link, its values); rounds with values on two links are left
        out."""
        out: dict[tuple[str, int], tuple[str, list[float]]] = {}
        mixed: set[tuple[str, int]] = set()
        for v, w in zip(self.values, self.where):
            if w.block is None:
                continue
            link, vals = out.setdefault((w.host, w.block), (w.link, []))
            if link != w.link:
                mixed.add((w.host, w.block))
            vals.append(v)
        return {b: x for b, x in out.items() if b not in mixed}


@dataclass(frozen=True)
class Units:
    """What a verdict rested on."""
    level: str                 # LINK, PROCESS, REPETITION, EXACT or NONE
    base: int                  # units of the base side (pairs: the pairs)
    other: int
    paired: bool = False
    below: str = ""            # what each unit holds, e.g. "3 processes"
    hosts: tuple[str, ...] = ()   # the hosts of paired rounds (none: one host, unnamed)

    def text(self) -> str:
        if self.level == EXACT:
            return "exact values"
        if self.level == NONE:
            return "one process a side"
        if self.level == HOST:
            return f"{self.base} hosts ({host_names(self.hosts)}) x {self.below}"
        return self._text() + _on_hosts(self.hosts)

    def _text(self) -> str:
        name = {LINK: "link", PROCESS: "process", REPETITION: "repetition"}[self.level]
        if self.paired and self.level == PROCESS:
            out = f"{self.base} paired round{'s' if self.base != 1 else ''}"
        elif self.paired:
            out = f"{self.base} link pair{'s' if self.base != 1 else ''}, paired by round"
        else:
            counts = f"{self.base}" if self.base == self.other else f"{self.base}+{self.other}"
            plural = "es" if name == "process" else "s"
            out = f"{counts} {name}{plural if max(self.base, self.other) != 1 else ''} a side"
        if self.level == REPETITION:
            out += ", counted as independent (--repetitions-independent)"
        return out + (f" ({self.below})" if self.below else "")


def host_names(hosts: Sequence[str]) -> str:
    """'node1, node2, node3', or the first NAMED_HOSTS and how many more."""
    shown = ", ".join(hosts[:NAMED_HOSTS])
    return shown + (f" and {len(hosts) - NAMED_HOSTS} more" if len(hosts) > NAMED_HOSTS else "")


def _on_hosts(hosts: Sequence[str]) -> str:
    """What a unit line adds below the host level: the hosts whose units it pooled, and why they
    are not the unit."""
    if not hosts:
        return ""
    if len(hosts) == 1:
        return f", on 1 host ({hosts[0]})"
    return (f", pooled over {len(hosts)} hosts ({host_names(hosts)}: too few to rest on, "
            f"{MIN_HOSTS} needed)")


@dataclass(frozen=True)
class Estimate:
    """other / base on the chosen unit: the estimate, its interval and the test's p."""
    ratio: float
    lo: float                  # 0 and inf: no interval
    hi: float
    p: float | None            # two-sided; None: no test (exact, or no estimate)
    test: str                  # e.g. "Yuen's trimmed t (20%)", "Mann-Whitney U"
    units: Units
    why: str = ""              # no estimate: why
    estimator: str = stats.MEDIANS   # what `ratio` is (stats.Verdict.estimator)

    @property
    def interval(self) -> stats.Interval:
        return stats.Interval(self.ratio, self.lo, self.hi, min(self.units.base,
                                                                self.units.other))


# ---- reductions ---------------------------------------------------------------------------------

def _log_scale(*samples: Sample) -> bool:
    """Ratios are taken on logs when every value is positive and the largest is at most LOG_SPAN
    times the smallest; otherwise as differences over the base's median (the module doc says
    why)."""
    vals = [v for s in samples for v in s.values]
    return bool(vals) and min(vals) > 0 and max(vals) <= LOG_SPAN * min(vals)


def _reduce(values: Sequence[float], log: bool) -> float:
    m = statistics.median(values)
    return math.log(m) if log else m


def _process_units(s: Sample, log: bool) -> dict[tuple[str, str], float]:
    return {k: _reduce(v, log) for k, v in s.process_values().items()}


def _link_units(s: Sample, log: bool) -> dict[str, float]:
    by_link: dict[str, list[float]] = {}
    for (link, _), u in _process_units(s, log).items():
        by_link.setdefault(link, []).append(u)
    return {k: statistics.median(v) for k, v in by_link.items()}


# A pair of links within a host: (host, base link, other link).
PairKey = tuple[str, str, str]


def _round_diffs(base: Sample, other: Sample, log: bool) -> list[tuple[PairKey, float]]:
    """((host, base link, other link), other - base) per round both sides ran in on one host."""
    b, o = base.block_values(), other.block_values()
    out = []
    for r in sorted(set(b) & set(o)):
        (lb, vb), (lo, vo) = b[r], o[r]
        out.append(((r[0], lb, lo), _reduce(vo, log) - _reduce(vb, log)))
    return out


def _link_pairs(paired: list[tuple[PairKey, float]]) -> dict[PairKey, list[float]]:
    pairs: dict[PairKey, list[float]] = {}
    for key, d in paired:
        pairs.setdefault(key, []).append(d)
    return pairs


# ---- tests --------------------------------------------------------------------------------------

def trimmed(n: int, trim: float) -> int:
    """How many of n values Yuen's t trims from each end: floor(trim n), fewer where the h - 1
    degrees of freedom (h = n - 2 g) would fall below 2 (at 30%, 4 values are not trimmed)."""
    g = int(math.floor(trim * n))
    while g > 0 and n - 2 * g < 3:
        g -= 1
    return g


def yuen(d: Sequence[float], level: float, trim: float = TRIM) -> tuple[float, float, float, float]:
    """Yuen's one-sample trimmed t on differences: (trimmed mean, lo, hi, two-sided p of 0).
    g = floor(trim * n) values are trimmed from each end; the standard error comes from the
    winsorized sum of squares, SE^2 = SSw / (h (h - 1)), h = n - 2g, with h - 1 degrees of
    freedom (Tukey & McLaughlin 1963; Wilcox, Introduction to Robust Estimation, 4.2); g is
    `trimmed`."""
    n = len(d)
    x = sorted(d)
    g = trimmed(n, trim)
    h = n - 2 * g
    tm = statistics.fmean(x[g:n - g])
    w = [x[g]] * g + x[g:n - g] + [x[n - g - 1]] * g
    wm = statistics.fmean(w)
    ss = sum((v - wm) ** 2 for v in w)
    se = math.sqrt(ss / (h * (h - 1)))
    if se == 0.0:
        return tm, tm, tm, (0.0 if tm != 0 else 1.0)
    q = tdist.t_quantile(level, h - 1)
    return tm, tm - q * se, tm + q * se, tdist.t_sf2(tm / se, h - 1)


def _as_ratio(est: float, lo: float, hi: float, log: bool, base_level: float
              ) -> tuple[float, float, float]:
    if log:
        return math.exp(est), math.exp(lo), math.exp(hi)
    if base_level <= 0:  # no ratio to the base: its direction only (judge says why)
        if lo == hi == 0:
            return 1.0, 1.0, 1.0
        return (math.inf if est > 0 else 0.0 if est < 0 else math.nan), 0.0, math.inf
    return (max(0.0, 1 + est / base_level), max(0.0, 1 + lo / base_level),
            1 + hi / base_level)


def _paired(diffs: list[float], base_level: float, log: bool, level: float,
            units: Units, trim: float = TRIM) -> Estimate:
    est, lo, hi, p = yuen(diffs, level, trim)
    r, rlo, rhi = _as_ratio(est, lo, hi, log, base_level)
    return Estimate(r, rlo, rhi, p, f"Yuen's trimmed t ({trim:.0%})", units,
                    estimator=stats.TRIMMED_MEAN)


def _trim(keys: Iterable[PairKey]) -> float:
    """TRIM where every pair is one link on both sides, TRIM_BUILDS where pairs join two builds'
    links (the module doc says why)."""
    return TRIM if all(a == b for _, a, b in keys) else TRIM_BUILDS


def _unpaired(b: list[float], o: list[float], log: bool, level: float, units: Units,
              base_level: float) -> Estimate:
    """The U test and the Hodges-Lehmann shift with its interval on unit values (logs when
    `log`), as a ratio; every unit the same a side: the shift is known exactly."""
    test = stats.mann_whitney_u(o, b)
    est, lo, hi = stats.shift_interval(b, o, level)
    if stats.constant(b, o):
        lo = hi = est
    r, rlo, rhi = _as_ratio(est, lo, hi, log, base_level)
    return Estimate(r, rlo, rhi, test.p, "Mann-Whitney U", units,
                    estimator=stats.HODGES_LEHMANN)


# ---- the estimate on the right unit -------------------------------------------------------------

def estimate(base: Sample, other: Sample, level: float = stats.LEVEL, *,
             repetitions_independent: bool = False, exact: bool = False) -> Estimate:
    """other / base on the highest level with two units a side (see the module doc)."""
    if not base.values or not other.values:
        return Estimate(math.nan, 0.0, math.inf, None, "", Units(NONE, 0, 0), "no values")
    if exact:
        mb, mo = statistics.median(base.values), statistics.median(other.values)
        r = mo / mb if mb else (1.0 if mo == 0 else math.nan)
        return Estimate(r, r, r, None, "exact", Units(EXACT, len(base.values),
                                                      len(other.values)))
    log = _log_scale(base, other)
    paired = _round_diffs(base, other, log)
    base_level = statistics.median(base.values)
    hosts = tuple(sorted({key[0] for key, _ in paired if key[0]}))
    if len(hosts) >= MIN_HOSTS:
        return _by_host(paired, hosts, base_level, log, level)
    lb, lo = _link_units(base, log), _link_units(other, log)
    if len(lb) >= 2 and len(lo) >= 2:
        pairs = _link_pairs(paired)
        if len(pairs) >= 2:
            below = _span([len(v) for v in pairs.values()], "round") + " each"
            return _paired([statistics.median(v) for v in pairs.values()], base_level, log,
                           level, Units(LINK, len(pairs), len(pairs), True, below, hosts),
                           _trim(pairs))
        return _unpaired(list(lb.values()), list(lo.values()), log, level,
                         Units(LINK, len(lb), len(lo), False, _below(base, other)), base_level)
    if len(paired) >= 2:
        return _paired([d for _, d in paired], base_level, log, level,
                       Units(PROCESS, len(paired), len(paired), True, hosts=hosts))
    pb, po = _process_units(base, log), _process_units(other, log)
    if len(pb) >= 2 and len(po) >= 2:
        return _unpaired(list(pb.values()), list(po.values()), log, level,
                         Units(PROCESS, len(pb), len(po)), base_level)
    if repetitions_independent and len(base.values) >= 1 and len(other.values) >= 1:
        b = [math.log(v) for v in base.values] if log else list(base.values)
        o = [math.log(v) for v in other.values] if log else list(other.values)
        return _unpaired(b, o, log, level,
                         Units(REPETITION, len(base.values), len(other.values)), base_level)
    return Estimate(math.nan, 0.0, math.inf, None, "", Units(NONE, len(pb), len(po)),
                    ONE_PROCESS)


def _span(counts: Sequence[int], what: str) -> str:
    """'2 rounds', '2-3 rounds': the fewest and the most of `counts`."""
    lo, hi = min(counts), max(counts)
    return f"{lo}" + (f"-{hi}" if hi != lo else "") + f" {what}{'s' if hi != 1 else ''}"


def _by_host(paired: list[tuple[PairKey, float]], hosts: tuple[str, ...], base_level: float,
             log: bool, level: float) -> Estimate:
    """Hosts as the unit (the module doc): each host the median of its link pairs (each the
    median of its rounds) when every host ran two or more, else the median of its paired
    rounds; Yuen's trimmed t over the hosts."""
    pairs = _link_pairs(paired)
    per_host = {h: [statistics.median(v) for k, v in pairs.items() if k[0] == h] for h in hosts}
    if all(len(v) >= 2 for v in per_host.values()):
        units = [statistics.median(v) for v in per_host.values()]
        below = _span([len(v) for v in per_host.values()], "link pair") + ", paired by round"
    else:
        rounds = {h: [d for k, d in paired if k[0] == h] for h in hosts}
        units = [statistics.median(v) for v in rounds.values()]
        below = _span([len(v) for v in rounds.values()], "paired round")
    return _paired(units, base_level, log, level,
                   Units(HOST, len(hosts), len(hosts), True, below, hosts))


def _below(base: Sample, other: Sample) -> str:
    """'3 processes' a link (the fewest of any link)."""
    counts = [len({w.process for w in s.where if w.link == link})
              for s in (base, other) for link in s.links()]
    n = min(counts) if counts else 0
    return f"{n} process{'es' if n != 1 else ''} a link" if n > 1 else ""


# ---- the verdict and the family -----------------------------------------------------------------

def constant(base: Sample, other: Sample) -> bool:
    """Two values a side at least, every value of each side the same: a count or a size that
    does not vary (no noise to test against)."""
    return (len(base.values) >= 2 and len(other.values) >= 2
            and min(base.values) == max(base.values) and min(other.values) == max(other.values))


def judge(base: Sample, other: Sample, j: stats.Judgement, *,
          repetitions_independent: bool = False, exact: bool = False,
          names: tuple[str, str] = ("the base", "the other side")) -> stats.Verdict:
    """Three-valued, on the unit `estimate` chooses:
    - changed (j's better or worse word): p < alpha and the estimate differs from 1 by at least
      the threshold; exact values: a difference of at least the threshold;
    - no change: the 1 - alpha interval lies within 1 +- threshold;
    - undecided, with the reason: one process a side, too few units for the test to reach alpha,
      or an interval that spans both no change and a change of the threshold or more.
    The p-value is the row's own; `family` adjusts it over the comparison's rows. `names`: the
    sides as the notes name them (base, other)."""
    e = estimate(base, other, 1.0 - j.alpha, repetitions_independent=repetitions_independent,
                 exact=exact or constant(base, other))
    unit = e.units.text() if exact or e.units.level != EXACT else "constant values"
    mb, mo = (statistics.median(x.values) if x.values else math.nan for x in (base, other))
    if e.units.level == NONE:  # the ratio of the medians, shown; nothing to judge it by
        r = mo / mb if mb else (1.0 if mo == 0 else math.nan)
        return stats.Verdict(r, None, stats.UNDECIDED, None, e.why, None, unit)
    r = e.ratio
    improved = (r > 1) == j.higher_is_better if math.isfinite(r) else None
    verdict = functools.partial(stats.Verdict, unit=unit, estimator=e.estimator)
    if e.units.level == EXACT:
        if not math.isfinite(r):
            return verdict(r, None, stats.UNDECIDED, None,
                           f"{names[0]}'s value is 0: no ratio to it")
        note = "" if exact else "every value of each side is the same: no noise to test against"
        if abs(r - 1.0) >= j.threshold:
            return verdict(r, improved, j.word(bool(improved)), None, note, e.interval)
        return verdict(r, None, stats.NO_CHANGE, None, note, e.interval)
    test = stats.UTest(math.nan, e.p if e.p is not None else 1.0, e.test)
    iv = e.interval
    if mb == 0 and not iv.finite:  # no ratio to the base: a change has a direction only
        zero = (f"{names[0]}'s median is 0" + (f", as is {names[1]}'s" if mo == 0 else "")
                + ": no ratio to it")
        if test.p < j.alpha and r in (0.0, math.inf):
            return verdict(r, improved, j.word(bool(improved)), test, zero, iv)
        return verdict(r, None, stats.UNDECIDED, test,
                       f"{zero}; p={test.p:.3g}: more units needed", iv)
    if math.isfinite(r) and test.p < j.alpha and abs(r - 1.0) >= j.threshold:
        return verdict(r, improved, j.word(bool(improved)), test, "", iv)
    if stats.within(iv, j.threshold):
        note = (f"p<{j.alpha:g} but within the {stats.pct(j.threshold)} threshold"
                if test.p < j.alpha else "")
        return verdict(r, None, stats.NO_CHANGE, test, note, iv)
    return verdict(r, None, stats.UNDECIDED, test, _why_undecided(e, j, test.p), iv)


def _why_undecided(e: Estimate, j: stats.Judgement, p: float) -> str:
    u = e.units
    if e.test == "Mann-Whitney U" and stats.min_p(u.base, u.other) >= j.alpha:
        need = stats.runs_needed(j.alpha)
        what = {LINK: "links", PROCESS: "processes", REPETITION: "repetitions"}[u.level]
        return (f"n={u.base}+{u.other} {what} cannot reach p<{j.alpha:g}: {need} {what} a side "
                "needed" + (", each a separate run (a file)" if u.level == PROCESS else ""))
    if not e.interval.finite:
        return f"{u.text()}: no interval of the ratio; more units needed"
    if p < j.alpha:
        return (f"p<{j.alpha:g} and the change is under the {stats.pct(j.threshold)} threshold, "
                f"but its {stats.pct(1 - j.alpha)} interval {e.interval.text()} reaches beyond "
                "it: more units needed")
    return (f"its {stats.pct(1 - j.alpha)} interval {e.interval.text()} spans both no change "
            f"and a change of {stats.pct(j.threshold)} or more: more units needed")


def benjamini_hochberg(ps: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (step-up; FDR at alpha when p_adj < alpha), in the
    order given: p_adj(i) = min over k >= rank(i) of m * p_(k) / k, at most 1."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [1.0] * m
    best = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        best = min(best, ps[i] * m / rank)
        out[i] = min(1.0, best)
    return out


def family(verdicts: Sequence[stats.Verdict], alpha: float) -> list[stats.Verdict]:
    """The verdicts of one comparison (its rows x metrics) as one family of tests: every p is
    adjusted by Benjamini-Hochberg over the verdicts that have a test, and a change stands only
    when its adjusted p is below alpha; otherwise it becomes undecided, saying so. No change and
    undecided verdicts keep their word (an adjusted p is never smaller)."""
    tested = [i for i, v in enumerate(verdicts) if v.test is not None]
    adjusted = benjamini_hochberg([verdicts[i].test.p for i in tested])  # type: ignore[union-attr]
    out = list(verdicts)
    m = len(tested)
    for i, pa in zip(tested, adjusted):
        v = verdicts[i]
        p = v.test.p  # type: ignore[union-attr]
        if v.better is not None and pa >= alpha:
            why = (f"p={p:.3g} is {pa:.3g} adjusted over the {m} tests of this comparison "
                   f"(Benjamini-Hochberg): not below {alpha:g}")
            out[i] = dataclasses.replace(v, better=None, word=stats.UNDECIDED, note=why,
                                         p_adjusted=pa)
        else:
            out[i] = dataclasses.replace(v, p_adjusted=pa)
    return out


# ---- where the variance is ----------------------------------------------------------------------

@dataclass(frozen=True)
class Components:
    """The variance of paired log ratios, split between links and the rounds within a link
    (one-way random effects by the method of moments), from rounds measured so far."""
    links: int                 # link pairs measured
    rounds: float              # rounds per link pair (their mean)
    between: float             # variance of the link effect (>= 0)
    within: float              # variance of one round's log ratio within a link
    trim: float = TRIM         # the trimming of the test these pairs get (_trim)

    def width(self, links: int, rounds: float, level: float = stats.LEVEL) -> float:
        """The expected full width, in log ratio, of Yuen's trimmed t interval over `links`
        link pairs with `rounds` rounds each (inf below two links): h - 1 degrees of freedom
        (h = links - 2 g, g = trimmed(links): at 20%, 5 link pairs have 2, as 3 do), and on normal
        data the trimmed mean's variance of 1 / efficiency of the mean's once anything is trimmed
        (0.87 at 20%, 0.80 at 30%: trimmed_efficiency). So 5 links are wider than 4, and 6
        narrower."""
        if links < 2 or rounds < 1:
            return math.inf
        g = trimmed(links, self.trim)
        h = links - 2 * g
        eff = trimmed_efficiency(self.trim) if g else 1.0
        var = (self.between + self.within / rounds) / (links * eff)
        return 2 * tdist.t_quantile(level, h - 1) * math.sqrt(var)


def trimmed_efficiency(trim: float) -> float:
    """The asymptotic efficiency of the trim-trimmed mean against the mean on normal data: the
    mean's variance over the trimmed mean's, sigma_w^2 / (1 - 2 trim)^2 with sigma_w^2 the
    winsorized variance (0.94 at 10%, 0.87 at 20%, 0.80 at 30%)."""
    nd = statistics.NormalDist()
    c = nd.inv_cdf(1 - trim)
    winsorized = (1 - 2 * trim) - 2 * c * nd.pdf(c) + 2 * trim * c * c
    return (1 - 2 * trim) ** 2 / winsorized


def components(base: Sample, other: Sample) -> Components | None:
    """Components of the paired rounds of base and other; None when fewer than two link pairs
    or no link pair has two rounds (nothing to split), or the values are not all positive."""
    if not _log_scale(base, other):
        return None
    pairs = _link_pairs(_round_diffs(base, other, True))
    groups = list(pairs.values())
    df_within = sum(len(g) - 1 for g in groups)
    if len(groups) < 2 or df_within < 1:
        return None
    within = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in groups) / df_within
    means = [statistics.fmean(g) for g in groups]
    rounds = statistics.fmean(len(g) for g in groups)
    between = max(0.0, statistics.variance(means) - within / rounds)
    return Components(len(groups), rounds, between, within, _trim(pairs))
