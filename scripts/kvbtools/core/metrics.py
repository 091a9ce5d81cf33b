"""Which figures of a result are metrics to compare, their units and better directions.

A kvbench document describes its own metrics in its top-level "metrics" array:
    [{"path": "ops_per_sec", "unit": "ops/s", "better": "higher"},
     {"path": "latency_ns.p99", "unit": "ns", "better": "lower"}, ...]
A path is a dot path inside a role object; one the role does not have is looked up in the role's
benchmark result (db_size_bytes, peak_rss_bytes). A new metric is a new entry there and needs no
change here. Documents written before kvbench described its metrics get FALLBACK. Google
Benchmark JSON (kvbench_micro) has fixed fields: GBENCH.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from kvbtools.core.errors import UsageError

# The metrics of kvbench documents without a "metrics" array (older runs), in that array's form.
FALLBACK: tuple[dict[str, str], ...] = (
    {"path": "ops_per_sec", "unit": "ops/s", "better": "higher"},
    {"path": "latency_ns.p99", "unit": "ns", "better": "lower"},
    {"path": "cost.cpu_user_us_per_op", "unit": "us/op", "better": "lower"},
    {"path": "cost.cpu_sys_us_per_op", "unit": "us/op", "better": "lower"},
    {"path": "cost.storage_write_kb_per_op", "unit": "KB/op", "better": "lower"},
    {"path": "db_size_bytes", "unit": "bytes", "better": "lower"},
)

# How a unit is shown: (shown unit, factor from the document's unit).
DISPLAY = {"ns": ("us", 1e-3), "bytes": ("MB", 1.0 / 1048576), "bytes/s": ("GB/s", 1e-9)}
# Units of time or of a rate: a change is faster/slower; any other: smaller/larger.
TIME_UNITS = ("ns", "us", "ms", "s", "ns/op", "us/op", "ms/op")


@dataclass(frozen=True)
class Metric:
    path: str             # where the value is; also its name on the command line (--metric)
    unit: str             # the unit of the value in the document
    better: str           # "higher" or "lower"

    @property
    def key(self) -> str:
        return self.path

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def shown_unit(self) -> str:
        return DISPLAY.get(self.unit, (self.unit, 1.0))[0]

    @property
    def scale(self) -> float:
        """Shown value = value * scale."""
        return DISPLAY.get(self.unit, (self.unit, 1.0))[1]

    @property
    def timing(self) -> bool:
        return self.unit in TIME_UNITS or self.unit.endswith("/s")

    @property
    def better_word(self) -> str:
        if self.timing:
            return "faster"
        return "larger" if self.higher_is_better else "smaller"

    @property
    def worse_word(self) -> str:
        if self.timing:
            return "slower"
        return "smaller" if self.higher_is_better else "larger"


# What kvb compare (and matrix, versions) shows of kvbench files without --metric: throughput,
# tail latency, CPU and storage per op, the worst interval (the stall), the database's size (where
# the files describe it), as the seeds' write-ups report them. `--metric all` shows every metric
# the files describe (about 40: counts, every percentile, counters).
KVBENCH_HEADLINE = ("ops_per_sec", "latency_ns.p50", "latency_ns.p99", "latency_ns.p99_9",
                    "cost.cpu_user_us_per_op", "cost.cpu_sys_us_per_op",
                    "cost.storage_read_kb_per_op", "cost.storage_write_kb_per_op",
                    "intervals.min_ops_per_sec", "db_size_bytes")
ALL = "all"
# What kvb --instructions adds to kvbench files (measure/callgrind.py): instructions per op of each
# role's measured loops, and of the engine's background threads per op of the benchmark.
CALLGRIND_KV = ("callgrind.instructions_per_op", "callgrind.background_instructions_per_op")

# Google Benchmark's iteration rows: the rates, then time per iteration (time_unit).
GBENCH_RATES = ("bytes_per_second", "items_per_second")
GBENCH_TIMES = ("cpu_time", "real_time")
GBENCH: dict[str, Metric] = {m.path: m for m in (
    Metric("bytes_per_second", "bytes/s", "higher"),
    Metric("items_per_second", "items/s", "higher"),
    Metric("cpu_time", "ns", "lower"),
    Metric("real_time", "ns", "lower"),
    # Written by kvb matrix/versions --instructions (callgrind.py), not by Google Benchmark.
    Metric("instructions_per_byte", "instructions/byte", "lower"),
    Metric("instructions_per_iteration", "instructions", "lower"),
)}


def parse(descriptors: Iterable[dict[str, Any]]) -> dict[str, Metric]:
    """Metrics by path from well-formed descriptors (schema.py checks them)."""
    return {d["path"]: Metric(d["path"], d["unit"], d["better"]) for d in descriptors}


def of_kvbench(doc: dict[str, Any]) -> dict[str, Metric]:
    """The metrics a kvbench document describes, or FALLBACK for one that describes none."""
    return parse(doc.get("metrics") or FALLBACK)


MISSING = object()


def lookup(obj: Any, path: str) -> Any:
    """The value at a dot path in nested objects; MISSING when any step is missing."""
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return MISSING
        obj = obj[part]
    return obj


def value(role: dict[str, Any], result: dict[str, Any], path: str) -> float | None:
    """A metric's value for one role: in the role, else in its benchmark result; None when
    neither has it or it is not a finite number."""
    v = lookup(role, path)
    if v is MISSING:
        v = lookup(result, path)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def select(available: dict[str, Metric], names: list[str], kind: str) -> dict[str, Metric]:
    """The metrics `names` asks for: each a whole path or its last parts (p99 for
    latency_ns.p99). Raises UsageError naming the valid ones."""
    out: dict[str, Metric] = {}
    for n in names:
        hits = [p for p in available if p == n or p.endswith("." + n)]
        if len(hits) != 1:
            why = "ambiguous" if hits else "unknown"
            raise UsageError(f"{why} metric {n}; valid for {kind} files: "
                             f"{', '.join(available)}")
        out[hits[0]] = available[hits[0]]
    return out


def series_word(metric: str | None) -> str:
    """What a kvb bisect's series measure, as its lines and its page name them: "time" (whatever
    metric is watched), "instructions" when it counts them itself (--instructions: an
    instruction-count metric, CALLGRIND_KV or instructions_per_*)."""
    return "instructions" if metric and "instructions" in metric else "time"
