"""The engine's seams (docs/kvbtools.md, The engine): the Executor runs a Block of a plan's
rounds and returns a BlockResult (the Measurements, the rounds set apart and why), the Runner runs
one round's variants, the Builder adds links. LocalExecutor runs here, every round between two
readings of the canary on the plan's CPU (pinning.Watch, the one canary of every comparison).
measure/fleet.py's SlurmExecutor sends Plan.to_json and each part of the Block to a Slurm job on
a node of its own, where the worker runs the same Runner with a LocalExecutor, pinned with its
canary; it returns Measurements with their host, and sets the rounds of a lost job apart ("lost:
job J on NODE: STATE") for the loop to run again on their links.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from kvbtools.measure import pinning
from kvbtools.measure.plan import Block, Measurement, Plan


@dataclass
class BlockResult:
    """What an executor measured of a block."""
    measurements: list[Measurement] = field(default_factory=list)
    set_apart: dict[int, str] = field(default_factory=dict)   # round -> why
    seconds: dict[int, float] = field(default_factory=dict)   # round -> seconds, canary included
    canary: float = 0.0                                       # of those seconds: the canaries
    wall: float = 0.0         # seconds the block took here, when its parts ran side by side
                              # (0: the sum of its rounds' seconds)
    lost: set[int] = field(default_factory=set)   # of set_apart: the rounds of lost jobs


class Runner(Protocol):
    """Runs the variants of one round of a plan (kvb matrix's presets, a bisect's commits)."""

    def round(self, plan: Plan, r: int, seed: int) -> list[Measurement]:
        """Round r on link `seed`: every variant once, in plan.order(r), each run's JSON
        written; its runs. A failed run raises (runner.BuildError or the caller's own)."""
        ...


class Builder(Protocol):
    """Builds' links: how many a build has, and more by relinking its objects."""
    batch: int                  # links one relink of a build adds
    guess: float                # seconds a relink is taken to cost before one was measured

    def links(self, build: str) -> int:
        """The links (seeds 0..n-1) the build has."""
        ...

    def relink(self, build: str, links: int) -> int:
        """Relinks the build to at least `links` links; the relinks it took."""
        ...


class Executor(Protocol):
    hosts: int      # hosts that measure side by side: each step's rounds go to every one of
                    # them, a part of the Block each (1: here)
    batched: bool   # a step's rounds go as one Block (a job costs seconds to start); False: a
                    # Block a round, the budget looked at before each

    def run(self, plan: Plan, block: Block) -> BlockResult:
        """The block's rounds, in its order (each part on a host of its own; a part of a plan
        in groups runs its group's variants: Block.plans)."""
        ...


class LocalExecutor:
    """Runs blocks here (the module doc); `watch` reads the canary of every round."""
    hosts = 1
    batched = False

    def __init__(self, runner: Runner, watch: pinning.Watch,
                 clock: Callable[[], float] | None = None) -> None:
        self.runner, self.watch, self.clock = runner, watch, clock

    def run(self, plan: Plan, block: Block) -> BlockResult:
        out = BlockResult()
        clock = self.clock or time.monotonic
        for part_plan, part in block.plans(plan):
            for r, seed in part:
                t0, c0 = clock(), self.watch.seconds
                before = self.watch.before(r)
                out.measurements += self.runner.round(part_plan, r, seed)
                after = self.watch.after(r)
                if before or after:
                    out.set_apart[r] = before or after
                out.seconds[r] = clock() - t0
                out.canary += self.watch.seconds - c0
        return out
