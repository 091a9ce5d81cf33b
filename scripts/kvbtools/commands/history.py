"""kvb history: the series in the results store and their points (docs/history.md).

A series is one benchmark row (kvbench: engine, benchmark and role; kvbench_micro: the benchmark
name) x one metric x one fingerprint (the key fields of scripts/kvbtools/core/fingerprint.py: host,
build configuration, workload). A point is one stored run: the median of its repeats, a 95%
interval and n. The columns after the interval show what changed at that point: the attributes
(kvbench commit, library versions and origins, compiler version, kernel, ...) that differ from
the point before. --by NAME splits series further by an attribute, --filter NAME=VALUE keeps
the series and runs that match (series columns: kind, engine, benchmark, role, row, metric,
fingerprint; or any stored field: host, preset, workload.num, lib.rocksdb.version, commit,
context.<path>, ...).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import command, store as store_mod
from kvbtools.core.errors import UsageError
from kvbtools.core.metrics import Metric
from kvbtools.core.table import fmt_value as fmt

SERIES_COLUMNS = {"kind": "s.kind", "engine": "s.engine", "benchmark": "s.benchmark",
                  "role": "s.role", "row": "s.row_name", "metric": "s.metric"}
# The first of these a row has is its default metric (kvb compare's choice for micro rows).
PRIMARY = ("ops_per_sec", "bytes_per_second", "items_per_second", "cpu_time")


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """A distribution-free interval of the median from the order statistics: the narrowest
    [x(k), x(n+1-k)] covering at least 95% (binomial, p = 1/2). Below n = 6 no such pair
    reaches 95%; then min..max, with its coverage 1 - 2^(1-n). Returns (lo, hi, coverage)."""
    xs = sorted(values)
    n = len(xs)
    if n < 2:
        return xs[0], xs[0], 0.0
    def coverage(k: int) -> float:  # P(x(k) <= median <= x(n+1-k))
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0 ** n
    k = 1
    while k + 1 <= n // 2 and coverage(k + 1) >= 0.95:
        k += 1
    return xs[k - 1], xs[n - k], coverage(k)


@dataclass
class Point:
    document: int
    hash: str
    time: str
    values: list[float] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def interval(self) -> tuple[float, float, float]:
        return median_interval(self.values)

    @property
    def commit(self) -> str:
        return self.attributes.get("commit", "")


@dataclass
class Series:
    id: int
    kind: str
    row: str
    metric: str                     # the metric's path (metrics.py)
    unit: str
    better: str
    fingerprint: str
    key: dict[str, str]
    split: dict[str, str] = field(default_factory=dict)
    points: list[Point] = field(default_factory=list)

    @property
    def info(self) -> Metric:
        return Metric(self.metric, self.unit, self.better)

    @property
    def label(self) -> str:
        extra = "".join(f" {k}={v}" for k, v in self.split.items())
        return f"{self.row} {self.metric}{extra}"

    def values(self) -> list[float]:
        return [p.median for p in self.points]


def shown_attributes(attrs: dict[str, str]) -> dict[str, str]:
    """The normalised attributes (fingerprint.py), without the raw context copies."""
    return {k: v for k, v in attrs.items() if not k.startswith("context.")}


def changed(prev: Point | None, p: Point) -> dict[str, tuple[str, str]]:
    """Attributes that differ from the point before: name -> (before, after)."""
    if prev is None:
        return {}
    a, b = shown_attributes(prev.attributes), shown_attributes(p.attributes)
    return {k: (a.get(k, ""), b.get(k, "")) for k in sorted(set(a) | set(b))
            if a.get(k, "") != b.get(k, "")}


def _where(filters: list[tuple[str, str]]) -> tuple[str, list[Any]]:
    sql, params = ["d.complete = 1"], []
    for k, v in filters:
        if k in SERIES_COLUMNS:
            sql.append(f"{SERIES_COLUMNS[k]} = ?")
            params.append(v)
        elif k == "fingerprint":
            sql.append("f.hash LIKE ?")
            params.append(v.lower() + "%")
        elif k == "document":
            sql.append("d.hash LIKE ?")
            params.append(v.lower() + "%")
        else:
            sql.append("EXISTS (SELECT 1 FROM fields x WHERE x.document_id = d.id AND "
                       "x.name = ? AND x.value = ?)")
            params += [k, v]
    return " AND ".join(sql), params


def _attributes(st: store_mod.Store, docs: list[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {d: {} for d in docs}
    for i in range(0, len(docs), 500):
        chunk = docs[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for d, name, value in st.q("SELECT document_id, name, value FROM fields WHERE "
                                   f"is_key = 0 AND document_id IN ({marks})", chunk):
            out[int(d)][name] = value
    return out


def load(st: store_mod.Store, *, filters: list[tuple[str, str]] | None = None,
         metrics: list[str] | None = None, by: list[str] | None = None) -> list[Series]:
    """The series matching the filters, each with its points in time order. metrics: None for
    each row's primary metric, ["all"] for every stored one."""
    where, params = _where(filters or [])
    rows = st.q("SELECT s.id, s.kind, s.row_name, s.metric, s.unit, s.better, f.hash, f.fields, "
                "d.id, d.hash, d.run_utc, m.value FROM measurements m "
                "JOIN series s ON s.id = m.series_id JOIN documents d ON d.id = m.document_id "
                f"JOIN fingerprints f ON f.id = s.fingerprint_id WHERE {where} "
                "ORDER BY s.id, d.run_utc, d.id, m.repeat_index", params).fetchall()
    series: dict[int, Series] = {}
    for sid, kind, row, metric, unit, better, fhash, fields, doc, dhash, run_utc, value in rows:
        s = series.get(sid)
        if s is None:
            s = series[sid] = Series(int(sid), kind, row, metric, unit, better, fhash,
                                     json.loads(fields))
        if not s.points or s.points[-1].document != doc:
            s.points.append(Point(int(doc), dhash, run_utc))
        s.points[-1].values.append(float(value))
    out = [s for s in series.values() if _wanted(s, metrics, series.values())]
    attrs = _attributes(st, sorted({p.document for s in out for p in s.points}))
    for s in out:
        for p in s.points:
            p.attributes = attrs[p.document]
    out = split_by(out, by or [])
    out.sort(key=lambda s: (s.kind, s.row, s.metric, s.key.get("host", ""), s.fingerprint,
                            tuple(s.split.values())))
    return out


def _wanted(s: Series, metrics: list[str] | None, everything: Any) -> bool:
    if metrics and "all" in metrics:
        return True
    if metrics:
        return s.metric in metrics
    have = {x.metric for x in everything if x.row == s.row and x.fingerprint == s.fingerprint}
    return s.metric == next((m for m in PRIMARY if m in have), s.metric)


def split_by(series: list[Series], by: list[str]) -> list[Series]:
    if not by:
        return series
    out = []
    for s in series:
        groups: dict[tuple[str, ...], list[Point]] = {}
        for p in s.points:
            groups.setdefault(tuple(p.attributes.get(k, s.key.get(k, "")) for k in by),
                              []).append(p)
        for values, points in groups.items():
            out.append(Series(s.id, s.kind, s.row, s.metric, s.unit, s.better, s.fingerprint,
                              s.key, dict(zip(by, values)), points))
    return out


# ---- text ---------------------------------------------------------------------------------------

def describe_key(key: dict[str, str], common: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in key.items() if common.get(k) != v)


def common_items(dicts: list[dict[str, str]]) -> dict[str, str]:
    if not dicts:
        return {}
    first = dicts[0]
    return {k: v for k, v in first.items() if all(d.get(k) == v for d in dicts[1:])}


def format_series(s: Series, common_key: dict[str, str], number: int) -> list[str]:
    m = s.info
    scale = m.scale
    lines = [f"[{number}] {s.label} [{m.shown_unit}], {'higher' if m.higher_is_better else 'lower'} "
             f"is better; fingerprint {s.fingerprint[:12]}"]
    own = describe_key(s.key, common_key)
    if own:
        lines.append(f"    key: {own}")
    rows = [["#", "time", "commit", "median", "95% interval", "n", "changed"]]
    prev = None
    narrow = False
    for i, p in enumerate(s.points, 1):
        lo, hi, cov = p.interval
        if p.n < 2:
            iv = "-"
        else:
            iv = f"{fmt(lo * scale)}..{fmt(hi * scale)}" + ("" if cov >= 0.95 else "*")
            narrow = narrow or cov < 0.95
        diff = changed(prev, p)
        rows.append([str(i), p.time, p.commit or "-", fmt(p.median * scale), iv, str(p.n),
                     ", ".join(f"{k} {a or '-'} -> {b or '-'}" for k, (a, b) in diff.items())])
        prev = p
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        cells = [r[c].rjust(widths[c]) if c in (0, 3, 5) else r[c].ljust(widths[c])
                 for c in range(len(r))]
        lines.append("    " + "  ".join(cells).rstrip())
    if narrow:
        lines.append("    * min..max: with fewer than 6 repeats no order-statistics interval "
                     "reaches 95% (coverage 1 - 2^(1-n): 75% at n=3, 94% at n=5)")
    return lines


def format_history(series: list[Series], where: str) -> str:
    npoints = sum(len(s.points) for s in series)
    lines = [f"store: {where}: {len(series)} series, {npoints} points"]
    common: dict[str, dict[str, str]] = {}
    for kind in sorted({s.kind for s in series}):
        common[kind] = common_items([s.key for s in series if s.kind == kind])
        lines.append(f"key fields of every {kind} series below: "
                     + " ".join(f"{k}={v}" for k, v in common[kind].items()))
    for i, s in enumerate(series, 1):
        lines.append("")
        lines.extend(format_series(s, common[s.kind], i))
    return "\n".join(lines)


# ---- the command --------------------------------------------------------------------------------

def add_selection_arguments(p: argparse.ArgumentParser) -> None:
    store_mod.add_store_arguments(p)
    p.add_argument("--filter", action="append", metavar="NAME=VALUE",
                   help="only series and runs with this value (repeat: all must match), e.g. "
                        "engine=memory, host=vm, workload.num=20000, lib.rocksdb.version=7.8.3")
    p.add_argument("--metric", action="append",
                   help="only these metrics (repeat), a path or its last parts as kvb compare "
                        "takes them (p99, cpu_user_us_per_op); 'all' for every stored one; "
                        "default: each row's primary metric, ops_per_sec or bytes_per_second")
    p.add_argument("--by", action="append", metavar="NAME",
                   help="split series further by this attribute (repeat), e.g. "
                        "lib.rocksdb.version or kernel")


def metric_names(st: store_mod.Store, asked: list[str] | None) -> list[str] | None:
    """--metric values as stored paths: a whole path or its last parts (p99 for latency_ns.p99,
    as kvb compare takes them), or "all"; None for each row's primary metric."""
    if not asked or "all" in asked:
        return asked
    stored = [m for (m,) in st.q("SELECT DISTINCT metric FROM series ORDER BY metric")]
    out = []
    for n in asked:
        hits = [m for m in stored if m == n or m.endswith("." + n)]
        if len(hits) != 1:
            raise UsageError(f"{'ambiguous' if hits else 'unknown'} metric {n}; the store has: "
                             f"{', '.join(stored) or 'none'}")
        out.append(hits[0])
    return out


def select(args: argparse.Namespace) -> tuple[store_mod.Store, list[Series]]:
    """Opens the store and loads the series the common arguments select."""
    filters = list(store_mod.parse_pairs(args.filter, "--filter").items())
    st = store_mod.open_store(args.store)
    try:
        series = load(st, filters=filters, metrics=metric_names(st, args.metric), by=args.by)
    except BaseException:
        st.close()
        raise
    return st, series


def cmd(args: argparse.Namespace) -> int:
    st, series = select(args)
    with st:
        where = store_mod.shown(st.loc)
    if not series:
        raise UsageError(f"no series in {where}" + (" matches the filters" if args.filter
                                                    else ""))
    if args.html:
        from kvbtools.pages import history_figures
        from kvbtools.commands import trend
        analyses = [trend.analyse(s, trend.Params()) for s in series]
        history_figures.write_history_html(args.html, series, analyses, where)
        print(f"wrote {args.html}: {len(series)} series", file=sys.stderr)
    else:
        print(format_history(series, where))
    return 0


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "history", __doc__, cmd)
    add_selection_arguments(p)
    p.add_argument("--html", metavar="OUT",
                   help="draw every series over time, with intervals and change points, as "
                        "one self-contained HTML page (needs python3-matplotlib)")
