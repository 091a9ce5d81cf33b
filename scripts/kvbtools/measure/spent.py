"""What measuring cost: one record for every loop of the engine and a bisect's totals, one line
(Spent.text) and one JSON shape (Spent.to_json: matrix.json's and versions.json's "cost", a
bisect record's "spent", state.json's "totals"; docs/compare.md lists its keys). from_json also
reads the keys of before (a schema-3 record's "spent", the "totals" of schema 1 to 3), and a
record of before is written back as it was; totals take the new shape once they grow.
"""
from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

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
    counts: int = 0             # commits whose instructions were counted (a bisect's witness)
    counting: float = 0.0       # seconds of counting: their portable builds and callgrind runs
    build_width: int = 0        # the most builds that ran side by side (totals; 0: none ran)
    count_width: int = 0        # the most counts that ran side by side

    @property
    def rounds_per_link(self) -> float:
        return round((self.rounds - self.set_apart) / max(1, self.links), 2)

    def __add__(self, other: "Spent") -> "Spent":
        """Totals over loops (no budget, no reason to stop; the widths are the largest)."""
        return Spent(max(self.links, other.links), self.rounds + other.rounds,
                     self.set_apart + other.set_apart, self.runs + other.runs,
                     self.builds + other.builds, self.relinks + other.relinks,
                     self.measuring + other.measuring, self.relinking + other.relinking,
                     self.canary + other.canary, self.building + other.building,
                     lost=self.lost + other.lost,
                     counts=self.counts + other.counts, counting=self.counting + other.counting,
                     build_width=max(self.build_width, other.build_width),
                     count_width=max(self.count_width, other.count_width))

    def text(self, unresolved: int = 0) -> str:
        """The cost line: 'decided after 8 links x 3 rounds (24 rounds, 72 runs), 95 s measuring
        + 40 s relinking; builds took 210 s (budget 210 s)'; 'stopped after ...: the time budget
        ran out with 2 row(s) unresolved' (`unresolved`: the rows a comparison left so, 0: say
        none); a total over loops (no stopped_by), where the time went: '5 build(s) (130 s, 2
        side by side), 15 relink(s) adding links (158 s), 9 commit(s) counted (95 s, 2 side by
        side), 100 round(s) of 444 run(s), 75.2 s measuring (3 s of canaries)'."""
        canary = self.set_apart - self.lost
        apart = (f", {canary} set apart by the canary" if canary else "") + \
            (f", {self.lost} lost with their jobs and run again" if self.lost else "")
        if not self.stopped_by:
            return (f"{self.builds} build(s) ({self.building:.0f} s{_side(self.build_width)}), "
                    f"{self.relinks} relink(s) adding links ({self.relinking:.0f} s), "
                    + (f"{self.counts} commit(s) counted ({self.counting:.0f} s"
                       f"{_side(self.count_width)}), " if self.counts else "")
                    + f"{self.rounds} round(s){apart} of {self.runs} run(s), "
                    f"{self.measuring:.1f} s measuring"
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
                "stopped_by": self.stopped_by, "counts": self.counts,
                "counting_seconds": round(self.counting, 3), "build_width": self.build_width,
                "count_width": self.count_width, "text": self.text(unresolved)} | (
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


def _side(width: int) -> str:
    return f", {width} side by side" if width > 1 else ""


class SideBySide:
    """Work that may run side by side (threads): the wall time it took, each second once however
    many pieces ran in it, and the most that ran at once. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._mark = 0.0
        self.width = 0

    @contextlib.contextmanager
    def piece(self) -> Iterator[list[float]]:
        """One piece of the work; on its end the list it yields holds the wall seconds it adds
        (the time since the last piece ended or the work started, while any piece ran)."""
        got: list[float] = []
        with self._lock:
            if self._active == 0:
                self._mark = time.monotonic()
            self._active += 1
            self.width = max(self.width, self._active)
        try:
            yield got
        finally:
            with self._lock:
                now = time.monotonic()
                got.append(now - self._mark)
                self._mark = now
                self._active -= 1
