"""Latency distributions from a kvbench document's histogram buckets: the HdrHistogram percentile
distribution text (.hgrm) and the percentile curve the report draws (docs/report.md).

A role's "latency_ns" carries its histogram's non-empty buckets (docs/json.md):
    "buckets": [[low_ns, high_ns, count], ...]          ascending, count > 0
    "hdr_layout": {"buckets": 57, "sub_buckets": 256}   the histogram's shape, for the footer
A bucket's value is its middle clamped to the recorded min and max, as kvbench's percentiles
(latency_ns.p99) are, so a .hgrm row at 0.99 equals latency_ns.p99.

The .hgrm rows are those of HdrHistogram's outputPercentileDistribution with 5 ticks per half
distance (values in microseconds, `Value Percentile TotalCount 1/(1-Percentile)`), plus a row at
each percentile kvbench reports (0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999) where the ticks miss
it, so a reader finds every JSON percentile in the file; then the footer `#[Mean = ...,
StdDeviation = ...]`, `#[Max = ..., Total count = ...]`, `#[Buckets = ..., SubBuckets = ...]`.
"""
from __future__ import annotations

import math
import os
from typing import Any

from kvbtools.core import output, results
from kvbtools.core.errors import UsageError

# kvbench's reported percentiles (latency_ns keys), in percent.
STANDARD = {"p50": 50.0, "p75": 75.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99_9": 99.9,
            "p99_99": 99.99}
TICKS_PER_HALF_DISTANCE = 5
DIGITS = 3           # microseconds with nanosecond resolution


def has_buckets(lat: dict[str, Any]) -> bool:
    b = lat.get("buckets")
    return isinstance(b, list) and len(b) > 0


def buckets(lat: dict[str, Any]) -> list[tuple[float, int]]:
    """(value_ns, count) per non-empty bucket, value = middle clamped to [min, max]."""
    lo, hi = float(lat["min"]), float(lat["max"])
    out = []
    for entry in lat.get("buckets", []):
        low, high, count = entry
        if count > 0:
            out.append((min(max((low + high) / 2.0, lo), hi), int(count)))
    return out


def _rank(percent: float, total: int) -> int:
    """The count at or below which `percent` of values lie, as kvbench's Histogram::Percentile
    computes it (the smallest rank with at least p% of values at or below)."""
    return max(1, math.ceil(percent / 100.0 * total))


def _next_tick(level: float) -> float:
    ticks = TICKS_PER_HALF_DISTANCE * 2 ** (int(math.log(100.0 / (100.0 - level), 2)) + 1)
    return level + 100.0 / ticks


def rows(lat: dict[str, Any]) -> list[tuple[float, float, int]]:
    """(value_ns, percentile 0..1, total count) rows, the last one at percentile 1."""
    bs = buckets(lat)
    total = sum(c for _, c in bs)
    if total == 0:
        return []
    pending = sorted(STANDARD.values())
    level, cum, out = 0.0, 0, []
    for value, count in bs:
        cum += count
        last = cum >= total
        here = []
        # HdrHistogram's levels reached here; in the last bucket only one, as its iterator ends
        # when the count is exhausted (the 100% row follows).
        while 100.0 * cum / total >= level:
            here.append(level)
            level = _next_tick(level)
            if last:
                break
        while pending and cum >= _rank(pending[0], total):
            here.append(pending.pop(0))
        out.extend((value, p / 100.0, cum) for p in sorted(set(here)))
        if last:
            break
    out.append((float(lat["max"]), 1.0, total))  # the 100% row is the max, exactly
    return out


def stddev(lat: dict[str, Any]) -> float:
    """Standard deviation from the buckets' values (as HdrHistogram computes it)."""
    bs = buckets(lat)
    n = sum(c for _, c in bs)
    if n == 0:
        return 0.0
    mean = float(lat["mean"])
    return math.sqrt(sum(c * (v - mean) ** 2 for v, c in bs) / n)


def text(lat: dict[str, Any]) -> str:
    """The .hgrm text of one role's latency (values in microseconds)."""
    d = DIGITS
    out = [f"{'Value':>12} {'Percentile':>14} {'TotalCount':>10} {'1/(1-Percentile)':>14}", ""]
    for value, p, cum in rows(lat):
        if p < 1.0:
            out.append(f"{value / 1e3:12.{d}f} {p:2.12f} {cum:10d} {1.0 / (1.0 - p):14.2f}")
        else:
            out.append(f"{value / 1e3:12.{d}f} {p:2.12f} {cum:10d}")
    layout = lat.get("hdr_layout") or {}
    out.append(f"#[Mean    = {float(lat['mean']) / 1e3:12.{d}f}, StdDeviation   = "
               f"{stddev(lat) / 1e3:12.{d}f}]")
    out.append(f"#[Max     = {float(lat['max']) / 1e3:12.{d}f}, Total count    = "
               f"{int(lat['count']):12d}]")
    out.append(f"#[Buckets = {int(layout.get('buckets', 0)):12d}, SubBuckets     = "
               f"{int(layout.get('sub_buckets', 0)):12d}]")
    return "\n".join(out) + "\n"


def curve(lat: dict[str, Any]) -> tuple[list[float], list[float], bool]:
    """The percentile curve from p50 to max on the 1/(1-p) axis: (xs, values_ns, exact).

    With buckets, a staircase (draw with steps-post): each bucket's value from the percentile
    where it begins; the max sits at x = count (the last of `count` values). Without buckets
    (documents written before kvbench kept them), the reported percentiles and the max as
    points; exact is then False."""
    n = int(lat.get("count", 0))
    if n <= 0:
        return [], [], False
    if has_buckets(lat):
        xs, ys, cum = [], [], 0
        for value, count in buckets(lat):
            start = max(cum / n, 0.5)
            cum += count
            if cum / n <= 0.5 and cum < n:
                continue
            xs.append(1.0 / (1.0 - start))
            ys.append(value)
        xs.append(float(max(n, 2)))
        ys.append(ys[-1] if ys else float(lat["max"]))
        return xs, ys, True
    xs, ys = [], []
    for key, p in STANDARD.items():
        x = 1.0 / (1.0 - p / 100.0)
        if x < n and key in lat:
            xs.append(x)
            ys.append(float(lat[key]))
    xs.append(float(max(n, 2)))
    ys.append(float(lat["max"]))
    return xs, ys, False


def file_stem(benchmark: str, occurrence: int, repeat: int, repeats: int, role: str) -> str:
    """<benchmark>[-<occurrence>][.r<repeat>].<role>: the part after the prefix, the same for
    `kvbench --hgrm_prefix` and `kvb report --hgrm`."""
    name = benchmark + (f"-{occurrence}" if occurrence > 1 else "")
    name += f".r{repeat}" if repeats > 1 else ""
    return f"{name}.{role}"


def export(doc: dict[str, Any], prefix: str) -> list[str]:
    """Writes PREFIX.<stem>.hgrm for every role of every result of a kvbench document; UsageError
    when the document has no buckets (written before kvbench kept them)."""
    written, missing = [], []
    for occ, result, role in results.occurrences(doc):
        lat = role["latency_ns"]
        stem = file_stem(result["benchmark"], occ, result["repeat"], result["repeats"],
                         role["role"])
        if int(lat.get("count", 0)) == 0:
            continue
        if not has_buckets(lat):
            missing.append(stem)
            continue
        path = f"{prefix}.{stem}.hgrm"
        output.write_text(path, text(lat))
        written.append(path)
    if missing:
        raise UsageError(f"no latency buckets for {', '.join(missing)}: the document was written "
                         "by a kvbench that did not keep them; rerun with this kvbench")
    return written


def export_files(paths: list[str], out_dir: str) -> int:
    """kvb export hgrm: every role of every kvbench file, as DIR/<file>.<stem>.hgrm."""
    if not paths:
        raise UsageError("export hgrm: give kvbench result files, right after `hgrm` "
                         "(kvb export hgrm FILE.json... --out DIR)")
    docs = results.load_all(paths, [results.KVBENCH])
    output.make_dirs(out_dir)
    for d in docs:
        results.warn_incomplete(d)
        name = os.path.splitext(os.path.basename(d.path))[0]
        for path in export(d.doc, os.path.join(out_dir, name)):
            print(path)
    return 0
