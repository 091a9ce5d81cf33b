"""kvb report, run: what the command does with its arguments. Its command line and
--help: commands/parsers/report.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
import statistics
from dataclasses import dataclass

from kvbtools.core import environment, output, results, samples, summary as summary_mod, table
from kvbtools.core.errors import UsageError
from kvbtools.core.metrics import value
from kvbtools.core.summary import summary
from kvbtools.core.table import fmt_value
from kvbtools.pages import figures, report_html, result_pages


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(ReportRequest.of(args))


@dataclass(frozen=True)
class ReportRequest:
    """kvb report's arguments as values."""
    files: tuple[str, ...]
    metrics: bool
    html: str | None
    svg: str | None
    png: str | None

    @staticmethod
    def of(args: argparse.Namespace) -> "ReportRequest":
        return ReportRequest(tuple(args.files), args.metrics, args.html, args.svg, args.png)


def metric_lines(docs: list[results.Document]) -> str:
    body = []
    for d in docs:
        if d.kind == results.GBENCH:
            body.extend(micro_metric_rows(d))
            continue
        described = d.metrics
        for row in results.rows(d.doc):
            for path, m in described.items():
                v = value(row.data, row.data["_result"], path)
                body.append([row.engine, row.label, path,
                             "-" if v is None else fmt_value(v * m.scale), m.shown_unit,
                             f"{m.better} is better"])
    return "\n".join(table.render(body, header=["engine", "benchmark", "metric", "value",
                                                "unit", ""], left=(0, 1, 2, 4, 5), rule=True))


def micro_metric_rows(d: results.Document) -> list[list[str]]:
    """A Google Benchmark file's metrics, the median of each benchmark's repetitions (times in
    ns), under the engine column "micro"."""
    side = samples.side_of(d.path, [d])
    return [["micro", bench, key, fmt_value(statistics.median(side.values[(bench, key)])),
             side.metrics[key].unit, f"{side.metrics[key].better} is better"]
            for bench, key in side.order]


# What kvb report reads in a results directory of matrix, versions or bisect (pages/result_pages).
RESULTS_DIR_READS = ("*.json", "*.jsonl")


def run(req: ReportRequest) -> int:
    output.check_outputs(  # exit 2 before any work (docs/cli.md)
        [("--html", req.html), ("--svg", req.svg, ("*.svg",)), ("--png", req.png, ("*.png",))],
        [("input", f, RESULTS_DIR_READS) if os.path.isdir(f) else ("input", f)
         for f in req.files])
    if req.html or req.svg or req.png:
        return write_pages(req)
    docs = results.load_all(list(req.files))

    for d in docs:
        results.warn_incomplete(d)
    if req.metrics:
        print(metric_lines(docs))
        return 0
    kv = [d for d in docs if d.kind == results.KVBENCH]
    pairs = [(d, r) for d in kv for r in results.rows(d.doc)]
    # The runs kvbench called noisy, as the page says them (core/environment.py): at the top,
    # and in their rows' notes.
    noisy = environment.noisy_runs(
        [(os.path.basename(d.path), d.context) for d in kv],
        [samples.side_of(os.path.basename(d.path), [d]) for d in docs if d.kind == results.GBENCH])
    tables = [summary([r for _, r in pairs], [os.path.basename(d.path) for d, _ in pairs],
                      [bool(environment.noisy_reason(d.context)) for d, _ in pairs])] if kv else []
    tables += [summary_mod.micro_summary(d.path, d.doc) for d in docs
               if d.kind == results.GBENCH]
    if len(tables) > len(kv):
        tables.append(summary_mod.MICRO_NOTE)
    print("\n".join(f"noisy: {line}" for line in noisy) + ("\n" if noisy else "")
          + "\n\n".join(tables))
    return 0


def write_pages(req: ReportRequest) -> int:
    """kvb report --html/--svg/--png: files, or one results directory of matrix, versions or
    bisect."""
    figures.pyplot("kvb report --html/--svg/--png")  # exit 2 naming the package, before work
    out = figures.Output(req.svg, req.png)
    dirs = [f for f in req.files if os.path.isdir(f)]
    if dirs:
        if len(req.files) != 1:
            raise UsageError("give one results directory, or result files, not both")
        page = result_pages.page_for_dir(dirs[0])
    else:
        docs = results.load_all(list(req.files))
        for d in docs:
            results.warn_incomplete(d)
        page = report_html.build(docs)
    n = page.write(req.html, out)
    if req.html:
        print(f"report: {req.html} ({n} figures)")
    for path in out.written:
        print(path)
    return 0
