"""kvb bisect's series on the engine (docs/kvbtools.md, The engine): its commits (old and new;
and the commit under test, or the culprit and its parent) are the variants of one plan, run by
the one loop as kvb matrix's builds are. Its parts: Commits (the Builder: relinks in the
workspace), CommitRunner (the Runner: `runs/<series>.<commit>.r<round>.json`) and Values (the
Judge: the watched metric's values by commit, with each value's link and round; the rounds set
apart stay in the record, out of the verdicts). A failure of a commit under test (a step's
candidates) is CommitCannotRun naming it (the step skips it, as git bisect does); of any other
commit a RunError.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Collection, Sequence

from kvbtools.core import host, levels
from kvbtools.core.errors import RunError
from kvbtools.core.host import ROOT
from kvbtools.measure import pinning
from kvbtools.measure.bisect.records import Measured
from kvbtools.measure.bisect.state import GenericMode, KvbenchMode
from kvbtools.measure.bisect.trees import RELINK_BATCH, Workspace
from kvbtools.measure.plan import Measurement, Plan
from kvbtools.measure.runner import BuildError


def choose_pin(ws: Workspace, cpu: str, given: str) -> pinning.Pin:
    """The bisect's CPU and its canary (pinning.choose_pin; `given` says why `cpu`): the binary
    it measures (its first built commit's, which has --canary), else this tree's kvbench build
    (a generic bisect's command is the user's). A bisect of kvbench's KV workloads reads the
    canary by its wall clock (their rates are wall time); micro and generic bisects by its best
    window (their lz4 runs were measured so); kvb matrix reads the wall clock for all."""
    candidates = [ws.canary_binary(),
                  os.path.join(ROOT, "build", host.native_preset(), "src", "kvbench")]
    by_wall = isinstance(ws.mode, KvbenchMode) and not ws.mode.plan.micro
    return pinning.choose_pin(cpu, 1, candidates, by_wall=by_wall, given=given,
                              measured="the measure command is the user's"
                              if isinstance(ws.mode, GenericMode) else "")


class CommitCannotRun(Exception):
    """A commit under test built but its measurement (or a relink) failed: skip it, as git
    bisect does."""

    def __init__(self, sha: str, why: str) -> None:
        super().__init__(why)
        self.sha = sha


def _failed(sha: str, under_test: Sequence[str], e: BuildError,
            seed: int | None = None) -> Exception:
    """A failed run (or relink of `seed`): a commit under test cannot run; any other commit
    ran before, so the bisect cannot go on."""
    if sha in under_test:
        return CommitCannotRun(sha, str(e) if seed is None else f"relinking seed {seed}: {e}")
    return RunError(f"{sha[:12]} ran before but fails now: {e}" if seed is None else
                    f"{sha[:12]} built before but its link {seed} fails: {e}")


class Commits:
    """The engine's Builder: the workspace's commits (generic mode: a build command a link;
    kvbench mode: RELINK_BATCH links a relink)."""

    def __init__(self, ws: Workspace, generic: bool, under_test: Sequence[str]) -> None:
        self.ws, self.under_test = ws, under_test
        self.batch = 1 if generic else RELINK_BATCH
        self.guess = 2.0 if generic else 40.0

    def links(self, build: str) -> int:
        return self.ws.links(build)

    def relink(self, build: str, links: int) -> int:
        n = 0
        while self.ws.links(build) < links:
            seed = self.ws.links(build)
            try:
                self.ws.relink(build, seed)
            except BuildError as e:
                raise _failed(build, self.under_test, e, seed) from None
            n += 1
        return n


class CommitRunner:
    """The engine's Runner: every commit of the round, pinned to the plan's CPU; portable
    (measure/fleet.py): a Slurm job runs it on its node, from the workspace's JSON."""
    kind = "commits"
    errors: tuple[type[Exception], ...] = (CommitCannotRun, RunError)

    def __init__(self, ws: Workspace, runs_dir: str, under_test: Sequence[str]) -> None:
        self.ws, self.runs_dir, self.under_test = ws, runs_dir, under_test

    def to_json(self) -> dict[str, Any]:
        return {"workspace": self.ws.to_json(), "runs_dir": self.runs_dir,
                "under_test": self.under_test}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "CommitRunner":
        return CommitRunner(Workspace.from_json(d["workspace"]), d["runs_dir"], d["under_test"])

    def pin(self, plan: Plan, cpu: str) -> pinning.Pin:
        """The CPU and the canary where the runs run (choose_pin; --cpu `cpu`)."""
        return choose_pin(self.ws, cpu, "--cpu")

    def round(self, plan: Plan, r: int, seed: int) -> list[Measurement]:
        got = []
        self.ws.cpu = plan.pin.cpus[0] if plan.pin.cpus else None
        for v in plan.order(r):
            out = os.path.join(self.runs_dir, f"{plan.name.replace(' ', '')}.{v.build[:12]}"
                                              f".r{r}.json")
            try:
                self.ws.run(v.build, out, seed)
            except BuildError as e:
                raise _failed(v.build, self.under_test, e) from None
            got.append(Measurement(out, v.label, v.build, seed, r, plan.pin.cpus))
        return got


class Values:
    """The engine's Judge: the watched values by commit (`pick` reads a run's), judged by the
    role -> commit map `roles` with `settled` and `rows` (components of the comparisons), after
    the values of `prior` (a series measured on: its rounds first)."""

    def __init__(self, roles: dict[str, str], pick: Callable[[str, str], list[float]],
                 settled: Callable[[Measured], bool],
                 rows: Callable[[Measured], Sequence[levels.Components]],
                 prior: Measured | None = None) -> None:
        self.roles, self.pick, self._settled, self._rows = roles, pick, settled, rows
        self.prior = prior
        shas = list(dict.fromkeys(roles.values()))
        self.values: dict[str, list[float]] = {s: [] for s in shas}
        self.seeds: dict[str, list[int]] = {s: [] for s in shas}
        self.rounds: dict[str, list[int]] = {s: [] for s in shas}
        self.disturbed: list[int] = []

    def add(self, got: Sequence[Measurement], set_apart: Collection[int]) -> None:
        self.disturbed += sorted(set(set_apart) - set(self.disturbed))
        for m in got:
            vals = self.pick(m.path, m.build[:12])
            self.values[m.build] += vals
            self.seeds[m.build] += [m.link] * len(vals)
            self.rounds[m.build] += [m.round] * len(vals)

    def measured(self) -> Measured:
        """The values so far, by role (after the prior series')."""
        got = Measured({k: list(self.values[s]) for k, s in self.roles.items()},
                       {k: list(self.seeds[s]) for k, s in self.roles.items()},
                       {k: list(self.rounds[s]) for k, s in self.roles.items()},
                       list(self.disturbed))
        return self.prior.joined(got) if self.prior is not None else got

    def settled(self) -> bool:
        return self._settled(self.measured())

    def rows(self) -> Sequence[levels.Components]:
        return self._rows(self.measured())
