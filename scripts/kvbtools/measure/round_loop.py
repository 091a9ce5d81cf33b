"""Rounds on links, grown where the variance is: the loop of kvb bisect's series and of kvb
matrix --presets and kvb versions.

A comparison of builds measures in rounds: a round runs every build once, back to back, on one
link (layout seed) of each, pinned to one CPU, so the ratio of two builds within a round cancels
the CPU and the moment they shared (core/levels.py judges rounds as blocks). The loop starts
with `links` links and `rounds_per_link` rounds on each (whole cycles of the links). Then, until
the caller's judgement is made (`settled`) or its budget is spent, it takes the step
measure/allocation.py chooses from the variance components of the caller's rows
(core/levels.components) and what each step costs here: one more round on every link, or more
links (every build relinked with the next seeds, then measured as often as the others).

A round the caller's canary says was disturbed (the CPU changed speed under it) is named, set
apart from the verdicts (`disturbed`) and repeated on the same link, within the budget.

The budget is seconds of measuring and relinking, and rounds; the first rounds always run (up to
max_rounds). A caller provides the builds' side: `relink_to` (every build has links 0..k-1),
`measure_round` (the runs of one round and its canary), `link_cost` and `links_cost`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from kvbtools.core import levels
from kvbtools.measure import allocation

# The least a comparison may measure (seconds) when its builds were quicker: two minutes give a
# kvbench_micro benchmark here (0.3-0.5 s a run under load) about 100 rounds of three builds,
# enough for 8 links x 4 rounds, where the fixed 20 rounds of before gave 9 s and no answer.
FLOOR = 120.0

# Rounds at most unless --max-rounds says: the time budget decides first.
MAX_ROUNDS = 400


@dataclass(frozen=True)
class Budget:
    links: int                  # links to start with
    rounds_per_link: int        # rounds each starts with
    max_rounds: int
    seconds: float              # measuring (canaries included) and relinking
    add_links: bool             # links may be added
    fixed: bool = False         # exactly the first rounds: nothing added, nothing repeated


def first_rounds(links: int, repeats: int) -> int:
    """Rounds per link of the first rounds: --repeats in all, in whole cycles of the links, at
    least two on each link when there are several (the least that splits the variance between
    links from the variance within them, for the allocation)."""
    return max(2 if links > 1 else 1, -(-repeats // max(1, links)))


def seconds(max_time: float | None, building: float) -> float:
    """The budget's seconds: --max-time, else as long as the builds took, FLOOR at least."""
    return max_time if max_time is not None else max(FLOOR, building)


class Loop:
    """Rounds on links until settled or the budget is spent (see the module doc)."""

    def __init__(self, budget: Budget, say: Callable[[str], None]) -> None:
        self.budget = budget
        self.say = say
        self.r = 0                          # rounds run, those set apart included
        self.links = budget.links
        self.disturbed: list[int] = []      # rounds set apart
        self.measuring = 0.0                # seconds in rounds (canaries included)
        self.linking = 0.0                  # seconds relinking
        self.round_times: list[float] = []

    # ---- what the caller provides -------------------------------------------------------------

    def relink_to(self, k: int) -> None:
        """Every build has links 0..k-1 afterwards."""
        raise NotImplementedError

    def measure_round(self, r: int, seed: int) -> str:
        """The runs of round r on link `seed`; '' or why the round was disturbed."""
        raise NotImplementedError

    def link_cost(self) -> float:
        """Seconds one more link costs, as allocation weighs it (math.inf: none can be added)."""
        raise NotImplementedError

    def links_cost(self, add: int) -> float:
        """Seconds the relinks for `add` more links take."""
        raise NotImplementedError

    def name(self) -> str:
        """The loop as progress lines name it."""
        return "rounds"

    def round_done(self, r: int, seed: int) -> str:
        return f"{self.name()}: round {r} done (layout seed {seed})"

    # ---- the loop -----------------------------------------------------------------------------

    def ensure_links(self, k: int) -> None:
        t = time.monotonic()
        self.relink_to(k)
        self.linking += time.monotonic() - t

    def one_round(self, seed: int) -> bool:
        """Round r on link `seed`; False when it was disturbed (then set apart)."""
        self.r += 1
        r, t0 = self.r, time.monotonic()
        note = self.measure_round(r, seed)
        dt = time.monotonic() - t0
        self.measuring += dt
        self.round_times.append(dt)
        if note:
            self.disturbed.append(r)
            self.say(f"{self.name()}: {note}")
        else:
            self.say(self.round_done(r, seed))
        return not note

    def good_rounds(self) -> int:
        return self.r - len(self.disturbed)

    def round_cost(self) -> float:
        return sorted(self.round_times)[len(self.round_times) // 2] if self.round_times else 1.0

    def over_budget(self, cost: float) -> bool:
        return self.measuring + self.linking + cost > self.budget.seconds

    def run_queue(self, queue: list[int], first: bool) -> str:
        """Runs rounds on the seeds of `queue`, a disturbed one again on its seed; '' or why it
        stopped (the first rounds stop only at max rounds)."""
        while queue:
            if self.r >= self.budget.max_rounds:
                return "max rounds"
            if not first and self.over_budget(self.round_cost()):
                return "max time"
            seed = queue.pop(0)
            if not self.one_round(seed) and not self.budget.fixed:
                queue.insert(0, seed)
        return ""

    def loop(self, settled: Callable[[], bool],
             rows: Callable[[], Sequence[levels.Components]]) -> tuple[bool, str]:
        """Measures until `settled()` or the budget is spent: (settled, why it stopped: 'settled',
        'max rounds', 'max time' or 'fixed'). `rows` gives the variance components of the rows
        not yet settled."""
        self.ensure_links(self.links)
        queue = [s for _ in range(self.budget.rounds_per_link) for s in range(self.links)]
        why = self.run_queue(queue, True)
        while not why:
            if self.budget.fixed:
                why = "fixed"
            elif settled():
                return True, "settled"
            else:
                why = self.next_step(rows)
        return False, why

    def next_step(self, rows: Callable[[], Sequence[levels.Components]]) -> str:
        """More links, when allocation chooses them and the budget affords their relinks, or
        else one more round on every link; '' or why not (the budget)."""
        if self.r >= self.budget.max_rounds:
            return "max rounds"
        rpl = max(1.0, self.good_rounds() / self.links)
        link_cost = self.link_cost() if self.budget.add_links else math.inf
        choice = allocation.choose(list(rows()), self.links, rpl,
                                   allocation.Costs(self.round_cost(), link_cost))
        per = max(1, round(rpl))
        if choice.step == allocation.LINK and \
                not self.over_budget(self.links_cost(choice.links)
                                     + choice.links * per * self.round_cost()):
            add = choice.links
            self.say(f"{self.name()}: {add} more link(s) ({self.links + add}): {choice.why}")
            self.ensure_links(self.links + add)
            self.links += add
            return self.run_queue([s for _ in range(per)
                                   for s in range(self.links - add, self.links)], False)
        if self.over_budget(self.links * self.round_cost()):
            return "max time"
        return self.run_queue(list(range(self.links)), False)
