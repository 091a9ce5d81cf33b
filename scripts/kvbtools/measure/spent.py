"""What measuring cost: one record for every loop of the engine and a bisect's totals, one line
(Spent.text) and one JSON shape (Spent.to_json: matrix.json's and versions.json's "cost", a
bisect record's "spent", state.json's "totals"; docs/compare.md lists its keys). from_json also
reads the keys of before (a schema-3 record's "spent", the "totals" of schema 1 to 3), and a
record of before is written back as it was; totals take the new shape once they grow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The keys of before: a bisect record's "spent" and state.json's "totals" (schema 1 to 3).
_BEFORE = {"measuring": "measuring", "linking": "relinking", "building": "building",
           "budget": "budget", "measure_seconds": "measuring", "link_seconds": "relinking",
           "build_seconds": "building"}


@dataclass
class Spent:
    links: int = 0              # links measured (a link added as the budget ran out has none)
    rounds: int = 0             # rounds run, those set apart included
    set_apart: int = 0          # rounds set apart (their canary; a lost job)
    runs: int = 0
    builds: int = 0             # the builds whose time `building` is
    relinks: int = 0            # relinks that added links
    measuring: float = 0.0      # seconds in rounds, canaries included
    relinking: float = 0.0
    canary: float = 0.0         # of measuring: the canaries
    building: float = 0.0       # what the builds took (a loop's budget follows them)
    budget: float = 0.0         # seconds of measuring and relinking allowed
    max_rounds: int = 0
    stopped_by: str = ""        # the loop's: settled, fixed, max rounds, max time
    lost: int = 0               # of set_apart: rounds of jobs lost with their node (the fleet)
    written: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # before

    @property
    def rounds_per_link(self) -> float:
        return round((self.rounds - self.set_apart) / max(1, self.links), 2)

    def __add__(self, other: "Spent") -> "Spent":
        """Totals over loops (no budget, no reason to stop)."""
        return Spent(max(self.links, other.links), self.rounds + other.rounds,
                     self.set_apart + other.set_apart, self.runs + other.runs,
                     self.builds + other.builds, self.relinks + other.relinks,
                     self.measuring + other.measuring, self.relinking + other.relinking,
                     self.canary + other.canary, self.building + other.building,
                     lost=self.lost + other.lost)

    def text(self, unresolved: int = 0) -> str:
        """The cost line: 'decided after 8 links x 3 rounds (24 rounds, 72 runs), 95 s measuring
        + 40 s relinking; builds took 210 s (budget 210 s)'; 'stopped after ...: the time budget
        ran out with 2 row(s) unresolved' (`unresolved`: the rows a comparison left so, 0: say
        none); a total over loops (no
        stopped_by): '5 builds (501 s), 8 relinks (178 s), 64 rounds of 208 runs, 143 s measuring
        (3 s of canaries)'."""
        canary = self.set_apart - self.lost
        apart = (f", {canary} set apart by the canary" if canary else "") + \
            (f", {self.lost} lost with their jobs and run again" if self.lost else "")
        if not self.stopped_by:
            return (f"{self.builds} build(s) ({self.building:.0f} s), {self.relinks} relink(s) "
                    f"adding links ({self.relinking:.0f} s), {self.rounds} round(s){apart} of "
                    f"{self.runs} run(s), {self.measuring:.1f} s measuring"
                    + (f" ({self.canary:.0f} s of canaries)" if self.canary >= 0.5 else ""))
        rpl = self.rounds_per_link
        text = (f"{self.links} link{'s' if self.links != 1 else ''} x {rpl:g} "
                f"round{'s' if rpl != 1 else ''} ({self.rounds} rounds{apart}, {self.runs} runs), "
                f"{self.measuring:.0f} s measuring + {self.relinking:.0f} s relinking; builds "
                f"took {self.building:.0f} s (budget {self.budget:.0f} s)")
        if self.stopped_by == "settled":
            return "decided after " + text
        if self.stopped_by == "fixed":
            return "measured " + text
        why = "the time budget ran out" if self.stopped_by == "max time" else \
            f"--max-rounds {self.max_rounds} reached"
        return f"stopped after {text}: {why}" + (f" with {unresolved} row(s) unresolved"
                                                  if unresolved else "")

    def to_json(self, unresolved: int = 0) -> dict[str, Any]:
        if self.written is not None:
            return dict(self.written)
        return {"links": self.links, "rounds": self.rounds,
                "rounds_per_link": self.rounds_per_link, "set_apart": self.set_apart,
                "runs": self.runs, "builds": self.builds, "relinks": self.relinks,
                "measuring_seconds": round(self.measuring, 3),
                "relinking_seconds": round(self.relinking, 3),
                "canary_seconds": round(self.canary, 3),
                "building_seconds": round(self.building, 3),
                "budget_seconds": round(self.budget, 3), "max_rounds": self.max_rounds,
                "stopped_by": self.stopped_by, "text": self.text(unresolved)} | (
                    {"lost": self.lost} if self.lost else {})

    @staticmethod
    def from_json(d: dict[str, Any] | None) -> "Spent | None":
        """The record to_json wrote, or one of before (_BEFORE's keys); None for None."""
        if not d:
            return None
        got = {_BEFORE.get(k, k.removesuffix("_seconds")): v for k, v in d.items()}
        if "rounds" not in got and "rounds_per_link" in got:   # a bisect record of schema 3
            got["rounds"] = round(got.get("links", 0) * got["rounds_per_link"])
        names = set(Spent.__dataclass_fields__) - {"written"}
        return Spent(**{k: v for k, v in got.items() if k in names},
                     written=None if "text" in d else dict(d))
