"""kvb report: one summary table over kvbench runs: a line per engine, benchmark and role.

  kvb report FILE.json...            ops/s, MB/s, latency, CPU and bytes written per op, size
  kvb report --metrics FILE.json...  every metric the runs describe (their "metrics" array,
                                     docs/json.md), one line per engine, benchmark, role, metric
  kvb report --html OUT.html FILE.json...
                                     one self-contained HTML page with figures (docs/report.md):
                                     context, throughput over time, latency percentiles, cost
                                     per op; kvbench and kvbench_micro files, one or many runs
  kvb report --html OUT.html RESULTS_DIR
                                     the page of a kvb matrix, versions or bisect directory
                                     (they write it there themselves as report.html)
  --svg DIR / --png DIR              also (or only) each figure as its own file, named
                                     <benchmark>[-<role>]-<figure>.svg|png, 1200 px wide PNGs

A file that is not a usable kvbench document is refused with every problem listed (exit 2); a
run that did not complete is reported with a warning (and in the page, with what is missing).
--html, --svg and --png need matplotlib (Debian: python3-matplotlib); without it they exit 2.
"""
from __future__ import annotations

import argparse
from typing import Any, Iterable

from kvbtools.core import command, results, table
from kvbtools.core.table import fmt_value
from kvbtools.core.metrics import value
from kvbtools.core.results import Row

COLUMNS = ["engine", "benchmark", "ops/s", "MB/s", "p50 us", "p99 us", "p99.9 us", "cpu us/op",
           "wKB/op", "db MB", "notes"]


def register(sub: Any) -> None:
    p = command.add(sub, "report", __doc__, run)
    p.add_argument("files", nargs="+", metavar="FILE.json")
    p.add_argument("--metrics", action="store_true",
                   help="every described metric, one line each, instead of the summary")
    p.add_argument("--html", metavar="OUT.html", help="write one self-contained HTML report")
    p.add_argument("--svg", metavar="DIR", help="write every figure as DIR/<name>.svg")
    p.add_argument("--png", metavar="DIR", help="write every figure as DIR/<name>.png")


def _fmt(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def cells(row: Row) -> list[str]:
    d: dict[str, Any] = row.data
    lat = d["latency_ns"]
    cost = d["cost"]
    notes = []
    if row.role == "reader":
        notes.append(f"{d['found']}/{d['found'] + d['not_found']} found")
    if "pacing" in d:
        p = d["pacing"]
        if p["target_bytes_per_sec"] > 0:
            notes.append("sustained" if p["sustained"] else "NOT sustained")
        else:
            notes.append("unpaced")
    if row.reference:
        notes.append("reference engine")
    cpu = cost["cpu_user_us_per_op"] + cost["cpu_sys_us_per_op"]
    wkb = cost.get("storage_write_kb_per_op")
    return [row.engine, row.label, _fmt(d["ops_per_sec"], 0), _fmt(d["mb_per_sec"]),
            _fmt(lat["p50"] / 1e3, 2), _fmt(lat["p99"] / 1e3, 2), _fmt(lat["p99_9"] / 1e3, 2),
            _fmt(cpu, 2), "-" if not isinstance(wkb, (int, float)) else _fmt(wkb, 3),
            _fmt(d["_result"]["db_size_bytes"] / 1048576.0), ", ".join(notes)]


def summary(rows: Iterable[Row]) -> str:
    return "\n".join(table.render([cells(r) for r in rows], header=COLUMNS, left=(0, 1, -1),
                                  rule=True))


def metric_lines(docs: list[results.Document]) -> str:
    body = []
    for d in docs:
        described = d.metrics
        for row in results.rows(d.doc):
            for path, m in described.items():
                v = value(row.data, row.data["_result"], path)
                body.append([row.engine, row.label, path,
                             "-" if v is None else fmt_value(v * m.scale), m.shown_unit,
                             f"{m.better} is better"])
    return "\n".join(table.render(body, header=["engine", "benchmark", "metric", "value",
                                                "unit", ""], left=(0, 1, 2, 4, 5), rule=True))


def run(args: argparse.Namespace) -> int:
    if args.html or args.svg or args.png:
        from kvbtools.pages import report_html  # matplotlib and the figures: only when asked
        return report_html.run(args)
    docs = results.load_all(args.files, [results.KVBENCH])

    for d in docs:
        results.warn_incomplete(d)
    if args.metrics:
        print(metric_lines(docs))
    else:
        print(summary(r for d in docs for r in results.rows(d.doc)))
    return 0

