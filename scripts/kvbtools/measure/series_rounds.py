"""The rounds of kvb matrix --presets and kvb versions: every series once a round, back to back,
the order rotating from round to round, each on the round's link of its build (`<build label>
seed N`; the control runs the base's binary), pinned (measure/pinning.Pin), with a canary before
and after every round (pinning.Watch). measure/round_loop.py decides what comes next: more rounds
on every link, or more links (every build relinked: KVBENCH_LAYOUT_SEEDS and its -layouts
target, which only link, RELINK_BATCH seeds at a time), and repeats a round whose canary moved.

The runs of a round that was not set apart join their series' sides (core/samples) with their
link and round, so core/levels pairs them by round: the units of the verdicts are per-round log
ratios (one link) or link pairs (several). A set-apart round's files stay in the results
directory, out of the verdicts.

A kvbench_micro round runs its benchmarks in chunks of CHUNK, every series once a chunk (each a
process of its own, `<series>.r<round>.c<chunk>.json`): the two runs of a benchmark that a ratio
pairs are then about a second apart, not a whole run of the suite (5-10 s for the 25 default
benchmarks), so a neighbour that comes and goes every 20 s falls between them about one time in
twenty rather than one in four. Instruction counts (exact) run the suite in one process.
"""
from __future__ import annotations

import dataclasses
import os
import re
import time
from dataclasses import dataclass

from kvbtools.core import levels, results
from kvbtools.core.samples import Side, add_document
from kvbtools.measure import pinning, round_loop, runner
from kvbtools.measure.runner import Build, Plan, Series, progress

# Seeds one relink of a build adds: each relink runs CMake (seconds under load) before it links,
# so a few seeds at once cost little more than one.
RELINK_BATCH = 4
# Seconds a relink of one build is taken to cost before one was measured.
RELINK_GUESS = 30.0
# Benchmarks a kvbench_micro run of a round holds (the module doc): a fraction of a second to a
# second of measuring (--min-time 0.02 to 0.1), where starting a process costs 0.05 s here.
CHUNK = 5


@dataclass(frozen=True)
class Run:
    """One run's file and where it was measured."""
    path: str
    series: str
    link: str                   # "<build label> seed N"
    round: int


def distinct_builds(series: list[Series]) -> list[Build]:
    """The builds of the series, each once (the control shares the base's), in order."""
    builds: list[Build] = []
    for s in series:
        if s.build not in builds:
            builds.append(s.build)
    return builds


def link_name(build: Build, seed: int) -> str:
    return f"{build.label} seed {seed}"


class SeriesRounds(round_loop.Loop):
    """The rounds of one comparison of builds (see the module doc)."""

    def __init__(self, series: list[Series], plan: Plan, budget: round_loop.Budget,
                 outdir: str, pin: pinning.Pin, watch: pinning.Watch) -> None:
        super().__init__(budget, progress)
        self.series = series
        self.plan = dataclasses.replace(plan, extra=[*plan.extra, *pin.flag()])
        self.outdir = outdir
        self.watch = watch
        self.builds = distinct_builds(series)
        self.sides = [Side(s.label) for s in series]
        self.runs: list[Run] = []
        self.notes: dict[int, str] = {}         # set-apart rounds: why
        self.relinks: list[float] = []          # seconds, per build relinked
        self._names: dict[str, list[str]] = {}  # build label -> its micro benchmarks
        self._chunks: list[list[str] | None] | None = None

    # ---- round_loop's hooks ---------------------------------------------------------------------

    def relink_to(self, k: int) -> None:
        """Every build has links 0..k-1 (a prebuilt binary is one link: never relinked)."""
        for b in self.builds:
            if b.prebuilt or b.layouts >= k:
                continue
            b.layouts = max(k, b.layouts + RELINK_BATCH)
            t = time.monotonic()
            runner.relink(b, self.plan.micro)
            self.relinks.append(time.monotonic() - t)

    def relink_estimate(self) -> float:
        return sum(self.relinks) / len(self.relinks) if self.relinks else RELINK_GUESS

    def link_cost(self) -> float:
        lacking = sum(1 for b in self.builds if not b.prebuilt and b.layouts <= self.links)
        if any(b.prebuilt for b in self.builds):
            return float("inf")
        return lacking * self.relink_estimate() / RELINK_BATCH

    def links_cost(self, add: int) -> float:
        need = self.links + add
        relinks = sum(1 for b in self.builds if not b.prebuilt and b.layouts < need)
        return relinks * self.relink_estimate()

    def name(self) -> str:
        return "rounds"

    def round_done(self, r: int, seed: int) -> str:
        n = sum(1 for x in self.runs if x.round == r)
        return f"round {r} done ({n} run{'s' if n != 1 else ''}, layout seed {seed})"

    def measure_round(self, r: int, seed: int) -> str:
        """Round r on link `seed` between its canaries; its runs join the sides unless a
        canary moved ('' or why)."""
        before = self.watch.before(r)
        got: list[tuple[int, Run]] = []
        try:
            self.run_round(r, seed, got)
        finally:
            runner.end_status()
        after = self.watch.after(r)
        self.runs += [x for _, x in got]
        note = before or after
        if note:
            self.notes[r] = note
            return note
        for i, x in got:
            add_document(self.sides[i], results.load(x.path),
                         levels.Where(x.link, x.path, x.round))
        return ""

    def run_round(self, r: int, seed: int, got: list[tuple[int, Run]]) -> None:
        """The runs of round r on link `seed`, chunk by chunk, each series once a chunk;
        appends (series index, run) to `got`. Each run is a status line (runner.status: one
        line rewritten on a terminal; round_loop's line per round elsewhere)."""
        order = self.order(r)
        chunks = self.chunks()
        for c, chunk in enumerate(chunks, 1):
            for i, (s, engine) in enumerate(order, 1):
                name = re.sub(r"[^A-Za-z0-9._+-]+", "_", s.label)
                out = os.path.join(self.outdir, f"{name}{'.' + engine if engine else ''}.r{r}"
                                   + (f".c{c}" if len(chunks) > 1 else "") + ".json")
                links = s.build.binaries(self.plan.micro)   # one when prebuilt: seed 0 always
                binary = links[seed % len(links)]
                plan = self.plan
                if chunk is not None:
                    mine = [n for n in chunk if n in self.names(s.build)]
                    if not mine:
                        continue
                    plan = dataclasses.replace(plan, micro_filter=runner.exact_filter(mine))
                runner.status(f"round {r}, run {i}/{len(order)}: {s.label}"
                              + (f", engine {engine}" if engine else "")
                              + (f", benchmarks {c}/{len(chunks)}" if len(chunks) > 1 else "")
                              + f" (seed {seed})")
                runner.run_once(binary, plan, out, engine, s.args)
                got.append((self.series.index(s),
                            Run(out, s.label, link_name(s.build, seed % len(links)), r)))

    def names(self, build: Build) -> list[str]:
        """The benchmarks the plan's filter selects in a build (listed once, by its first
        link: its links differ only in placement)."""
        if build.label not in self._names:
            self._names[build.label] = runner.micro_names(build.binaries(True)[0], self.plan)
        return self._names[build.label]

    def chunks(self) -> list[list[str] | None]:
        """The benchmarks of a round in chunks of CHUNK (the module doc), every build's in the
        base's order first; [None] (one run of the whole filter) for kvbench runs and
        instruction counts."""
        if not self.plan.micro or self.plan.instructions:
            return [None]
        if self._chunks is None:
            names: list[str] = []
            for s in self.series:
                names += [n for n in self.names(s.build) if n not in names]
            self._chunks = [names[i:i + CHUNK] for i in range(0, len(names), CHUNK)] or [None]
        return self._chunks

    def order(self, r: int) -> list[tuple[Series, str]]:
        """Round r's runs: every series (every engine of each), rotated by one a round."""
        k = (r - 1) % len(self.series)
        rotated = self.series[k:] + self.series[:k]
        return [(s, e) for _, s, e in runner.run_order(rotated, self.plan, 1)]

    # ---- what it measured -----------------------------------------------------------------------

    def kept(self) -> list[Run]:
        return [x for x in self.runs if x.round not in self.notes]

    def links_measured(self) -> int:
        return len({x.link.rsplit(" seed ", 1)[1] for x in self.kept()}) or self.links
