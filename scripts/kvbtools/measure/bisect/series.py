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
(Plan.max_rounds); the first links x rounds_per_link rounds always run. The loop itself (the
first rounds, the steps, the budget, a disturbed round repeated) is measure/round_loop.py's,
which kvb matrix --presets and kvb versions run too; a Series gives it the commits' side.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from kvbtools.core import levels
from kvbtools.core.errors import RunError
from kvbtools.measure import pinning, round_loop
from kvbtools.measure.bisect.records import Measured, Spent
from kvbtools.measure.bisect.state import Totals
from kvbtools.measure.runner import BuildError


class CommitCannotRun(Exception):
    """The commit under test built but its measurement (or a relink) failed: skip it, as git
    bisect does."""


@dataclass
class Bench:
    """What a series needs of the bisect (search.Search provides it)."""
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


class Series(round_loop.Loop):
    """One series (see the module doc); `run` measures it (measure/round_loop.py's loop)."""

    def __init__(self, bench: Bench, plan: Plan) -> None:
        super().__init__(round_loop.Budget(plan.links, plan.rounds_per_link, plan.max_rounds,
                                           plan.seconds, plan.add_links, plan.fixed), bench.say)
        self.b, self.p = bench, plan
        self.shas = list(dict.fromkeys(plan.shas))
        self.values: dict[str, list[float]] = {s: [] for s in self.shas}
        self.seeds: dict[str, list[int]] = {s: [] for s in self.shas}
        self.rounds: dict[str, list[int]] = {s: [] for s in self.shas}

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
        links = self.measured().links or self.links
        return Spent(links, round(self.good_rounds() / max(1, links), 2), self.measuring,
                     self.linking, self.p.building, self.p.seconds)

    # ---- links and rounds (round_loop's hooks) ------------------------------------------------

    def relink_to(self, k: int) -> None:
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
                self.b.totals.relinks += 1
                self.b.totals.link_seconds += dt

    def measure_round(self, r: int, seed: int) -> str:
        """Round r on link `seed`: its canary, then every commit, the order rotating; '' or
        the canary's note when it moved."""
        t0 = time.monotonic()
        note = ""
        if self.b.canary is not None:
            ns = self.b.canary()
            self.b.totals.canary_seconds += time.monotonic() - t0
            if ns is not None:
                note = self.b.canaries.check(r, ns)
        k = (r - 1) % len(self.shas)
        for sha in self.shas[k:] + self.shas[:k]:
            self.run_one(sha, r, seed)
        self.b.totals.rounds += 1
        return note

    def name(self) -> str:
        """The series as progress lines name it: 'step 3', 'endpoints', 'confirm'."""
        t = self.p.tag
        return t.replace("step", "step ") if t[4:].isdigit() else t

    def round_done(self, r: int, seed: int) -> str:
        return f"{self.name()}: round {r} done ({len(self.shas)} runs, layout seed {seed})"

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

    def link_cost(self) -> float:
        """Seconds one more link costs the series, as allocation weighs it: a relink of every
        commit that lacks it, shared by the links one relink adds (Bench.batch)."""
        lacking = sum(1 for s in self.shas if self.b.links(s) <= self.links)
        return lacking * self.b.relink_estimate() / self.b.batch

    def links_cost(self, add: int) -> float:
        """Seconds to relink what `add` more links need (whole relinks)."""
        need = self.links + add
        relinks = sum(-(-max(0, need - self.b.links(s)) // self.b.batch) for s in self.shas)
        return relinks * self.b.relink_estimate()

    # ---- the loop -----------------------------------------------------------------------------

    def run(self, settled: Callable[[Measured], bool],
            rows: Callable[[Measured], Sequence[levels.Components]]) -> tuple[Measured, Outcome]:
        """Measures until `settled(measured)` or the budget is spent (see the module doc);
        `rows` gives the variance components of the series' comparisons."""
        ok, why = self.loop(lambda: settled(self.measured()), lambda: rows(self.measured()))
        return self.measured(), Outcome(self.r, ok, why, self.spent())
