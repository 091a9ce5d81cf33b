"""One CPU for every series of a comparison, and a canary in every round on that CPU.

On a shared host the largest effect is the CPU and the moment: a neighbour can make one vCPU 1.5-2x
slower than another for minutes, then the other, and nothing inside the guest shows it (no steal).
Unpinned, successive runs land on alternate CPUs and a ratio between two series reads 0.65 and
1.55 in turn. So a comparison pins every run to one CPU (the fastest by the canary when it starts,
or the one given), runs the series of a round back to back on it, and judges per-round ratios
(core/levels.py: rounds are blocks). A canary, kvbench's fixed reference loop (`kvbench --canary`,
`kvbench_micro --canary`), runs before every round on that CPU: a round whose canary moved beyond
the canary's own noise ran on a CPU that changed speed under it, and is set apart and repeated.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
from dataclasses import dataclass, field

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
    ns_per_loop: float


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
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return Reading(int(doc.get("cpu", cpu if cpu is not None else -1)), ns) if ns > 0 else None


def choose_cpu(readings: list[Reading]) -> int | None:
    """The fastest CPU of the readings (the lowest ns per loop)."""
    return min(readings, key=lambda r: r.ns_per_loop).cpu if readings else None


@dataclass
class Canaries:
    """The canaries of one comparison, round by round."""
    readings: list[float] = field(default_factory=list)
    disturbed: list[int] = field(default_factory=list)    # rounds set apart

    def tolerance(self) -> float:
        if len(self.readings) < 3:
            return MIN_TOLERANCE
        m = statistics.median(self.readings)
        mad = statistics.median(abs(x - m) for x in self.readings)
        return max(MIN_TOLERANCE, 3 * 1.4826 * mad / m)

    def check(self, r: int, ns: float) -> str:
        """'' when round r's canary is like the others, else why the round is disturbed."""
        baseline = statistics.median(self.readings) if self.readings else ns
        self.readings.append(ns)
        moved = ns / baseline - 1.0
        if abs(moved) > self.tolerance():
            self.disturbed.append(r)
            return (f"round {r}: the canary ran {abs(moved):.0%} "
                    f"{'slower' if moved > 0 else 'faster'} than this comparison's median: the "
                    "CPU changed speed; the round is set apart and repeated")
        return ""
