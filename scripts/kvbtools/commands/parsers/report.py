"""kvb report: one summary table over kvbench runs: a line per engine, benchmark and role;
and one per kvbench_micro (Google Benchmark) file: a line per benchmark.

  kvb report FILE.json...            kvbench: ops/s, MB/s, latency, CPU and bytes written per
                                     op, size; kvbench_micro: time and CPU per iteration, GB/s or
                                     items/s, the median of the repetitions and their CV
  kvb report --metrics FILE.json...  every metric the runs describe (their "metrics" array,
                                     docs/json.md), one line per engine, benchmark, role, metric
                                     (kvbench_micro: per benchmark, engine "micro")
  kvb report --html OUT.html FILE.json...
                                     one self-contained HTML page with figures (docs/report.md):
                                     context, throughput over time, latency percentiles, cost
                                     per op; kvbench and kvbench_micro files, one or many runs
  kvb report --html OUT.html RESULTS_DIR
                                     the page of a kvb matrix, versions or bisect directory
                                     (they write it there themselves as report.html)
  --svg DIR / --png DIR              also (or only) each figure as its own file, named
                                     <benchmark>[-<role>]-<figure>.svg|png, 1200 px wide PNGs

A file that is not a usable kvbench or kvbench_micro document is refused with every problem
listed (exit 2), and so is an --html, --svg or --png path that cannot be written, before anything
is printed; a run that did not complete is reported with a warning (and in the page, with what
is missing). --html, --svg and --png need matplotlib (Debian: python3-matplotlib); without it
they exit 2.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "report", __doc__, "main")
    p.add_argument("files", nargs="+", metavar="FILE.json")
    p.add_argument("--metrics", action="store_true",
                   help="every described metric, one line each, instead of the summary")
    p.add_argument("--html", metavar="OUT.html", help="write one self-contained HTML report")
    p.add_argument("--svg", metavar="DIR", help="write every figure as DIR/<name>.svg")
    p.add_argument("--png", metavar="DIR", help="write every figure as DIR/<name>.png")
