"""Measurements out of kvbench and kvbench_micro (Google Benchmark) JSON, as samples per row.

A row is (benchmark, metric): for kvbench the benchmark is "engine benchmark[role]", for Google
Benchmark the benchmark name. A sample is every measured value of that row in the files of one
side: kvbench's per-repeat results (--repeats, [X5]) and Google Benchmark's per-repetition
"iteration" rows (aggregates such as _mean/_median are ignored: they are not measurements).
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any

from kvbtools.results import ResultError


@dataclass(frozen=True)
class Metric:
    key: str                 # short name used on the command line (--metric)
    title: str               # table title
    unit: str
    higher_is_better: bool
    scale: float = 1.0       # shown value = raw * scale
    better_word: str = "faster"
    worse_word: str = "slower"


KV_METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("ops_per_sec", "ops/s", "ops/s", True),
    Metric("p99", "p99 latency", "us", False, 1e-3),
    Metric("cpu", "CPU per op (user+sys)", "us/op", False),
    Metric("wkb", "KB written per op (storage)", "KB/op", False, 1.0, "smaller", "larger"),
    Metric("db_size", "database size", "MB", False, 1.0 / 1048576, "smaller", "larger"),
)}

GB_METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("bytes_per_second", "GB/s (10^9 bytes/s, CPU time)", "GB/s", True, 1e-9),
    Metric("items_per_second", "items/s", "items/s", True),
    Metric("cpu_time", "CPU time per iteration", "ns", False),
    Metric("real_time", "wall time per iteration", "ns", False),
)}

_TIME_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def _kv_value(metric: str, role: dict[str, Any], result: dict[str, Any]) -> float | None:
    if metric == "ops_per_sec":
        return float(role["ops_per_sec"])
    if metric == "p99":
        return float(role["latency_ns"]["p99"])
    if metric == "cpu":
        cost = role["cost"]
        return float(cost["cpu_user_us_per_op"]) + float(cost["cpu_sys_us_per_op"])
    if metric == "wkb":
        v = role["cost"].get("storage_write_kb_per_op")
        return None if v is None else float(v)
    if metric == "db_size":
        return float(result["db_size_bytes"])
    raise KeyError(metric)


@dataclass
class Side:
    """Everything measured on one side of a comparison (one or more files pooled)."""
    label: str
    paths: list[str] = field(default_factory=list)
    kind: str = ""                                   # "kvbench" or "gbench"
    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # benchmark -> error message

    def add(self, bench: str, metric: str, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            return
        key = (bench, metric)
        if key not in self.values:
            self.values[key] = []
            self.order.append(key)
        self.values[key].append(value)


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ResultError(f"{path}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise ResultError(f"{path}: not text (UTF-8): {e.reason}") from e
    except json.JSONDecodeError as e:
        raise ResultError(f"{path}: not JSON: {e}") from e


def kind_of(doc: Any) -> str:
    if isinstance(doc, dict) and doc.get("schema") == "kvbench-run":
        if doc.get("schema_version") != 1:
            raise ResultError(f"schema_version {doc.get('schema_version')} is not supported")
        return "kvbench"
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and isinstance(
            doc.get("context"), dict):
        return "gbench"
    raise ResultError("neither a kvbench run document (docs/json.md) nor Google Benchmark JSON "
                      "(kvbench_micro --benchmark_out=FILE --benchmark_out_format=json)")


def _add_kvbench(side: Side, doc: dict[str, Any]) -> None:
    engine = doc["context"]["engine"]["name"]
    for result in doc["results"]:
        roles = result["roles"]
        for role in roles:
            label = result["benchmark"] if len(roles) == 1 else \
                f"{result['benchmark']}[{role['role']}]"
            for metric in KV_METRICS:
                side.add(f"{engine} {label}", metric, _kv_value(metric, role, result))


def _add_gbench(side: Side, doc: dict[str, Any]) -> None:
    for b in doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = str(b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            side.skipped[name] = str(b.get("error_message", "error"))
            continue
        unit = _TIME_TO_NS.get(b.get("time_unit", "ns"), 1.0)
        for metric in GB_METRICS:
            if metric not in b:
                continue
            v = float(b[metric])
            side.add(name, metric, v * unit if metric.endswith("_time") else v)


def load_side(label: str, paths: list[str]) -> Side:
    """Pools the files of one side. Raises ResultError for a file that is unusable or of a kind
    different from the others."""
    side = Side(label, list(paths))
    for path in paths:
        doc = read_json(path)
        try:
            kind = kind_of(doc)
        except ResultError as e:
            raise ResultError(f"{path}: {e}") from None
        if side.kind and kind != side.kind:
            raise ResultError(f"{path}: a {kind} file pooled with {side.kind} files")
        side.kind = kind
        if kind == "kvbench" and doc.get("complete") is False:
            print(f"kvb: warning: {path} is an incomplete run: {doc.get('error', '')}",
                  file=sys.stderr)
        try:
            (_add_kvbench if kind == "kvbench" else _add_gbench)(side, doc)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ResultError(f"{path}: malformed {kind} document ({type(e).__name__}: {e})") \
                from None
        side.contexts.append(doc["context"])
    return side


def metrics_for(kind: str) -> dict[str, Metric]:
    return KV_METRICS if kind == "kvbench" else GB_METRICS


def context_preset(ctx: dict[str, Any]) -> str:
    """The preset a file was built with, kvbench or kvbench_micro."""
    if isinstance(ctx.get("build"), dict):
        return str(ctx["build"].get("preset", ""))
    return str(ctx.get("kvbench_preset", ""))
