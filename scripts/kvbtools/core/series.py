"""Series of the results store: one row (benchmark and role, or micro benchmark name) x one
metric x one fingerprint (core/fingerprint.py), its points in time order, each the repeats of one
run (docs/history.md). kvb history lists and draws them, trend tests them, export writes them."""
from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import store as store_mod, store_runs
from kvbtools.core.errors import UsageError
from kvbtools.core.metrics import Metric

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

def _where(filters: dict[str, str]) -> tuple[str, list[Any]]:
    """The selectors of kvb compare --store and kvb store rm (store_runs.selector_where), the
    series fields (engine, benchmark, metric, ...) on the series s itself."""
    more, params = store_runs.selector_where(filters, series=True)
    return " AND ".join(["d.complete = 1", *more]), params


def _attributes(st: store_mod.Store, docs: list[int]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {d: {} for d in docs}
    for i in range(0, len(docs), 500):
        chunk = docs[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for d, name, value in st.q("SELECT document_id, name, value FROM fields WHERE "
                                   f"is_key = 0 AND document_id IN ({marks})", chunk):
            out[int(d)][name] = value
    return out

def load(st: store_mod.Store, *, filters: dict[str, str] | None = None,
         metrics: list[str] | None = None, by: list[str] | None = None) -> list[Series]:
    """The series matching the filters (NAME=VALUE selectors: store_runs.parse_selectors), each
    with its points in time order. metrics: None for each row's primary metric, ["all"] for
    every stored one."""
    store_runs.check_names(st, filters or {})
    where, params = _where(filters or {})
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

def select(location: str | None, filters: list[str], metrics: list[str],
           by: list[str]) -> tuple[store_mod.Store, list[Series]]:
    """Opens the store at `location` (None: the default one) and loads the series kvb history,
    trend and export select: the NAME=VALUE `filters` (--filter), the `metrics` (metric_names;
    [] for each row's primary one) and split `by` attributes. The caller closes the store."""
    selectors = store_runs.parse_selectors(filters or None, "--filter")
    st = store_mod.open_store(location)
    try:
        series = load(st, filters=selectors, metrics=metric_names(st, metrics or None),
                      by=by or None)
    except BaseException:
        st.close()
        raise
    return st, series
