"""A plan: what one loop of the engine measures (docs/kvbtools.md, The engine), as plain data.

A round runs every variant once, back to back, the order rotating by one a round, on the round's
link (layout seed) of their builds, pinned with a canary around it: the ratio of two builds
within a round cancels the CPU and the moment they shared (core/levels judges rounds as blocks).
The plan names the variants (kvb matrix's presets and control, kvb versions' trees, a bisect
series' commits), the links every build starts with, the Pin and the Budget. It is plain data,
written by to_json (matrix.json keeps it) and read back by from_json, so another process (a
Slurm job on another host: measure/fleet.py) is handed a Block of its rounds and sends back
Measurements (executor.py).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kvbtools.core import levels
from kvbtools.measure.pinning import Pin

# The least a comparison may measure (seconds) when its builds were quicker: two minutes give a
# kvbench_micro benchmark here (0.3-0.5 s a run under load) about 100 rounds of three builds,
# enough for 8 links x 4 rounds, where the fixed 20 rounds of before gave 9 s and no answer.
FLOOR = 120.0
# Rounds at most unless --max-rounds says: the time budget decides first.
MAX_ROUNDS = 400


@dataclass(frozen=True)
class Budget:
    """--repeats, --max-rounds and --max-time, the one value every command makes of them
    (commands/arguments.budget) and the loop stops by (Plan.seconds)."""
    first: int                 # rounds always run (--repeats), in whole cycles of the links
    max_rounds: int            # rounds at most (>= first)
    max_seconds: float | None  # measuring and relinking; None: as long as the builds took

    def seconds(self, building: float) -> float:
        """--max-time, else as long as the builds took, FLOOR at least."""
        return self.max_seconds if self.max_seconds is not None else max(FLOOR, building)

    def rounds_per_link(self, links: int) -> int:
        """Rounds each link starts with: `first` in whole cycles of the links, at least two on
        each when there are several (the least that splits the variance between links from the
        variance within them, for the allocation)."""
        return max(2 if links > 1 else 1, -(-self.first // max(1, links)))

    def to_json(self) -> dict[str, Any]:
        return {"repeats": self.first, "max_rounds": self.max_rounds,
                "max_seconds": self.max_seconds}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Budget":
        return Budget(int(d["repeats"]), int(d["max_rounds"]), d["max_seconds"])


@dataclass(frozen=True)
class Variant:
    """One of the things a plan compares: its label (a column of the tables, a bisect's commit)
    and the build it runs; builds may be shared (the control runs the base's)."""
    label: str
    build: str                 # the build's key (its label; a bisect's commit id)
    engine: str = ""           # a study's engine: this variant's only one ("" the plan's)
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What one loop measures (the module doc)."""
    name: str                  # names the progress lines and the runs' files ("": a comparison's)
    variants: tuple[Variant, ...]
    links: int                 # links every build starts with (seeds 0..links-1)
    budget: Budget
    pin: Pin                   # where every run is pinned, and the canary around every round
    building: float = 0.0      # seconds the builds took whose time the budget follows
    builds: int = 0            # how many they were
    fixed: bool = False        # exactly the first rounds: nothing added, nothing repeated
    # The variants each host measures, by label, when not every host measures every variant (a
    # bisect step of several candidates on a cluster: old, new and one candidate a node); a
    # round runs one group's variants (Block.groups). (): every round runs every variant.
    groups: tuple[tuple[str, ...], ...] = ()

    def group(self, g: int) -> "Plan":
        """The plan of group g's rounds: its variants, in the plan's order."""
        return dataclasses.replace(self, variants=tuple(
            v for v in self.variants if v.label in self.groups[g]), groups=())

    def build_keys(self) -> list[str]:
        """The builds of the variants, each once, in order."""
        return list(dict.fromkeys(v.build for v in self.variants))

    def order(self, r: int) -> list[Variant]:
        """Round r's order: every variant once, rotated by one a round, so drift (the machine
        warming up, a neighbour starting) lands on every variant alike."""
        k = (r - 1) % len(self.variants)
        return list(self.variants[k:] + self.variants[:k])

    def first_rounds(self) -> list[int]:
        """The link seed of each first round: whole cycles of the links."""
        return [s for _ in range(self.budget.rounds_per_link(self.links))
                for s in range(self.links)]

    def seconds(self) -> float:
        """The budget's seconds of measuring and relinking."""
        return self.budget.seconds(self.building)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "variants": [dataclasses.asdict(v) for v in self.variants],
                "links": self.links, "budget": self.budget.to_json(),
                "pin": self.pin.to_json(), "building": self.building, "builds": self.builds,
                "fixed": self.fixed} | ({"groups": [list(g) for g in self.groups]}
                                       if self.groups else {})

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Plan":
        """The plan to_json wrote."""
        variants = tuple(Variant(v["label"], v["build"], v.get("engine", ""),
                                 tuple(v.get("args", ()))) for v in d["variants"])
        return Plan(d["name"], variants, int(d["links"]), Budget.from_json(d["budget"]),
                    Pin.from_json(d["pin"]), float(d.get("building", 0.0)),
                    int(d.get("builds", 0)), bool(d.get("fixed", False)),
                    tuple(tuple(g) for g in d.get("groups", ())))


@dataclass(frozen=True)
class Block:
    """Rounds of a plan an executor runs at once: (round, link seed) each, in `parts` equal
    parts one after the other, each run by a host of its own (a Slurm job, measure/fleet.py);
    one executor that runs here runs them all in their order. For a plan in groups
    (Plan.groups), `groups` holds each round's group, and a part is a group's rounds (the parts
    may then differ in size)."""
    rounds: tuple[tuple[int, int], ...]
    parts: int = 1
    groups: tuple[int, ...] = ()

    def split(self) -> list[tuple[tuple[int, int], ...]]:
        """The rounds of each part."""
        if self.groups:
            out: dict[int, list[tuple[int, int]]] = {}
            for x, g in zip(self.rounds, self.groups):
                out.setdefault(g, []).append(x)
            return [tuple(x) for x in out.values()]
        n = -(-len(self.rounds) // max(1, self.parts))
        return [self.rounds[i:i + n] for i in range(0, len(self.rounds), n)]

    def plans(self, plan: Plan) -> list[tuple[Plan, tuple[tuple[int, int], ...]]]:
        """Each part with the plan its host runs: `plan`, or the part's group of it."""
        if not self.groups:
            return [(plan, part) for part in self.split()]
        return [(plan.group(g), part) for g, part in
                zip(dict.fromkeys(self.groups), self.split())]


@dataclass(frozen=True)
class Measurement:
    """One run (a process) of a variant: its file and where it was taken."""
    path: str                  # the run's JSON
    variant: str               # Variant.label
    build: str                 # Variant.build
    link: int                  # the layout seed of the build's binary that ran
    round: int
    cpus: tuple[int, ...] = ()   # where it was pinned (() not pinned)
    host: str = ""             # "" here; the Slurm node that ran it (a level above links)

    def link_name(self) -> str:
        return f"{self.build} seed {self.link}"

    def where(self) -> levels.Where:
        """Where core/levels sees it: its link, its process, its round (the block), its host."""
        return levels.Where(self.link_name(), self.path, self.round, self.host)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.path, "side": self.variant, "link": self.link_name(),
                "round": self.round, "cpus": list(self.cpus), "host": self.host}
