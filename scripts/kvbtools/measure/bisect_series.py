"""kvb bisect's series: rounds on links, grown where the variance is, on one CPU, with a canary.

A series measures a few commits (old and new; and the commit under test, or the blamed commit
and its parent) in rounds: every commit once per round, back to back, the order rotating, all on
the round's link (layout seed) and pinned to the bisect's CPU. It starts with `links` links and
`rounds_per_link` rounds on each. Then, until its judgement is made (`settled`) or its budget is
spent, it takes the next step measure/allocation.py chooses from the variance components of its
rows (core/levels.components) and what each step costs here: one more round on every link, or
one more link (every commit relinked with the next seed, then measured as often as the others).

A canary (measure/pinning.py: kvbench's fixed reference loop) runs on the CPU before every round
when there is one: a round whose canary moved beyond its noise ran on a CPU that changed speed
under it, and is named, set apart from the verdicts (Measured.disturbed) and repeated on the
same link, within the budget.

The budget of a series is seconds of measuring and relinking (Plan.seconds) and rounds
(Plan.max_rounds); the first links x rounds_per_link rounds always run.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from kvbtools.core import levels
from kvbtools.core.errors import RunError
from kvbtools.measure import allocation, pinning
from kvbtools.measure.bisect_records import Measured, Spent
from kvbtools.measure.bisect_state import Totals
from kvbtools.measure.runner import BuildError


class CommitCannotRun(Exception):
    """The commit under test built but its measurement (or a relink) failed: skip it, as git
    bisect does."""


@dataclass
class Bench:
    """What a series needs of the bisect (bisect_search.Search provides it)."""
    run: Callable[[str, str, int], None]        # (sha, out json, seed); BuildError
    relink: Callable[[str, int], None]          # (sha, seed): adds that link; BuildError
    links: Callable[[str], int]                 # links a built commit has
    pick: Callable[[str, str], list[float]]     # (json path, label) -> the watched values
    say: Callable[[str], None]
    totals: Totals
    runs_dir: str
    relink_seconds: list[float] = field(default_factory=list)   # per commit, measured
    relink_guess: float = 20.0                  # per commit, before one was measured
    batch: int = 1                              # links one relink of a commit adds
    canary: Callable[[], float | None] | None = None   # ns per loop on the CPU; None: no canary
    canaries: pinning.Canaries = field(default_factory=pinning.Canaries)

    def relink_estimate(self) -> float:
        s = self.relink_seconds
        return sum(s) / len(s) if s else self.relink_guess


@dataclass(frozen=True)
class Plan:
    tag: str                    # names the runs' files (endpoints, step3, confirm)
    shas: list[str]
    links: int                  # links to start with
    rounds_per_link: int        # rounds each starts with
    max_rounds: int
    seconds: float              # budget: measuring and relinking
    add_links: bool             # links may be added (--layouts >= 2)
    fixed: bool = False         # exactly the first rounds, nothing added (the confirmation)
    under_test: str = ""        # a failure of this commit is CommitCannotRun
    building: float = 0.0       # what the series' builds took (reported beside the budget)


@dataclass
class Outcome:
    rounds: int
    settled: bool
    why: str                    # "settled", "max rounds", "max time", "fixed"
    spent: Spent


class Series:
    """One series (see the module doc); `run` measures it."""

    def __init__(self, bench: Bench, plan: Plan) -> None:
        self.b, self.p = bench, plan
        self.shas = list(dict.fromkeys(plan.shas))
        self.values: dict[str, list[float]] = {s: [] for s in self.shas}
        self.seeds: dict[str, list[int]] = {s: [] for s in self.shas}
        self.rounds: dict[str, list[int]] = {s: [] for s in self.shas}
        self.disturbed: list[int] = []
        self.r = 0
        self.links = plan.links
        self.measuring = 0.0
        self.linking = 0.0
        self.round_times: list[float] = []

    def measured(self, roles: dict[str, str] | None = None) -> Measured:
        """The values so far, by commit (or by role: role -> commit)."""
        who = roles or {s: s for s in self.shas}
        return Measured({k: list(self.values[s]) for k, s in who.items()},
                        {k: list(self.seeds[s]) for k, s in who.items()},
                        {k: list(self.rounds[s]) for k, s in who.items()},
                        list(self.disturbed))

    def spent(self) -> Spent:
        """What the series cost; its links are those it measured (a link added as the budget
        ran out may have none)."""
        good = self.r - len(self.disturbed)
        links = self.measured().links or self.links
        return Spent(links, round(good / max(1, links), 2), self.measuring, self.linking,
                     self.p.building, self.p.seconds)

    # ---- links and rounds ---------------------------------------------------------------------

    def ensure_links(self, k: int) -> None:
        """Every commit has links 0..k-1 (relinking those that lack one)."""
        for sha in self.shas:
            while self.b.links(sha) < k:
                seed = self.b.links(sha)
                t = time.monotonic()
                try:
                    self.b.relink(sha, seed)
                except BuildError as e:
                    if sha == self.p.under_test:
                        raise CommitCannotRun(f"relinking seed {seed}: {e}") from None
                    raise RunError(f"{sha[:12]} built before but its link {seed} fails: "
                                   f"{e}") from None
                dt = time.monotonic() - t
                self.b.relink_seconds.append(dt)
                self.linking += dt
                self.b.totals.relinks += 1
                self.b.totals.link_seconds += dt

    def one_round(self, seed: int) -> bool:
        """Round r on link `seed`; False when its canary says it was disturbed."""
        self.r += 1
        r, t0 = self.r, time.monotonic()
        note = ""
        if self.b.canary is not None:
            ns = self.b.canary()
            self.b.totals.canary_seconds += time.monotonic() - t0
            if ns is not None:
                note = self.b.canaries.check(r, ns)
        k = (r - 1) % len(self.shas)
        for sha in self.shas[k:] + self.shas[:k]:
            self.run_one(sha, r, seed)
        dt = time.monotonic() - t0
        self.measuring += dt
        self.round_times.append(dt)
        self.b.totals.rounds += 1
        shown = self.shown()
        if note:
            self.disturbed.append(r)
            self.b.say(f"{shown}: {note}")
        else:
            self.b.say(f"{shown}: round {r} done ({len(self.shas)} runs, layout seed {seed})")
        return not note

    def shown(self) -> str:
        """The series as progress lines name it: 'step 3', 'endpoints', 'confirm'."""
        t = self.p.tag
        return t.replace("step", "step ") if t[4:].isdigit() else t

    def run_one(self, sha: str, r: int, seed: int) -> None:
        out = os.path.join(self.b.runs_dir, f"{self.p.tag}.{sha[:12]}.r{r}.json")
        t = time.monotonic()
        try:
            self.b.run(sha, out, seed)
        except BuildError as e:
            if sha == self.p.under_test:
                raise CommitCannotRun(str(e)) from None
            raise RunError(f"{sha[:12]} ran before but fails now: {e}") from None
        self.b.totals.measure_seconds += time.monotonic() - t
        self.b.totals.runs += 1
        got = self.b.pick(out, sha[:12])
        self.values[sha] += got
        self.seeds[sha] += [seed] * len(got)
        self.rounds[sha] += [r] * len(got)

    # ---- the loop -----------------------------------------------------------------------------

    def round_cost(self) -> float:
        return sorted(self.round_times)[len(self.round_times) // 2] if self.round_times else 1.0

    def link_cost(self) -> float:
        """Seconds one more link costs the series, as allocation weighs it: a relink of every
        commit that lacks it, shared by the links one relink adds (Bench.batch)."""
        if not self.p.add_links:
            return math.inf
        lacking = sum(1 for s in self.shas if self.b.links(s) <= self.links)
        return lacking * self.b.relink_estimate() / self.b.batch

    def links_cost(self, add: int) -> float:
        """Seconds to relink what `add` more links need (whole relinks)."""
        need = self.links + add
        relinks = sum(-(-max(0, need - self.b.links(s)) // self.b.batch) for s in self.shas)
        return relinks * self.b.relink_estimate()

    def over_budget(self, cost: float) -> bool:
        return self.measuring + self.linking + cost > self.p.seconds

    def run_queue(self, queue: list[int], first: bool) -> str:
        """Runs rounds on the seeds of `queue`, a disturbed one again on its seed; '' or why it
        stopped (the first rounds stop only at max rounds)."""
        while queue:
            if self.r >= self.p.max_rounds:
                return "max rounds"
            if not first and self.over_budget(self.round_cost()):
                return "max time"
            seed = queue.pop(0)
            if not self.one_round(seed) and not self.p.fixed:
                queue.insert(0, seed)
        return ""

    def run(self, settled: Callable[[Measured], bool],
            rows: Callable[[Measured], Sequence[levels.Components]]) -> tuple[Measured, Outcome]:
        """Measures until `settled(measured)` or the budget is spent (see the module doc);
        `rows` gives the variance components of the series' comparisons."""
        self.ensure_links(self.links)
        queue = [s for _ in range(self.p.rounds_per_link) for s in range(self.links)]
        why = self.run_queue(queue, True)
        while not why:
            m = self.measured()
            if self.p.fixed:
                why = "fixed"
            elif settled(m):
                return m, Outcome(self.r, True, "settled", self.spent())
            else:
                why = self.next_step(m, rows)
        return self.measured(), Outcome(self.r, False, why, self.spent())

    def next_step(self, m: Measured, rows: Callable[[Measured], Sequence[levels.Components]]
                  ) -> str:
        """More links, when allocation chooses them and the budget affords their relinks, or
        else one more round on every link; '' or why not (the budget)."""
        if self.r >= self.p.max_rounds:
            return "max rounds"
        rpl = max(1.0, (self.r - len(self.disturbed)) / self.links)
        link_cost = self.link_cost()
        choice = allocation.choose(list(rows(m)), self.links, rpl,
                                   allocation.Costs(self.round_cost(), link_cost))
        per = max(1, round(rpl))
        if choice.step == allocation.LINK and \
                not self.over_budget(self.links_cost(choice.links)
                                     + choice.links * per * self.round_cost()):
            add = choice.links
            self.b.say(f"{self.shown()}: {add} more link(s) ({self.links + add}): {choice.why}")
            self.ensure_links(self.links + add)
            self.links += add
            return self.run_queue([s for _ in range(per)
                                   for s in range(self.links - add, self.links)], False)
        if self.over_budget(self.links * self.round_cost()):
            return "max time"
        return self.run_queue(list(range(self.links)), False)
