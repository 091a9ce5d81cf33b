"""One CPU for every run of a comparison, and a canary around every round on it.

On a shared host the largest effect is the CPU and the moment: a neighbour can make one vCPU
1.5-2x slower than another for minutes, and nothing in the guest shows it; unpinned runs land on
alternate CPUs (a ratio read 0.65 and 1.55 in turn). So every run is pinned (choose_pin: the
fastest by the canary, or the one given) and the runs of a round go back to back, and a canary,
kvbench's fixed reference loop (`kvbench --canary`), runs on that CPU around every round
(Watch): a round whose canary moved beyond its own noise ran on a CPU that changed speed.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from kvbtools.core import output
from kvbtools.core.errors import UsageError

# A round is disturbed when its canary is this much slower or faster than the median canary
# of the comparison, or than its own noise allows (3 median absolute deviations), whichever is
# larger: the canary repeats within 1-2% on a steady CPU.
MIN_TOLERANCE = 0.05


def allowed_cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return []


@dataclass(frozen=True)
class Reading:
    cpu: int
    ns_per_loop: float                  # the best window: the CPU's own speed
    wall_ns_per_loop: float = 0.0       # wall clock over all windows (0: not reported): also
                                        # slower when another thread shares the CPU

    def value(self, by_wall: bool) -> float:
        """What a comparison watches: `by_wall`, the wall clock over all windows, which a thread
        taking turns on the CPU slows as it slows the runs (KV rates are wall time; micro runs
        lose their caches at every turn); else the best window, the CPU's own speed alone."""
        wall = self.wall_ns_per_loop
        return wall if by_wall and wall > 0 else self.ns_per_loop


def canary(binary: str, cpu: int | None) -> Reading | None:
    """One canary on `cpu` (None: unpinned); None when the binary has no canary (an older
    kvbench) or it failed: the comparison goes on without it and says so."""
    cmd = [binary, "--canary"] + ([f"--cpu_affinity={cpu}"] if cpu is not None else [])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    try:
        doc = json.loads(p.stdout.strip().splitlines()[-1])
        ns = float(doc["ns_per_loop"])
        wall = float(doc.get("wall_ns_per_loop") or 0.0)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None
    return Reading(int(doc.get("cpu", cpu if cpu is not None else -1)), ns,
                   wall) if ns > 0 else None


@dataclass
class Canaries:
    """The canary's readings on one CPU, round by round."""
    readings: list[float] = field(default_factory=list)

    def tolerance(self) -> float:
        if len(self.readings) < 3:
            return MIN_TOLERANCE
        m = statistics.median(self.readings)
        mad = statistics.median(abs(x - m) for x in self.readings)
        return max(MIN_TOLERANCE, 3 * 1.4826 * mad / m)

    def moved(self, ns: float) -> float:
        """How far a reading moved from the median of those before it (0.12: 1.12x its time), 0.0
        when within the noise; the reading joins the others."""
        baseline = statistics.median(self.readings) if self.readings else ns
        self.readings.append(ns)
        moved = ns / baseline - 1.0
        return moved if abs(moved) > self.tolerance() else 0.0


def moved_text(moved: float) -> str:
    """A canary's move (Canaries.moved) as the ratio of its time: '3.35x its median time in this
    comparison (slower)', not '235% slower', which read as a fraction of something."""
    return (f"{1.0 + moved:.2f}x its median time in this comparison "
            f"({'slower' if moved > 0 else 'faster'})")


# A KV workload with a writer beside its --threads readers (kvbench --help: "*whilewriting",
# insertbench's query phases q[rp]N).
WRITER = re.compile(r"whilewriting$|^q[rp]\d+$")


def kv_threads(workloads: str, extra: Sequence[str]) -> tuple[int, bool]:
    """The worker threads of a KV plan (--threads in `extra`, the last one given; kvbench's
    default 1) and whether a workload runs a writer beside them."""
    threads = 1
    for i, a in enumerate(extra):
        value = a.split("=", 1)[1] if a.startswith("--threads=") else \
            extra[i + 1] if a == "--threads" and i + 1 < len(extra) else None
        if value is not None and value.isdigit():
            threads = int(value)
    return threads, any(WRITER.search(w.split("[")[0]) for w in workloads.split(",") if w)


@dataclass(frozen=True)
class Pin:
    """Where every run of a comparison runs, and its canary."""
    cpus: tuple[int, ...]       # () not pinned
    canary: str                 # the binary whose --canary runs around every round; "" none
    text: str                   # what was chosen and why, as the output says it
    start: dict[int, float] = field(default_factory=dict)   # the readings at the start
    by_wall: bool = False       # readings by the wall clock (Reading.value)
    chosen: str = ""            # how the CPUs were chosen ("--cpu", "the last allowed CPU", ...)

    def flag(self) -> list[str]:
        """kvbench's and kvbench_micro's flag: one CPU, or one per thread round-robin."""
        return [f"--cpu_affinity={','.join(map(str, self.cpus))}"] if self.cpus else []

    def to_json(self) -> dict[str, Any]:
        return {"cpus": list(self.cpus), "canary": self.canary or None, "how": self.text,
                "start_ns_per_loop": {str(k): v for k, v in self.start.items()},
                "canary_reading": "wall clock" if self.by_wall else "best window",
                "chosen": self.chosen}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Pin":
        """The pin to_json wrote."""
        return Pin(tuple(int(c) for c in d["cpus"]), d.get("canary") or "", d["how"],
                   {int(k): float(v) for k, v in (d.get("start_ns_per_loop") or {}).items()},
                   d.get("canary_reading") == "wall clock", d.get("chosen", ""))


def find_canary(candidates: Sequence[str], cpu: int | None) -> tuple[str, Reading | None]:
    """The first of `candidates` (binaries) whose --canary answers, and its reading on `cpu`."""
    for b in candidates:
        if b and os.path.isfile(b):
            got = canary(b, cpu)
            if got is not None:
                return b, got
    return "", None


def choose_pin(cpu: str, threads: int, candidates: Sequence[str], shown: str = "",
               by_wall: bool = False, given: str = "--cpu", measured: str = "") -> Pin:
    """`cpu` (--cpu): 'auto' the fastest allowed CPU by the canary at the start (with `threads`
    > 1, that many of the fastest, one a thread), a number that CPU (`given` says why: --cpu, or
    a resumed bisect's first choice), 'none' no pinning and no canary. The canary is the first
    of `candidates` that has one; `shown` names the threads (e.g. '--threads 2 and the writer')
    when there are several; `by_wall`: fastest and moved by the canary's wall clock (wall-time
    rates: a CPU another thread shares is slow for them); `measured` says why what is measured
    has no canary of its own when none answers (a generic bisect: the command is the user's)."""
    allowed = allowed_cpus()
    if cpu == "none" or not allowed:
        why = "--cpu none" if cpu == "none" else "sched_getaffinity failed"
        return Pin((), "", f"not pinned ({why}): runs go where the scheduler puts them; no "
                           "canary (unpinned runs land on any CPU, a canary on one says nothing "
                           "of them)")
    binary, first = find_canary(candidates, allowed[0] if cpu == "auto" else int(cpu))
    readings = {first.cpu: first.value(by_wall)} if first else {}
    if cpu == "auto" and binary:
        for c in allowed[1:]:
            got = canary(binary, c)
            if got is not None:
                readings[got.cpu] = got.value(by_wall)
    n = max(1, min(threads, len(allowed)))
    if cpu != "auto":
        cpus, how = (int(cpu),), given
    elif len(readings) == len(allowed):
        cpus = tuple(sorted(readings, key=lambda c: readings[c])[:n])
        how = ("the fastest by the canary's wall clock at the start" if by_wall else
               "the fastest by the canary at the start") + ": " + ", ".join(
            f"CPU {c} {readings[c]:.3g} ns" for c in sorted(readings))
    else:
        cpus, how = tuple(allowed[-n:]), "the last allowed CPU" + ("s" if n > 1 else "")
    where = f"CPU {cpus[0]}" if len(cpus) == 1 else f"CPUs {','.join(map(str, cpus))}"
    if threads > 1 and len(cpus) == 1:
        text = (f"every run on {where} ({how}); its {threads} threads ({shown}) share it, "
                "taking turns (--cpu auto gives each thread a CPU of its own)")
    elif threads > 1:
        text = (f"every run's {threads} threads ({shown}) on {where} ({how}), one a CPU in "
                "kvbench's round-robin; not all on one CPU: several threads on one CPU take "
                "turns on it, which measures the scheduler, not the engine's concurrency")
    else:
        text = f"every run on {where} ({how})"
    on = "it" if len(cpus) == 1 else "each"
    none = ", ".join(f"{output.shown(c)} has no --canary" if os.path.isfile(c) else
                     f"no kvbench build at {output.shown(c)}" for c in candidates if c)
    none = f"{measured}, and {none}" if measured else none
    text += (f"; a canary ({output.shown(binary)} --canary) on {on} before every round and after "
             "the last" + (", by its wall clock (a thread taking turns on the CPU slows the "
                           "runs)" if by_wall else "") if binary else
             f"; no canary ({none}): rounds are not checked for a CPU that changed speed")
    return Pin(cpus, binary, text, {c: readings[c] for c in cpus if c in readings}, by_wall,
               how)


# The canary read after a round serves as the next round's "before" when at most this old.
REUSE_SECONDS = 5.0


class Watch:
    """The canary around the rounds of one comparison: on each pinned CPU before every round
    and after it. A round is disturbed when either moved beyond the noise of that CPU's
    readings (Canaries): a neighbour that came during the round shows after it."""

    def __init__(self, pin: Pin, read: Callable[[str, int], Reading | None] = canary,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pin, self.read_one, self.clock = pin, read, clock
        self.binary = pin.canary if pin.cpus else ""
        self.canaries = {c: Canaries([pin.start[c]] if c in pin.start else []) for c in pin.cpus}
        self.last_at: float | None = None
        self.last_note = ""
        self.seconds = 0.0
        self.readings = 0

    def read(self) -> str:
        """One canary on every CPU: '' or how it moved."""
        t = self.clock()
        notes = []
        for c in self.pin.cpus:
            got = self.read_one(self.binary, c)
            moved = self.canaries[c].moved(got.value(self.pin.by_wall)) if got else 0.0
            if moved:
                notes.append(moved_text(moved)
                             + (f" on CPU {c}" if len(self.pin.cpus) > 1 else ""))
        self.readings += 1
        self.last_at = self.clock()
        self.seconds += self.last_at - t
        return ", ".join(notes)

    def _said(self, r: int, when: str, note: str) -> str:
        return (f"round {r}: the canary {when} it took {note}: the CPU changed speed; the round "
                "is set apart and repeated") if note else ""

    def before(self, r: int) -> str:
        """The canary before round r ('' or why the round is disturbed)."""
        if not self.binary:
            return ""
        fresh = self.last_at is None or self.clock() - self.last_at > REUSE_SECONDS
        return self._said(r, "before", self.read() if fresh else self.last_note)

    def after(self, r: int) -> str:
        """The canary after round r (and before the next one, when that starts soon)."""
        if not self.binary:
            return ""
        self.last_note = self.read()
        return self._said(r, "after", self.last_note)


def check_cpu(cpu: str) -> None:
    """--cpu N names a CPU this process may run on (UsageError otherwise), before any build."""
    allowed = allowed_cpus()
    if cpu.isdigit() and allowed and int(cpu) not in allowed:
        raise UsageError(f"--cpu {cpu}: not a CPU this process may run on (allowed: "
                         f"{', '.join(map(str, allowed))})")
