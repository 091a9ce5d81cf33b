"""kvb matrix --presets and kvb versions as one operation: build every distinct build (a build
that fails is skipped, unless it is the base's), check the plan against each binary, choose the
CPU every run is pinned to, measure the series in rounds (measure/series_rounds.py on
round_loop's loop: links and rounds added where the variance is, a canary around every round)
until every row is resolved or the budget is spent, and judge every row on core/levels' unit
(comparison.build: paired rounds, or link pairs with several links; the control, the base
measured again in the same rounds with the same binaries, is the A/A). The result is a
SeriesOutcome; commands/series_report.py prints it, writes the results directory, stores the runs
and gates.

A row is resolved when the interval of its verdict is narrower than the threshold (hi / lo - 1 <
threshold): its width only, never where it lies or a p-value, so looking after every round does
not make differences appear; the width depends on the noise and the units, not on the sign or
size of the difference (docs/compare.md, Adaptive rounds).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvbtools.core import comparison, host, levels, stats
from kvbtools.core.errors import RunError
from kvbtools.measure import pinning, placement, round_loop, rounds, runner
from kvbtools.measure.runner import BuildError, Plan, Series, progress
from kvbtools.measure.series_rounds import Run, SeriesRounds, distinct_builds

# A row: (metric key, benchmark, side label).
Key = tuple[str, str, str]

CONTROL = "control"     # the base measured again (commands/series_report.py adds it)


@dataclass(frozen=True)
class Judging:
    """How the rows are judged."""
    judgement: stats.Judgement
    metrics: tuple[str, ...]       # () = the headline ones
    bench_filter: str | None       # KV runs: only the rows that match


@dataclass(frozen=True)
class Spending:
    """How the rounds are spent: the links every build starts with, the budget of --repeats,
    --max-rounds and --max-time, and --cpu."""
    links: int
    budget: rounds.Budget
    cpu: str


@dataclass
class Cost:
    """What the decision cost."""
    links: int                  # links measured
    rounds: int                 # rounds run, those set apart included
    set_apart: int
    runs: int
    measuring: float            # seconds in rounds, canaries included
    relinking: float
    canary: float               # of measuring: the canaries
    building: float             # the builds of this invocation
    budget: float               # seconds of measuring and relinking allowed
    max_rounds: int
    settled: bool
    why: str                    # round_loop: settled, max rounds, max time

    @property
    def per_link(self) -> float:
        return round((self.rounds - self.set_apart) / max(1, self.links), 2)

    def text(self, unresolved: int) -> str:
        """'decided after 8 links x 3 rounds (24 rounds, 72 runs), 95 s measuring + 40 s
        relinking; builds took 210 s (budget 210 s)'."""
        apart = f", {self.set_apart} set apart by the canary" if self.set_apart else ""
        text = (f"after {self.links} link{'s' if self.links != 1 else ''} x {self.per_link:g} "
                f"round{'s' if self.per_link != 1 else ''} ({self.rounds} rounds{apart}, "
                f"{self.runs} runs), {self.measuring:.0f} s measuring + {self.relinking:.0f} s "
                f"relinking; builds took {self.building:.0f} s (budget {self.budget:.0f} s)")
        if self.settled:
            return "decided " + text
        spent = "the time budget ran out" if self.why == "max time" else \
            f"--max-rounds {self.max_rounds} reached"
        return f"stopped {text}: {spent} with {unresolved} row(s) unresolved"

    def to_json(self) -> dict[str, Any]:
        return {"links": self.links, "rounds": self.rounds, "rounds_per_link": self.per_link,
                "set_apart": self.set_apart, "runs": self.runs,
                "measuring_seconds": round(self.measuring, 3),
                "relinking_seconds": round(self.relinking, 3),
                "canary_seconds": round(self.canary, 3),
                "build_seconds": round(self.building, 3), "budget_seconds": round(self.budget, 3),
                "max_rounds": self.max_rounds, "settled": self.settled, "stopped_by": self.why}


@dataclass
class SeriesOutcome:
    """What a series run measured and decided."""
    comparison: comparison.Comparison
    resolved: dict[Key, bool]         # each row: its interval narrower than the threshold
    cost: Cost
    build_seconds: dict[str, float]   # by build label, the builds that built
    failed: list[str]                 # the labels of the builds that did not
    pin: pinning.Pin
    set_apart: dict[int, str]         # round -> why (its canary)
    runs: list[Run]                   # every run, set apart or not

    def unresolved(self) -> int:
        return sum(1 for v in self.resolved.values() if not v)


def run(kind: str, series: list[Series], plan: Plan, judging: Judging, spending: Spending,
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
    pin = choose_pin(series, plan, spending.cpu)
    progress(f"cpu: {pin.text}")
    building = sum(build_seconds.values())
    b = spending.budget
    budget = round_loop.Budget(spending.links, round_loop.first_rounds(spending.links, b.first),
                               b.max_rounds, round_loop.seconds(b.max_seconds, building),
                               spending.links > 1)
    loop = SeriesRounds(series, plan, budget, outdir, pin, pinning.Watch(pin))
    try:
        c, resolved, settled, why = measure(loop, judging)
    except BuildError as e:
        raise RunError(f"a run or a relink failed: {e}") from None
    cost = Cost(loop.links_measured(), loop.r, len(loop.notes), len(loop.runs), loop.measuring,
                loop.linking, loop.watch.seconds, building, budget.seconds, budget.max_rounds,
                settled, why)
    return SeriesOutcome(c, resolved, cost, build_seconds, failed, pin, dict(loop.notes),
                         list(loop.runs))


def choose_pin(series: list[Series], plan: Plan, cpu: str) -> pinning.Pin:
    """The CPU(s) of every run and the canary: the base's own binary when it has --canary,
    else this tree's kvbench build. The canary is read by its wall clock: a thread taking turns
    on the CPU slows KV runs (wall time) and micro runs too (an A/A --micro matrix beside a busy
    loop that came and went read 0.83-1.02 with the best window watched)."""
    if plan.instructions:
        return pinning.Pin((), "", "not pinned: instruction counts (--instructions) do not "
                                   "depend on the CPU or its speed; no canary")
    host_kvbench = f"{host.ROOT}/build/{host.native_preset()}/src/kvbench"
    candidates = [series[0].build.binaries(plan.micro)[0], host_kvbench]
    threads, writer = (1, False) if plan.micro else pinning.kv_threads(plan.workloads,
                                                                        plan.extra)
    shown = f"{threads} worker{'s' if threads != 1 else ''}" + (" and the writer" if writer
                                                                else "")
    return pinning.choose_pin(cpu, threads + writer, candidates, shown, by_wall=True)


def measure(loop: SeriesRounds, judging: Judging
            ) -> tuple[comparison.Comparison, dict[Key, bool], bool, str]:
    """The loop until every row is resolved or the budget is spent; the comparison of the runs
    kept, each row's resolution, whether it settled and why it stopped."""
    latest: dict[str, Any] = {}

    def judge() -> tuple[comparison.Comparison, dict[Key, bool]] | None:
        if not all(s.paths for s in loop.sides):   # every round so far set apart
            return None
        c = comparison.build(loop.sides, judging.judgement,
                             metric_keys=list(judging.metrics) or None,
                             bench_filter=None if loop.plan.micro else judging.bench_filter)
        got = (c, resolution(c, judging.judgement.threshold))
        latest["judged"] = got
        return got

    def settled() -> bool:
        got = judge()
        if got is None:
            return False
        left = [k for k, ok in got[1].items() if not ok]
        if left:
            progress(f"after round {loop.r}: {len(left)} row(s) unresolved, e.g. "
                     f"{' '.join(left[0])}")
        return not left

    def rows() -> list[levels.Components]:
        got = latest.get("judged")
        return unresolved_components(got[0], got[1]) if got else []

    ok, why = loop.loop(settled, rows)
    got = judge()
    if got is None:
        raise RunError("every round was set apart by its canary: nothing to judge")
    return got[0], got[1], ok, why


def resolution(c: comparison.Comparison, threshold: float) -> dict[Key, bool]:
    """Each row resolved when its verdict's interval is narrower than the threshold."""
    return {(x.metric.key, x.bench, x.side): x.verdict.interval is not None
            and x.verdict.interval.width < threshold for x in c.cells}


def unresolved_components(c: comparison.Comparison, resolved: dict[Key, bool]
                          ) -> list[levels.Components]:
    """The variance components of every unresolved row (round_loop's allocation)."""
    base = c.sides[0]
    sides = {s.label: s for s in c.sides}
    out = []
    for x in c.cells:
        if resolved.get((x.metric.key, x.bench, x.side), True):
            continue
        key = (x.bench, x.metric.key)
        got = levels.components(base.sample(key), sides[x.side].sample(key))
        if got is not None:
            out.append(got)
    return out


def placement_lines(c: comparison.Comparison) -> list[str]:
    """'<benchmark> <metric>: placement: +-x% over K links': the spread of per-link medians
    within a build, pooled over the builds (the control left out: it runs the base's links)."""
    out = []
    for mkey, names in c.benches.items():
        for bench in names:
            got = [s.sample((bench, mkey)) for s in c.sides
                   if s.label != CONTROL and (bench, mkey) in s.values]
            out.append(f"{bench} {c.metrics[mkey].path}: " + placement.spread_text(got))
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
