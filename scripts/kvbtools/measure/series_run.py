"""kvb matrix --presets and kvb versions as one plan on the engine (docs/kvbtools.md, The
engine): every build built (one that fails is skipped, unless it is the base's) and checked, the
CPU chosen, then one loop of the builds and the control (the base again, the A/A) until every
row is resolved (its interval narrower than the threshold: its width only, never where it lies,
docs/compare.md) or the budget is spent. Its parts: Relinks (the Builder), SeriesRunner (the
Runner; kvbench_micro in chunks of CHUNK benchmarks, every variant once a chunk, so a ratio's two
runs are about a second apart and a neighbour that comes every 20 s falls between them one time
in twenty, not one in four) and TableJudge (the Judge). commands/series_report.py prints the
SeriesOutcome, writes the results directory, stores the runs and gates.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Collection, Sequence

from kvbtools.core import comparison, host, levels, output, results, stats
from kvbtools.core.errors import RunError
from kvbtools.core.samples import Side, add_document
from kvbtools.measure import fleet, loop, pinning, runner
from kvbtools.measure.executor import Executor, LocalExecutor
from kvbtools.measure.plan import Budget, Measurement, Plan, Variant
from kvbtools.measure.runner import Build, BuildError, Workload
from kvbtools.core.output import progress
from kvbtools.measure.spent import Spent

# A row: (metric key, benchmark, side label).
Key = tuple[str, str, str]

CONTROL = "control"     # the base measured again (commands/series_report.py adds it)
# Seeds one relink of a build adds: each relink runs CMake (seconds under load) before it links,
# so a few seeds at once cost little more than one.
RELINK_BATCH = 4
# Seconds a relink of one build is taken to cost before one was measured.
RELINK_GUESS = 30.0
# Benchmarks a kvbench_micro process of a round holds (the module doc): a fraction of a second
# to a second of measuring (--min-time 0.02 to 0.1), where starting a process costs 0.05 s here.
CHUNK = 5


@dataclass(frozen=True)
class Judging:
    """How the rows are judged."""
    judgement: stats.Judgement
    metrics: tuple[str, ...]       # () = the headline ones
    bench_filter: str | None       # KV runs: only the rows that match


@dataclass
class SeriesOutcome:
    """What a series run measured and decided."""
    comparison: comparison.Comparison
    resolved: dict[Key, bool]         # each row: its interval narrower than the threshold
    spent: Spent
    build_seconds: dict[str, float]   # by build label, the builds that built
    failed: list[str]                 # the labels of the builds that did not
    pin: pinning.Pin
    set_apart: dict[int, str]         # round -> why (its canary)
    runs: list[Measurement]           # every run, set apart or not
    plan: Plan                        # what the loop measured
    hosts: dict[str, str] = dataclasses.field(default_factory=dict)  # node -> its CPU model

    def unresolved(self) -> int:
        return sum(1 for v in self.resolved.values() if not v)


def run(kind: str, builds: list[Build], variants: list[Variant], work: Workload,
        judging: Judging, budget: Budget, cpu: str, outdir: str,
        on: fleet.Fleet | None = None) -> SeriesOutcome:
    """Builds, checks and measures the variants (runs in `outdir`; every build starts with its
    `layouts` links), here or on the Slurm cluster `on` (builds and rounds as jobs,
    measure/fleet.py); `kind` (matrix, versions) names the command in its messages. RunError
    when the base's build or a run fails."""
    build_seconds, failed = build_all(builds, work.micro, on)
    variants = [v for v in variants if v.build not in failed]
    if not variants or variants[0].build in failed:
        raise RunError(f"{kind}: the first build failed; nothing to compare against")
    built = {b.label: b for b in builds if b.label not in failed}
    for b in built.values():   # another architecture's binary is checked by its runs, there
        if on is None or fleet.arch(b.preset) == host.host_arch():
            runner.check_plan(b.binary(work.micro), work)
    series = SeriesRunner(built, work, outdir)
    base = built[variants[0].build]
    if on is None:
        pin = choose_pin(base, work, cpu)
        progress(f"cpu: {pin.text}")
        executor: Executor = LocalExecutor(series, pinning.Watch(pin))
    else:
        executor = fleet.SlurmExecutor(on, series, cpu, fleet.arch(base.preset),
                                       os.path.join(outdir, "fleet"))
        pin = pinning.Pin((), "", f"chosen on each node (--cpu {cpu})")
        progress(f"measuring on {executor.hosts} node(s) of partition {on.config.partition}, "
                 f"each measuring every build in rounds of its own: {', '.join(executor.nodes)}")
    plan = Plan("", tuple(variants), base.layouts, budget, pin, sum(build_seconds.values()),
                len(build_seconds))
    judge = TableJudge(plan, judging, work.micro)
    try:
        out = loop.Loop(plan, executor, Relinks(built, work.micro, on), judge, progress).run()
    except BuildError as e:
        raise RunError(f"a run or a relink failed: {e}") from None
    if on is not None:
        pin = pinning.Pin((), "", on.pin_text(), chosen="on each node")
    got = judge.judge()
    if got is None:
        raise RunError("every round was set apart (its canary, or its job lost): nothing to "
                       "judge")
    return SeriesOutcome(*got, out.spent, build_seconds, failed, pin, out.set_apart,
                         out.measurements, plan, {n: x.get("cpu_model", "") for n, x in
                                                  (on.nodes if on else {}).items()})


def build_all(builds: list[Build], micro: bool, on: fleet.Fleet | None
              ) -> tuple[dict[str, float], list[str]]:
    """Every build built (here one after the other; on a cluster as build jobs side by side):
    the seconds each took, and the labels of those that failed (they are skipped)."""
    def one(i: int, b: Build) -> float:
        step = f"[{i}/{len(builds)}] "
        if on is None:
            return runner.do_build(b, micro, step)
        return runner.do_build(b, micro, step,
                               wrap=on.build_wrap(fleet.arch(b.preset), b.dir, b.label))
    build_seconds: dict[str, float] = {}
    failed: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(builds) if on else 1) as pool:
        done = [pool.submit(one, i, b) for i, b in enumerate(builds, 1)]
        for b, f in zip(builds, done):
            try:
                build_seconds[b.label] = f.result()
                progress(f"built {b.label} in {build_seconds[b.label]:.0f} s")
            except BuildError as e:
                progress(f"skipping {b.label}: build failed: {e}")
                failed.append(b.label)
    return build_seconds, failed


def choose_pin(base: Build, work: Workload, cpu: str) -> pinning.Pin:
    """The CPU(s) of every run and the canary: the base's own binary when it has --canary,
    else this tree's kvbench build. The canary is read by its wall clock: a thread taking turns
    on the CPU slows KV runs (wall time) and micro runs too (an A/A --micro matrix beside a busy
    loop that came and went read 0.83-1.02 with the best window watched)."""
    if work.instructions:
        return pinning.Pin((), "", "not pinned: instruction counts (--instructions) do not "
                                   "depend on the CPU or its speed; no canary")
    host_kvbench = f"{host.ROOT}/build/{host.native_preset()}/src/kvbench"
    candidates = [base.binaries(work.micro)[0], host_kvbench]
    threads, writer = (1, False) if work.micro else pinning.kv_threads(work.workloads,
                                                                        work.extra)
    shown = f"{threads} worker{'s' if threads != 1 else ''}" + (" and the writer" if writer
                                                                else "")
    return pinning.choose_pin(cpu, threads + writer, candidates, shown, by_wall=True)


class Relinks:
    """The engine's Builder for kvbench builds (runner.Build, by label); on a cluster `on`, a
    relink is a build job."""
    batch = RELINK_BATCH
    guess = RELINK_GUESS

    def __init__(self, builds: dict[str, Build], micro: bool,
                 on: fleet.Fleet | None = None) -> None:
        self.builds, self.micro, self.on = builds, micro, on

    def links(self, build: str) -> int:
        return self.builds[build].layouts

    def relink(self, build: str, links: int) -> int:
        b = self.builds[build]
        b.layouts = max(links, b.layouts + self.batch)
        runner.relink(b, self.micro, self.on.build_wrap(fleet.arch(b.preset), b.dir, b.label)
                      if self.on else None)
        return 1


class SeriesRunner:
    """The engine's Runner for kvbench and kvbench_micro (the module doc), every run pinned as
    the plan's Pin says; portable (measure/fleet.py): a Slurm job runs it on its node."""
    kind = "series"
    errors: tuple[type[Exception], ...] = (BuildError, RunError)

    def __init__(self, builds: dict[str, Build], work: Workload, outdir: str) -> None:
        self.builds, self.work, self.outdir = builds, work, outdir
        self._names: dict[str, list[str]] = {}  # build label -> its micro benchmarks
        self._chunks: list[list[str] | None] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"builds": {k: dataclasses.asdict(b) for k, b in self.builds.items()},
                "work": dataclasses.asdict(self.work), "outdir": self.outdir}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "SeriesRunner":
        return SeriesRunner({k: Build(**b) for k, b in d["builds"].items()},
                            Workload(**d["work"]), d["outdir"])

    def pin(self, plan: Plan, cpu: str) -> pinning.Pin:
        """The CPU and the canary of the runs (choose_pin), chosen where they run."""
        return choose_pin(self.builds[plan.variants[0].build], self.work, cpu)

    def round(self, plan: Plan, r: int, seed: int) -> list[Measurement]:
        """Each run a status line (output.status: one line rewritten on a terminal; the
        loop's line per round elsewhere)."""
        got: list[Measurement] = []
        try:
            self._runs(plan, r, seed, got)
        finally:
            output.end_status()
        return got

    def _runs(self, plan: Plan, r: int, seed: int, got: list[Measurement]) -> None:
        chunks = self.chunks(plan)
        order = [(v, e) for v in plan.order(r) for e in runner.engines(v, self.work)]
        pinned = dataclasses.replace(self.work, extra=[*self.work.extra, *plan.pin.flag()])
        for c, chunk in enumerate(chunks, 1):
            for i, (v, engine) in enumerate(order, 1):
                links = self.builds[v.build].binaries(self.work.micro)   # one when prebuilt
                work = pinned
                if chunk is not None:
                    mine = [n for n in chunk if n in self.names(v.build)]
                    if not mine:
                        continue
                    work = dataclasses.replace(work, micro_filter=runner.exact_filter(mine))
                out = runner.run_file(self.outdir, v.label, engine, r,
                                      f".c{c}" if len(chunks) > 1 else "")
                output.status(f"round {r}, run {i}/{len(order)}: {v.label}"
                              + (f", engine {engine}" if engine else "")
                              + (f", benchmarks {c}/{len(chunks)}" if len(chunks) > 1 else "")
                              + f" (seed {seed})")
                runner.run_once(links[seed % len(links)], work, out, engine, list(v.args))
                got.append(Measurement(out, v.label, v.build, seed % len(links), r,
                                       plan.pin.cpus))

    def names(self, build: str) -> list[str]:
        """The benchmarks the filter selects in a build (listed once, by its first link: its
        links differ only in placement)."""
        if build not in self._names:
            self._names[build] = runner.micro_names(self.builds[build].binaries(True)[0],
                                                    self.work)
        return self._names[build]

    def chunks(self, plan: Plan) -> list[list[str] | None]:
        """The benchmarks of a round in chunks of CHUNK, every build's in the base's order
        first; [None] (one run of the whole filter) for kvbench runs and instruction counts."""
        if not self.work.micro or self.work.instructions:
            return [None]
        if self._chunks is None:
            names: list[str] = []
            for b in plan.build_keys():
                names += [n for n in self.names(b) if n not in names]
            self._chunks = [names[i:i + CHUNK] for i in range(0, len(names), CHUNK)] or [None]
        return self._chunks


class TableJudge:
    """The engine's Judge for the tables: every row resolved (the module doc)."""

    def __init__(self, plan: Plan, judging: Judging, micro: bool) -> None:
        self.sides = {v.label: Side(v.label) for v in plan.variants}
        self.judging, self.micro = judging, micro
        self.latest: tuple[comparison.Comparison, dict[Key, bool]] | None = None
        self.rounds = 0

    def add(self, got: Sequence[Measurement], set_apart: Collection[int]) -> None:
        for m in got:
            if m.round not in set_apart:
                add_document(self.sides[m.variant], results.load(m.path), m.where())
            self.rounds = max(self.rounds, m.round)

    def judge(self) -> tuple[comparison.Comparison, dict[Key, bool]] | None:
        """The comparison of the runs kept and each row's resolution (None: no runs kept)."""
        sides = list(self.sides.values())
        if not all(s.paths for s in sides):   # every round so far set apart
            return None
        j = self.judging
        c = comparison.build(sides, j.judgement, metric_keys=list(j.metrics) or None,
                             bench_filter=None if self.micro else j.bench_filter)
        self.latest = (c, resolution(c, j.judgement.threshold))
        return self.latest

    def settled(self) -> bool:
        got = self.judge()
        if got is None:
            return False
        left = [k for k, ok in got[1].items() if not ok]
        if left:
            progress(f"after round {self.rounds}: {len(left)} row(s) unresolved, e.g. "
                     f"{' '.join(left[0])}")
        return not left

    def rows(self) -> list[levels.Components]:
        return unresolved_components(*self.latest) if self.latest else []


def resolution(c: comparison.Comparison, threshold: float) -> dict[Key, bool]:
    """Each row resolved when its verdict's interval is narrower than the threshold."""
    return {(x.metric.key, x.bench, x.side): x.verdict.interval is not None
            and x.verdict.interval.width < threshold for x in c.cells}


def unresolved_components(c: comparison.Comparison, resolved: dict[Key, bool]
                          ) -> list[levels.Components]:
    """The variance components of every unresolved row (the loop's allocation)."""
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

