"""Measurements out of kvbench and kvbench_micro (Google Benchmark) JSON, as samples per row.

A row is (benchmark, metric): for kvbench the benchmark is "engine benchmark[role]", for Google
Benchmark the benchmark name. A sample is every measured value of that row in the files of one
side: kvbench's per-repeat results (--repeats, [X5]) and Google Benchmark's per-repetition
"iteration" rows (aggregates such as _mean/_median are ignored: they are not measurements).
The metrics are those the documents describe (metrics.py).

Every value also says where it was measured (core/levels.Where): its file is its process, the
link (placement) is the build's preset and layout seed as the file's context records them, and a
caller that ran the files in rounds (kvb matrix, versions) gives each file's round and link.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import levels, metrics, results, schema
from kvbtools.core.errors import UsageError
from kvbtools.core.metrics import Metric


@dataclass
class Side:
    """Everything measured on one side of a comparison (one or more files pooled)."""
    label: str
    paths: list[str] = field(default_factory=list)
    kind: str = ""                                   # results.KVBENCH or results.GBENCH
    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)
    contexts: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # benchmark -> error message
    metrics: dict[str, Metric] = field(default_factory=dict)
    where: dict[tuple[str, str], list[levels.Where]] = field(default_factory=dict)
    at: levels.Where = levels.Where()    # where the values being added were measured

    def add(self, bench: str, metric: str, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            return
        key = (bench, metric)
        if key not in self.values:
            self.values[key] = []
            self.where[key] = []
            self.order.append(key)
        self.values[key].append(value)
        self.where[key].append(self.at)

    def sample(self, key: tuple[str, str]) -> levels.Sample:
        """The row's values with where each was measured (core/levels.py)."""
        return levels.Sample(tuple(self.values[key]), tuple(self.where[key]))


def _add_kvbench(side: Side, d: results.Document) -> None:
    engine = d.doc["context"]["engine"]["name"]
    described = d.metrics
    for result in d.doc["results"]:
        roles = result["roles"]
        for role in roles:
            label = result["benchmark"] if len(roles) == 1 else \
                f"{result['benchmark']}[{role['role']}]"
            for path in described:
                side.add(f"{engine} {label}", path, metrics.value(role, result, path))
    _merge_metrics(side, described, d.path)


def _add_gbench(side: Side, d: results.Document) -> None:
    for b in d.doc["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = str(b.get("run_name", b["name"]))
        if b.get("error_occurred"):
            side.skipped[name] = str(b.get("error_message", "error"))
            continue
        unit = schema.TIME_TO_NS[b.get("time_unit", "ns")]
        for key in metrics.GBENCH:
            if key in b:
                v = float(b[key])
                side.add(name, key, v * unit if key in metrics.GBENCH_TIMES else v)
    _merge_metrics(side, metrics.GBENCH, d.path)


def _merge_metrics(side: Side, described: dict[str, Metric], path: str) -> None:
    for key, m in described.items():
        known = side.metrics.setdefault(key, m)
        if known != m:
            raise UsageError(f"{path}: metric {key} is {m.unit}, {m.better} is better; another "
                             f"file of side {side.label} says {known.unit}, {known.better}")


def load_side(label: str, paths: list[str],
              rounds: dict[str, levels.Where] | None = None) -> Side:
    """Pools the files of one side. Raises UsageError for files that are unusable or of a kind
    different from the others. `rounds`: path -> where the caller ran it (its link and round)."""
    return side_of(label, results.load_all(paths), rounds)


def link_of(ctx: dict[str, Any]) -> str:
    """The placement a file's binary had: its preset and its layout as the context records
    them (files of one side with one layout are one link)."""
    if isinstance(ctx.get("build"), dict):
        return f"{ctx['build'].get('preset', '')} {ctx['build'].get('layout', '')}".strip()
    return f"{ctx.get('kvbench_preset', '')} {ctx.get('kvbench_layout', '')}".strip()


def side_of(label: str, docs: list[results.Document],
            rounds: dict[str, levels.Where] | None = None) -> Side:
    """Pools loaded documents into one side; each document is one process."""
    side = Side(label)
    for d in docs:
        add_document(side, d, (rounds or {}).get(d.path))
    return side


def add_document(side: Side, d: results.Document, given: levels.Where | None = None) -> None:
    """Adds one loaded document (one process) to `side`; `given`: its link, round and host as the
    caller ran it (else the link its context records, and no round)."""
    if side.kind and d.kind != side.kind:
        raise UsageError(f"{d.path}: a {d.kind} file pooled with {side.kind} files")
    side.kind = d.kind
    results.warn_incomplete(d)
    side.paths.append(d.path)
    side.at = levels.Where(given.link if given else link_of(d.context), d.path,
                           given.block if given else None, given.host if given else "")
    (_add_kvbench if d.kind == results.KVBENCH else _add_gbench)(side, d)
    side.contexts.append(d.context)


def context_preset(ctx: dict[str, Any]) -> str:
    """The preset a file was built with, kvbench or kvbench_micro."""
    if isinstance(ctx.get("build"), dict):
        return str(ctx["build"].get("preset", ""))
    return str(ctx.get("kvbench_preset", ""))
