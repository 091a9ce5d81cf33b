"""kvb matrix --presets and kvb versions as one operation: build every distinct build (a build
that fails is skipped, unless it is the base's), check the plan against each binary, measure the
series in interleaved rounds until the budget says stop, and judge every row: by rounds (the U
test), or with --layouts K by placements (measure/placement.py). The result is a SeriesOutcome;
commands/series_report.py prints it, writes the results directory, stores the runs and gates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvbtools.core import comparison, stats
from kvbtools.core.errors import RunError
from kvbtools.core.samples import load_side
from kvbtools.measure import placement, rounds, runner
from kvbtools.measure.runner import Build, BuildError, Plan, Series, progress

# A row: (metric key, benchmark, side label).
Key = tuple[str, str, str]


@dataclass(frozen=True)
class Judging:
    """How the rows are judged and when the rounds stop."""
    judgement: stats.Judgement
    metrics: tuple[str, ...]       # () = the headline ones
    bench_filter: str | None       # KV runs: only the rows that match
    layouts: int                   # > 1: placements are the units of the verdicts
    until_resolved: bool           # more rounds until every row's interval is narrow enough


@dataclass
class SeriesOutcome:
    """What a series run measured and decided."""
    comparison: comparison.Comparison
    rounds: rounds.Outcome
    decisions: dict[Key, rounds.Decision]
    build_seconds: dict[str, float]   # by build label, the builds that built
    failed: list[str]                 # the labels of the builds that did not


def distinct_builds(series: list[Series]) -> list[Build]:
    """The builds of the series, each once (the control shares the base's), in order."""
    builds: list[Build] = []
    for s in series:
        if s.build not in builds:
            builds.append(s.build)
    return builds


def run(kind: str, series: list[Series], plan: Plan, judging: Judging, budget: rounds.Budget,
        outdir: str) -> SeriesOutcome:
    """Builds, checks and measures the series (runs in `outdir`); `kind` (matrix, versions)
    names the command in its messages. RunError when the base's build or a run fails."""
    builds = distinct_builds(series)
    build_seconds: dict[str, float] = {}
    failed: list[str] = []
    for i, b in enumerate(builds, 1):
        try:
            build_seconds[b.label] = runner.do_build(b, plan.micro, f"[{i}/{len(builds)}] ")
            progress(f"built {b.label} in {build_seconds[b.label]:.0f} s")
        except BuildError as e:
            progress(f"skipping {b.label}: build failed: {e}")
            failed.append(b.label)
    series = [s for s in series if s.build.label not in failed]
    if not series or series[0].build.label in failed:
        raise RunError(f"{kind}: the first build failed; nothing to compare against")
    for b in builds:
        if b.label not in failed:
            runner.check_plan(b.binary(plan.micro), plan)
    c, outcome, decisions = measure_until(series, plan, judging, budget, outdir)
    return SeriesOutcome(c, outcome, decisions, build_seconds, failed)


def measure_until(series: list[Series], plan: Plan, judging: Judging, budget: rounds.Budget,
                  outdir: str
                  ) -> tuple[comparison.Comparison, rounds.Outcome, dict[Key, rounds.Decision]]:
    """Measures budget.first rounds, then (until_resolved) more until every row is resolved
    or the budget is spent. Returns the comparison of all runs, how the rounds ended and each
    row's decision (metric, benchmark, side) -> Decision."""
    files: dict[str, list[str]] = {s.label: [] for s in series}
    of = f" (until resolved, at most {budget.max_rounds})" if judging.until_resolved \
        else f"/{budget.first}"
    latest: list[Any] = [None, {}]

    def judge() -> tuple[comparison.Comparison, dict[Key, rounds.Decision]]:
        sides = [load_side(s.label, files[s.label]) for s in series]
        c = comparison.build(sides, judging.judgement, metric_keys=list(judging.metrics) or None,
                             bench_filter=None if plan.micro else judging.bench_filter)
        if judging.layouts > 1:
            return c, placement_judgements(c, judging.layouts)
        decisions = {(x.metric.key, x.bench, x.side): rounds.decide(
            x.base, x.other, c.judgement.for_metric(x.metric)) for x in c.cells}
        return c, decisions

    def one_round(r: int) -> None:
        runner.measure_round(series, plan, r, outdir, files, of)

    def settled(r: int) -> bool:
        latest[0], latest[1] = judge()
        left = [k for k, d in latest[1].items() if not d.resolved]
        if judging.until_resolved and left:
            progress(f"after round {r}: {len(left)} row(s) unresolved, e.g. {' '.join(left[0])}")
        return not left or not judging.until_resolved

    try:
        outcome = rounds.run(budget, one_round, settled)
    except BuildError as e:
        raise RunError(f"a run failed: {e}") from None
    return latest[0], outcome, latest[1]


def placement_judgements(c: comparison.Comparison, layouts: int) -> dict[Key, rounds.Decision]:
    """--layouts K: every cell's verdict and decision with placements as the units
    (measure/placement.py), in place of the rounds' U test."""
    c.test = f"t test on per-placement medians ({layouts} links a build),"
    decisions = {}
    for x in c.cells:
        j = c.judgement.for_metric(x.metric)
        x.verdict = placement.verdict(x.base, x.other, layouts, j)
        decisions[(x.metric.key, x.bench, x.side)] = placement.decide(x.base, x.other, layouts, j)
    return decisions


def placement_lines(c: comparison.Comparison, layouts: int) -> list[str]:
    """'<benchmark> <metric>: placement: +-x% over K links', pooled over the sides."""
    out = []
    for mkey, names in c.benches.items():
        for bench in names:
            vals = [s.values[(bench, mkey)] for s in c.sides if (bench, mkey) in s.values]
            out.append(f"{bench} {c.metrics[mkey].path}: "
                       + placement.spread_text([placement.by_rounds(v, layouts) for v in vals]))
    return out


def reported_versions(ctx: dict[str, Any], dep: str) -> set[str]:
    """The versions of `dep` a run says it used: kvbench_micro's context keys, or kvbench's
    context.libraries (the shared objects actually loaded)."""
    out = set()
    for key in (f"{dep}_library_version", f"{dep}_version"):
        if isinstance(ctx.get(key), str):
            out.add(ctx[key])
    for lib in ctx.get("libraries", []) if isinstance(ctx.get("libraries"), list) else []:
        if isinstance(lib, dict) and dep in str(lib.get("name", "")).lower():
            out.add(str(lib.get("version", "")))
    engine = ctx.get("engine")
    if isinstance(engine, dict) and engine.get("name") == dep:
        out.add(str(engine.get("version", "")))
    return {v for v in out if v}


def check_library_versions(sides: list[Any],
                           expect: dict[str, list[list[str]]]) -> list[str]:
    """Messages for sides whose runs report a version of the library other than the one their
    source tree declares (e.g. CMake fell back to the system's library)."""
    out = []
    for s in sides:
        if s.label not in expect:
            continue
        for dep, version in expect[s.label]:
            seen = set().union(*(reported_versions(ctx, dep) for ctx in s.contexts))
            token = re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d.])")
            if seen and not any(token.search(v) for v in seen):
                out.append(f"{s.label}: the runs report {dep} {', '.join(sorted(seen))}, not "
                           f"{version}: the build did not use that tree")
    return out
