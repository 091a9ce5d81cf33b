"""The engine's one loop (docs/kvbtools.md, The engine): a plan's first rounds, `Budget.
rounds_per_link` on each of its links, then the step measure/allocation.py chooses from the
judge's unsettled rows and what a step costs here (a round on every link, or more links: every
build relinked by the Builder, then measured as often as the others) until the judge is settled
or the budget is spent. Rounds go to the executor as Blocks: here a round a Block; on the Slurm
executor a step's rounds at once, on each of its hosts in rounds of their own (Executor.hosts),
or for a plan in groups (Plan.groups: a bisect step's candidates on a cluster) in each group, a
group a host. A round it sets apart (its canary moved; a lost job) is named and run again on its
link (on one host; in its group), unless the plan is fixed. The budget:
Budget.max_rounds, and Plan.seconds of measuring and relinking (after the first rounds, no round
or relink starts that would end past it, by the median round so far). What it cost: a Spent.
"""
from __future__ import annotations

import collections
import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Collection, Protocol, Sequence

from kvbtools.core import levels
from kvbtools.measure import allocation
from kvbtools.measure.executor import Builder, Executor
from kvbtools.measure.plan import Block, Measurement, Plan
from kvbtools.measure.spent import Spent


class Judge(Protocol):
    """The caller's side of the loop: what the runs say so far."""

    def add(self, got: Sequence[Measurement], set_apart: Collection[int]) -> None:
        """A block's runs; those of the rounds in `set_apart` are out of the verdicts."""
        ...

    def settled(self) -> bool:
        """The judgement is made: nothing more to measure."""
        ...

    def rows(self) -> Sequence[levels.Components]:
        """The variance components of the rows not settled yet (allocation's input)."""
        ...


@dataclass
class Outcome:
    measurements: list[Measurement]   # every run, set apart or not
    set_apart: dict[int, str]         # round -> why
    spent: Spent


class Loop:
    """One plan's rounds (the module doc); `run` measures them."""

    def __init__(self, plan: Plan, executor: Executor, builder: Builder, judge: Judge,
                 say: Callable[[str], None]) -> None:
        self.plan, self.executor, self.builder, self.judge, self.say = \
            plan, executor, builder, judge, say
        self.r = 0                          # rounds run, those set apart included
        self.links = plan.links
        self.got: list[Measurement] = []
        self.set_apart: dict[int, str] = {}
        self.lost: set[int] = set()         # of those: rounds of lost jobs
        self.measuring = self.relinking = self.canary = 0.0
        self.round_times: list[float] = []
        self.relinks = 0
        self.relink_times: list[float] = []   # seconds of one relink

    def run(self) -> Outcome:
        self.ensure_links(self.links)
        why = self.run_queue(self.plan.first_rounds(), True)
        while not why:
            if self.plan.fixed:
                why = "fixed"
            elif self.judge.settled():
                why = "settled"
            else:
                why = self.next_step()
        kept = {m.link for m in self.got if m.round not in self.set_apart}
        p = self.plan
        return Outcome(self.got, self.set_apart, Spent(
            len(kept) or self.links, self.r, len(self.set_apart), len(self.got), p.builds,
            self.relinks, self.measuring, self.relinking, self.canary, p.building, p.seconds(),
            p.budget.max_rounds, why, lost=len(self.lost)))

    def ensure_links(self, k: int) -> None:
        """Every build of the plan has links 0..k-1 afterwards."""
        for key in self.plan.build_keys():
            if self.builder.links(key) < k:
                t = time.monotonic()
                n = self.builder.relink(key, k)
                dt = time.monotonic() - t
                self.relinking += dt
                self.relinks += n
                self.relink_times.append(dt / max(1, n))

    def relink_estimate(self) -> float:
        t = self.relink_times
        return sum(t) / len(t) if t else self.builder.guess

    def link_cost(self) -> float:
        """Seconds one more link costs, as allocation weighs it: a relink of every build that
        lacks it, shared by the links one relink adds."""
        lacking = sum(1 for k in self.plan.build_keys() if self.builder.links(k) <= self.links)
        return lacking * self.relink_estimate() / max(1, self.builder.batch)

    def links_cost(self, add: int) -> float:
        """Seconds the relinks for `add` more links take (whole relinks)."""
        need = self.links + add
        return self.relink_estimate() * sum(
            -(-max(0, need - self.builder.links(k)) // max(1, self.builder.batch))
            for k in self.plan.build_keys())

    def block(self, seeds: Sequence[int], parts: int = 1, groups: Sequence[int] = ()
              ) -> list[tuple[int, int]]:
        """Rounds on `seeds`, one a seed, on each of `parts` hosts; for a plan in groups, round
        i on seeds[i] in group groups[i] (a group a part: Block.groups). The (group, seed) of
        each round set apart (group -1 in a plan without groups)."""
        if groups:
            rounds = tuple((self.r + i, s) for i, s in enumerate(seeds, 1))
            blk = Block(rounds, len(set(groups)), tuple(groups))
        else:
            rounds = tuple((self.r + i, s) for i, s in enumerate(list(seeds) * parts, 1))
            blk = Block(rounds, parts)
        self.r += len(rounds)
        got = self.executor.run(self.plan, blk)
        self.got += got.measurements
        self.set_apart.update(got.set_apart)
        self.lost |= got.lost
        self.judge.add(got.measurements, got.set_apart.keys())
        self.canary += got.canary
        self.measuring += got.wall or sum(got.seconds.get(r, 0.0) for r, _ in rounds)
        named = f"{self.plan.name}: " if self.plan.name else ""
        for r, seed in rounds:
            if r not in got.lost:   # a lost job's rounds say nothing of what a round costs
                self.round_times.append(got.seconds.get(r, 0.0))
            runs = [m for m in got.measurements if m.round == r]
            on = f" on {runs[0].host}" if runs and runs[0].host else ""
            self.say(named + (got.set_apart[r] if r in got.set_apart else
                              f"round {r} done{on} ({len(runs)} run{'s' if len(runs) != 1 else ''}"
                              f", layout seed {seed})"))
        of = list(groups) or [-1] * len(rounds)
        return [(g, s) for (r, s), g in zip(rounds, of) if r in got.set_apart]

    def round_cost(self) -> float:
        return statistics.median_high(self.round_times) if self.round_times else 1.0

    def over_budget(self, cost: float) -> bool:
        return self.measuring + self.relinking + cost > self.plan.seconds()

    def run_queue(self, queue: list[int], first: bool) -> str:
        """Rounds on the seeds of `queue`, one at a time (the budget is looked at before each),
        or all at once on every host (a batched executor: Executor.hosts); one set apart again on
        its seed (on one host); '' or why it stopped (the first rounds stop only at max
        rounds). A plan in groups: run_groups."""
        if self.plan.groups:
            return self.run_groups(queue, first)
        parts = self.executor.hosts
        while queue:
            left = self.plan.budget.max_rounds - self.r
            if left <= 0:
                return "max rounds"
            take = queue[:left] if self.executor.batched else queue[:1]
            parts = max(1, min(parts, left // len(take)))
            if not first and self.over_budget(len(take) * self.round_cost()):
                return "max time"
            del queue[:len(take)]
            again = self.block(take, parts)
            if again and not self.plan.fixed:
                queue[0:0] = [s for _, s in again]
            parts = 1
        return ""

    def run_groups(self, queue: list[int], first: bool) -> str:
        """run_queue for a plan in groups (Plan.groups): each seed of `queue` in every group, a
        group a part (a host of its own), all at once on a batched executor; a round set apart
        again on its seed in its group; '' or why it stopped."""
        todo = [(g, s) for g in range(len(self.plan.groups)) for s in queue]
        while todo:
            left = self.plan.budget.max_rounds - self.r
            if left <= 0:
                return "max rounds"
            take = todo[:left] if self.executor.batched else todo[:1]
            per = collections.Counter(g for g, _ in take)   # a group's rounds, on one host
            waves = -(-len(per) // max(1, self.executor.hosts))
            if not first and self.over_budget(max(per.values()) * waves * self.round_cost()):
                return "max time"
            del todo[:len(take)]
            again = self.block([s for _, s in take], groups=[g for g, _ in take])
            if again and not self.plan.fixed:
                todo[0:0] = again
        return ""

    def next_step(self) -> str:
        """More links, when allocation chooses them and the budget affords their relinks, or
        else one more round on every link; '' or why not (the budget)."""
        if self.r >= self.plan.budget.max_rounds:
            return "max rounds"
        # rounds per link on each host, or in each group (the allocation weighs one host's
        # links: docs/fleet.md)
        rpl = max(1.0, (self.r - len(self.set_apart))
                  / (self.links * (len(self.plan.groups) or self.executor.hosts)))
        link_cost = self.link_cost() if self.plan.links > 1 else math.inf
        choice = allocation.choose(list(self.judge.rows()), self.links, rpl,
                                   allocation.Costs(self.round_cost(), link_cost))
        per = max(1, round(rpl))
        if choice.step == allocation.LINK and \
                not self.over_budget(self.links_cost(choice.links)
                                     + choice.links * per * self.round_cost()):
            add = choice.links
            self.say((f"{self.plan.name}: " if self.plan.name else "")
                     + f"{add} more link(s) ({self.links + add}): {choice.why}")
            self.ensure_links(self.links + add)
            self.links += add
            return self.run_queue([s for _ in range(per)
                                   for s in range(self.links - add, self.links)], False)
        if self.over_budget(self.links * self.round_cost()):
            return "max time"
        return self.run_queue(list(range(self.links)), False)
