"""kvb trend, run: what the command does with its arguments. Its command line and
--help: commands/parsers/trend.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import math
import re
import shlex
import sys
from dataclasses import dataclass

from kvbtools.commands.arguments import Selection
from kvbtools.core import edivisive, manifest, stats
from kvbtools.core.errors import EXIT_CHANGED, EXIT_OK, EXIT_UNDECIDED, UsageError
from kvbtools.core.changes import Analysis, Params, analyse
from kvbtools.core.series import Point, Series, changed
from kvbtools.core.table import fmt_value as fmt

# A library version becomes a git tag by this pattern (upstream's v1.2.3 habit).
TAG = "v{version}"


# ---- what differs, and the bisect line ----------------------------------------------------------

def _subject(name: str, engine: str) -> str:
    """What an attribute belongs to: a library, kvbench itself, or something else."""
    if name.startswith("lib."):
        return "lib " + name.split(".")[1]
    if name in ("commit", "kvbench_version"):
        return "kvbench"
    if name == "engine.version" and engine:
        return "lib " + engine
    return name


def subjects(diff: dict[str, tuple[str, str]], engine: str) -> dict[str, dict[str, tuple[str, str]]]:
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for k, v in diff.items():
        out.setdefault(_subject(k, engine), {})[k] = v
    return out


def _nearest_difference(points: list[Point], index: int, reach: int) -> int | None:
    """The change of attributes nearest to the boundary before points[index], within reach."""
    for d in range(0, reach + 1):
        for i in (index - d, index + d):
            if 0 < i < len(points) and changed(points[i - 1], points[i]):
                return i
    return None


def _workload_flags(p: Point) -> list[str]:
    """The kvbench flags of the run's command line, without the ones each run sets anew."""
    line = p.attributes.get("context.command_line", "")
    try:
        argv = shlex.split(line)[1:]
    except ValueError:
        argv = line.split()[1:]
    return [a for a in argv if not re.match(r"--(db|json|report_interval_seconds)(=|$)", a)]


def _engine_of(s: Series) -> str:
    return s.row.split(" ", 1)[0] if s.kind == "kvbench" else ""


def bisect_line(s: Series, before: Point, after: Point,
                worse: bool = True) -> tuple[str | None, str]:
    """The kvb bisect command for a change between two points, or None and why not; an
    improvement (`worse` False) is searched for with --find faster."""
    engine = _engine_of(s)
    subj = subjects(changed(before, after), engine)
    if not subj:
        return None, ("nothing the store records differs between these two points: the cause "
                      "is outside it (the machine's load, its temperature, other tenants); look at "
                      "the runs")
    if len(subj) > 1:
        return None, (f"{len(subj)} things changed at once ({', '.join(sorted(subj))}): "
                      "bisect one of them with the others held fixed")
    what, diff = next(iter(subj.items()))
    metric = f" --metric {s.metric}" + ("" if worse else " --find faster")
    preset = s.key.get("preset", "")
    if what == "kvbench":
        a, b = diff.get("commit", ("", ""))
        if not a or not b:
            return None, "kvbench's version changed but the runs record no commit"
        if a.endswith("-dirty") or b.endswith("-dirty"):
            return None, ("a run was built from a kvbench tree with uncommitted changes: its "
                          "commit does not name the code; commit, rebuild and measure again")
        build = (f"cmake --preset {preset} -B build/kvb-bisect -DKVBENCH_BUILD_TESTS=OFF && "
                 "cmake --build build/kvb-bisect -j2 --target "
                 + ("kvbench_micro" if s.kind == "gbench" else "kvbench"))
        if s.kind == "gbench":
            measure = (f"build/kvb-bisect/bench/kvbench_micro --benchmark_filter='^"
                       f"{re.escape(s.row)}$' --benchmark_repetitions=1 "
                       "--benchmark_out=kvb-bisect.json --benchmark_out_format=json "
                       ">/dev/null && cat kvb-bisect.json")
            bench = s.row
        else:
            flags = " ".join(shlex.quote(f) for f in _workload_flags(after))
            measure = (f"build/kvb-bisect/src/kvbench {flags} --report_interval_seconds=0 "
                       "--json=kvb-bisect.json >/dev/null && cat kvb-bisect.json")
            bench = s.row
        return (f"kvb bisect --repo KVBENCH_CHECKOUT --old {a} --new {b} --build-cmd "
                f"{shlex.quote(build)} --measure-cmd {shlex.quote(measure)} --bench "
                f"{shlex.quote(bench)}{metric}"), "kvbench's own commit changed"
    if not what.startswith("lib "):
        return None, (f"{what} changed ({diff[what][0]} -> {diff[what][1]}): not something kvb "
                      "bisect can search")
    dep = what[4:]
    if dep not in manifest.buildable():
        return None, f"{dep} changed, and kvb bisect cannot build {dep} from source"
    commits = diff.get(f"lib.{dep}.commit")
    versions = diff.get(f"lib.{dep}.version") or diff.get("engine.version")
    if commits and all(commits):
        good, bad, why = commits[0], commits[1], f"{dep}'s commit changed"
    elif versions and all(versions):
        good, bad = TAG.format(version=versions[0]), TAG.format(version=versions[1])
        why = (f"{dep} {versions[0]} -> {versions[1]}; the tags are upstream's "
               f"v<version> names: check them with git -C {dep.upper()}_CHECKOUT tag -l")
    else:
        return None, f"{dep}'s {', '.join(diff)} changed, not its version or commit"
    if s.kind == "gbench":
        mode = f" --micro {shlex.quote(s.row)}"
    else:
        bench = s.row.split(" ", 1)[1].split("[", 1)[0]
        num = s.key.get("workload.num", "100000")
        mode = f" --engine {engine} --bench {bench} --num {num}"
        rest = [f for f in _workload_flags(after)
                if not re.match(r"--(engine|benchmarks|num|repeats)(=|$)", f)]
        if rest:
            why += ("; kvb bisect runs kvbench's defaults for every other flag, and these runs "
                    f"also had {' '.join(rest)}")
    return (f"kvb bisect --dep {dep} --repo {dep.upper()}_CHECKOUT --old {good} --new {bad} "
            f"--preset {preset}{mode}{metric}"), why


# ---- output -------------------------------------------------------------------------------------

def _versions(p: Point) -> str:
    libs = sorted((k.split(".")[1], v) for k, v in p.attributes.items()
                  if k.startswith("lib.") and k.endswith(".version"))
    return ", ".join(f"{n} {v}" for n, v in libs)


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%" if math.isfinite(x) else "n/a"


def _describe_point(label: str, i: int, p: Point, scale: float) -> str:
    return (f"  {label} point {i + 1}: {p.time}, commit {p.commit or '-'}, median "
            f"{fmt(p.median * scale)} (n={p.n}); {_versions(p) or 'no library versions'}")


def format_change(a: Analysis, c: edivisive.Change, params: Params, number: int) -> list[str]:
    s = a.series
    m = s.info
    pts = s.points
    lo, hi = c.relative_interval()
    worse = (c.ratio < 1) == m.higher_is_better
    word = params.judgement.for_metric(m).word(not worse)
    lines = [f"change {number}: {s.label} [{m.shown_unit}], fingerprint {s.fingerprint[:12]}",
             f"  {_pct(c.ratio - 1)} ({word}; 95% interval {_pct(lo)}..{_pct(hi)}; t-test "
             f"p={c.test.p:.2g}): mean {fmt(c.test.mean_a * m.scale)} over the {c.n_before} "
             f"points before, {fmt(c.test.mean_b * m.scale)} over the {c.n_after} after",
             _describe_point("before:", c.index - 1, pts[c.index - 1], m.scale),
             _describe_point("after: ", c.index, pts[c.index], m.scale)]
    at = c.index
    diff = changed(pts[at - 1], pts[at])
    if not diff:
        near = _nearest_difference(pts, at, params.min_size)
        if near is not None and near != at:
            lines.append(f"  nothing recorded differs at this boundary; the nearest change of "
                         f"attributes is {near - at:+d} point(s) away, between points {near} "
                         f"and {near + 1} (a change point's position is uncertain by a point "
                         "or two)")
            at = near
            diff = changed(pts[at - 1], pts[at])
    for k, (x, y) in diff.items():
        lines.append(f"  differs: {k}: {x or '-'} -> {y or '-'}")
    line, why = bisect_line(s, pts[at - 1], pts[at], worse)
    if line:
        lines.append(f"  to find the cause ({why}):")
        lines.append(f"    {line}")
    else:
        lines.append(f"  no bisect: {why}")
    return lines


def format_drift(a: Analysis, params: Params, number: int) -> list[str]:
    s, d = a.series, a.drift
    assert d is not None
    m = s.info
    rel = d.relative_per_point
    lo, hi = (x / abs(d.start_value) for x in d.slope_interval)
    worse = (d.slope < 0) == m.higher_is_better
    return [f"drift {number}: {s.label} [{m.shown_unit}], fingerprint {s.fingerprint[:12]}",
            f"  {_pct(rel)} per point ({params.judgement.for_metric(m).word(not worse)}; 95% "
            f"interval {_pct(lo)}..{_pct(hi)}; slope p={d.p:.2g}) over {len(s.points)} points, "
            f"{s.points[0].time} .. {s.points[-1].time}: from {fmt(d.start_value * m.scale)} to "
            f"{fmt(d.end_value * m.scale)} ({_pct(d.end_value / d.start_value - 1)})",
            "  a gradual change has no single point to bisect: compare the first and the last "
            "points' attributes (kvb history), or bisect between them if one thing changed"]


@dataclass(frozen=True)
class TrendRequest:
    """kvb trend's arguments as values: the series, and the change detection's parameters (its
    judgement: --pvalue as alpha, --min-magnitude as threshold)."""
    selection: Selection
    params: Params
    last: int | None
    fail_on_change: bool

    @staticmethod
    def of(args: argparse.Namespace) -> "TrendRequest":
        return TrendRequest(Selection.of(args), Params(
            args.window, stats.Judgement(args.min_magnitude, args.pvalue), args.min_size),
            args.last, args.fail_on_change)


def cmd(req: TrendRequest) -> int:
    params = req.params
    if params.min_size < 2:
        raise UsageError("--min-size must be at least 2: a t-test needs two points a side")
    if params.window < 2 * params.min_size:
        raise UsageError(f"--window must be at least twice --min-size ({2 * params.min_size})")
    where, series = req.selection.series()
    lines: list[str] = []
    found = 0
    short = 0
    for s in series:
        if len(s.points) < 2 * params.min_size:
            short += 1
            continue
        a = analyse(s, params)
        last = len(s.points) - (req.last or len(s.points))
        for c in a.changes:
            if c.index >= last:
                found += 1
                lines += [""] + format_change(a, c, params, found)
        if a.drift is not None:
            found += 1
            lines += [""] + format_drift(a, params, found)
    head = (f"kvb trend: {len(series)} series in {where}; E-divisive means with Hunter's t-test, "
            f"window {params.window}, p < {params.judgement.alpha:g}, at least "
            f"{params.min_size} points a side"
            + (f", magnitude >= {params.judgement.threshold * 100:g}%"
               if params.judgement.threshold else "")
            + (f"; only changes in the last {req.last} points" if req.last else ""))
    print(head)
    if short:
        print(f"{short} series with fewer than {2 * params.min_size} points: too short to test, "
              "undecided")
    tested = len(series) - short
    print("\n".join(lines[1:] if lines and not lines[0] else lines) if lines else
          f"no change found in the {tested} series long enough to test" if tested else
          "no series is long enough to test: undecided")
    if found:
        print(f"\n{found} change(s) found", file=sys.stderr)
    elif short:
        print(f"\nundecided: {short} series too short to test", file=sys.stderr)
    if not req.fail_on_change:
        return EXIT_OK
    return EXIT_CHANGED if found else EXIT_UNDECIDED if short else EXIT_OK


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return cmd(TrendRequest.of(args))
