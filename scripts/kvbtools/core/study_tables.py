"""A study's tables (kvb matrix with --threads, --configs or without --presets): the metrics read
from each run, the first series in absolute values and the others relative to it, and QPS at each
thread count. measure/study.py makes them and kvb matrix prints them; report.html draws them
(pages/study_figures.py)."""
from __future__ import annotations

import statistics
from typing import Any

from kvbtools.core import results
from kvbtools.core.table import fmt_value, render

def _get(d: dict[str, Any], path: str) -> float | None:
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else None


def _sum(*vals: float | None) -> float | None:
    return None if any(v is None for v in vals) else sum(v for v in vals if v is not None)


def _mb(v: float | None) -> float | None:
    return None if v is None else v / 1048576


# What the tables show, in order: (name, unit, higher is better, how to read it from a role and
# its benchmark result).
STUDY_METRICS: list[tuple[str, str, bool, Any]] = [
    ("ops_per_sec", "ops/s", True, lambda ro, r: _get(ro, "ops_per_sec")),
    ("cpu_us_per_op", "us/op", False,
     lambda ro, r: _sum(_get(ro, "cost.cpu_user_us_per_op"), _get(ro, "cost.cpu_sys_us_per_op"))),
    ("storage_read_kb_per_op", "KB/op", False,
     lambda ro, r: _get(ro, "cost.storage_read_kb_per_op")),
    ("storage_write_kb_per_op", "KB/op", False,
     lambda ro, r: _get(ro, "cost.storage_write_kb_per_op")),
    ("cs_per_op", "switches/op", False,
     lambda ro, r: _sum(_get(ro, "cost.voluntary_cs_per_op"),
                        _get(ro, "cost.involuntary_cs_per_op"))),
    ("p99_latency_us", "us", False,
     lambda ro, r: None if _get(ro, "latency_ns.p99") is None
     else _get(ro, "latency_ns.p99") / 1000),  # type: ignore[operator]
    ("worst_interval_ops_per_sec", "ops/s", True,  # the stall; only when intervals were sampled
     lambda ro, r: _get(ro, "intervals.min_ops_per_sec") if _get(ro, "intervals.count") else None),
    ("db_size_mb", "MB", False, lambda ro, r: _mb(_get(r, "db_size_bytes"))),
    ("peak_rss_mb", "MB", False, lambda ro, r: _mb(_get(r, "peak_rss_bytes"))),
    # kvb --instructions (measure/callgrind.py): the role's loop, the engine's background threads.
    ("instructions_per_op", "instructions/op", False,
     lambda ro, r: _get(ro, "callgrind.instructions_per_op")),
    ("background_instructions_per_op", "instructions/op", False,
     lambda ro, r: _get(r, "callgrind.background_instructions_per_op")),
]


def load_values(paths: list[str]) -> tuple[dict[tuple[str, str], list[float]], list[str]]:
    """(benchmark column, metric) -> one value per run; and the columns in run order. A column is
    the benchmark, with [role] when it has more than one."""
    values: dict[tuple[str, str], list[float]] = {}
    columns: list[str] = []
    for path in paths:
        doc = results.load(path).doc
        for r in doc.get("results", []):
            roles = r.get("roles", [])
            for ro in roles:
                col = r["benchmark"] if len(roles) == 1 else f"{r['benchmark']}[{ro['role']}]"
                if col not in columns:
                    columns.append(col)
                for name, _, _, fn in STUDY_METRICS:
                    v = fn(ro, r)
                    if v is not None:
                        values.setdefault((col, name), []).append(v)
    return values, columns


def median_or_none(v: list[float] | None) -> float | None:
    return statistics.median(v) if v else None


def _ratio(v: float | None, base: float | None) -> str:
    if v is None or base is None:
        return "-"
    if base == 0:
        return "=" if v == 0 else "n/a"
    r = v / base
    # Two decimals, but a small ratio keeps two significant digits (0.0031, not 0.00: that reads
    # as a zero), and a zero is a plain 0.
    return "0" if r == 0 else f"{r:.2g}" if abs(r) < 0.01 else f"{r:.2f}"


def metric_tables(labels: list[str], sides: dict[str, dict[tuple[str, str], list[float]]],
                  columns: list[str], metric_names: list[str]) -> list[str]:
    out: list[str] = []
    base = labels[0]
    for name, unit, higher, _ in STUDY_METRICS:
        if metric_names and name not in metric_names:
            continue
        cols = [c for c in columns if any((c, name) in sides[s] for s in labels)]
        if not cols:
            continue
        if all(v == 0 for s in labels for c in cols for v in sides[s].get((c, name), [])):
            out += [f"{name} ({unit}): 0 in every run", ""]
            continue
        out.append(f"{name} ({unit}, {'higher' if higher else 'lower'} is better): "
                   f"{base} in absolute values, the other rows relative to it")
        rows = relative_rows(labels, cols, lambda s, c: median_or_none(sides[s].get((c, name))))
        out += render(rows, header=["series"] + cols, rule=True) + [""]
    return out


def relative_rows(labels: list[str], cols: list[str],
                  median_of: Any) -> list[list[str]]:
    """A row per series: the first (the base) in absolute values, the others relative to it;
    median_of(series, column) is a median or None. The console's tables and report.html's."""
    base = labels[0]
    rows = []
    for s in labels:
        med = [median_of(s, c) for c in cols]
        if s == base:
            rows.append([f"{s} (base)"] + ["-" if v is None else fmt_value(v) for v in med])
        else:
            rows.append([s] + [_ratio(v, median_of(base, c)) for v, c in zip(med, cols)])
    return rows


def qps_tables(labels: list[str], where: dict[str, dict[str, Any]],
               sides: dict[str, dict[tuple[str, str], list[float]]], columns: list[str],
               threads: list[int]) -> list[str]:
    """One table per benchmark column: QPS@N per group, then KB read and cs per op at the
    largest N (the seeds' r/q@N and cs@N)."""
    out: list[str] = []
    top = max(threads)
    groups: list[str] = []
    for s in labels:
        if s in where and where[s]["group"] not in groups:
            groups.append(where[s]["group"])
    for col in columns:
        if not col.endswith("]") or col.endswith("[reader]"):
            header = ["group"] + [f"QPS@{n}" for n in threads] + [f"KBr/q@{top}", f"cs/q@{top}"]
            rows = []
            for g in groups:
                by_t = {where[s]["threads"]: s for s in labels if s in where
                        and where[s]["group"] == g}
                cells = [median_or_none(sides[by_t[n]].get((col, "ops_per_sec")))
                         if n in by_t else None for n in threads]
                last = by_t.get(top)
                kb = cs = None
                if last:
                    kb = median_or_none(sides[last].get((col, "storage_read_kb_per_op")))
                    cs = median_or_none(sides[last].get((col, "cs_per_op")))
                rows.append([g] + ["-" if v is None else f"{v:,.0f}" for v in cells]
                            + ["-" if kb is None else f"{kb:.3f}",
                               "-" if cs is None else f"{cs:.3f}"])
            out.append(f"{col}: ops/s at each thread count (medians over the rounds)")
            out += render(rows, header=header, rule=True) + [""]
    return out
