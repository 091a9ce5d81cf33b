"""kvb export: the store's series for the tools people already run (docs/history.md).

  kvb export csv [--out DIR]   Apache Otava's (Hunter's) CSV layout, one file per test (a
                               benchmark row on one fingerprint): one row per run; columns
                               time, the attributes (commit, library versions, ...), then one
                               column per metric (its path: ops_per_sec, latency_ns.p99, ...)
                               holding the run's median in the unit the documents give it
                               (kvbench_micro's cpu_time and real_time in ns). Without --out:
                               one test, on stdout.
  kvb export bencher [--out FILE] [--document HASH]
                               Bencher Metric Format JSON for one run of each series (the
                               latest, or the stored document HASH): {"benchmark": {"metric":
                               {"value": median, "lower_value": lo, "upper_value": hi}}},
                               the interval being kvb history's (omitted for n = 1).
The usual --filter, --metric (default: every stored metric) and --store apply.
  kvb export hgrm FILE.json... [--out DIR]
                               HdrHistogram percentile distributions from kvbench result
                               files (not the store): DIR/<file>.<benchmark>.<role>.hgrm per
                               role, values in microseconds (docs/report.md); DIR defaults
                               to the current directory.
  kvb export folded FILE.json... [--out DIR]
                               The CPU profiles of kvbench --profile runs as folded stacks
                               ("frame;frame;frame samples" per line: flamegraph.pl, inferno,
                               speedscope): DIR/<file>.<benchmark>.<role>.folded per profiled
                               role, repeats pooled (docs/profile.md); DIR defaults to the
                               current directory.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
from typing import Any

from kvbtools.core import command, hgrm, output, profiles, results
from kvbtools.commands import history
from kvbtools.core.errors import UsageError
from kvbtools.core.series import Point, Series, shown_attributes


def tests(series: list[Series]) -> dict[tuple[str, str], list[Series]]:
    """Series grouped into Otava tests: one benchmark row on one fingerprint (metrics apart)."""
    out: dict[tuple[str, str], list[Series]] = {}
    for s in series:
        out.setdefault((s.row, s.fingerprint), []).append(s)
    return out


def test_name(row: str, fingerprint: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", f"{row}-{fingerprint[:12]}").strip("_")


def csv_text(group: list[Series]) -> str:
    runs: dict[int, Point] = {}
    cells: dict[tuple[int, str], float] = {}
    for s in group:
        for p in s.points:
            runs.setdefault(p.document, p)
            cells[(p.document, s.metric)] = p.median
    order = sorted(runs.values(), key=lambda p: (p.time, p.document))
    attrs = sorted({k for p in order for k in shown_attributes(p.attributes)} - {"commit"})
    metrics = [s.metric for s in group]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["time", "commit", "document", *attrs, *metrics])
    for p in order:
        w.writerow([p.time, p.commit, p.hash[:12], *(p.attributes.get(a, "") for a in attrs),
                    *(repr(cells[(p.document, m)]) if (p.document, m) in cells else ""
                      for m in metrics)])
    return buf.getvalue()


def bencher_doc(series: list[Series], document: str | None) -> dict[str, Any]:
    names: dict[tuple[str, str], str] = {}
    rows_per_name: dict[str, set[str]] = {}
    for s in series:
        rows_per_name.setdefault(s.row, set()).add(s.fingerprint)
    out: dict[str, Any] = {}
    for s in series:
        points = [p for p in s.points if document is None or p.hash.startswith(document)]
        if not points:
            continue
        p = points[-1]
        name = names.setdefault((s.row, s.fingerprint), s.row if len(rows_per_name[s.row]) == 1
                                else f"{s.row} [{s.fingerprint[:12]}]")
        measure: dict[str, float] = {"value": p.median}
        if p.n > 1:
            lo, hi, _ = p.interval
            measure.update(lower_value=lo, upper_value=hi)
        out.setdefault(name, {})[s.metric] = measure
    return out


def cmd(args: argparse.Namespace) -> int:
    # --out checked before any work (docs/cli.md): bencher writes a file, the others a directory.
    (output.check_writable if args.format == "bencher" else output.check_directory)(
        args.out, "--out")
    if args.format == "folded":
        if not args.files:
            raise UsageError("export folded: give kvbench result files of --profile runs")
        return profiles.export_files(args.files, args.out or ".",
                                     results.load_all(args.files, [results.KVBENCH]))
    if args.format == "hgrm":
        return hgrm.export_files(args.files, args.out or ".")
    if args.files:
        raise UsageError(f"export {args.format} reads the store, not files (hgrm and folded "
                         "read files)")
    if not args.metric:
        args.metric = ["all"]
    st, series = history.select(args)
    st.close()
    if not series:
        raise UsageError("no series in the store" + (" matches the filters" if args.filter
                                                      else ""))
    if args.format == "bencher":
        doc = bencher_doc(series, args.document.lower() if args.document else None)
        if not doc:
            raise UsageError(f"no stored run's hash starts with {args.document!r}")
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
        if args.out:
            output.write_text(args.out, text)
        else:
            sys.stdout.write(text)
        return 0
    groups = tests(series)
    if not args.out:
        if len(groups) > 1:
            raise UsageError(f"{len(groups)} tests (benchmark row x fingerprint) match: name one "
                             "with --filter, or write one CSV each with --out DIR")
        sys.stdout.write(csv_text(next(iter(groups.values()))))
        return 0
    output.make_dirs(args.out)
    for (row, fp), group in groups.items():
        output.write_text(os.path.join(args.out, test_name(row, fp) + ".csv"), csv_text(group))
    print(f"wrote {len(groups)} CSV file(s) to {args.out}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "export", __doc__, cmd)
    p.add_argument("format", choices=("csv", "bencher", "hgrm", "folded"))
    p.add_argument("files", nargs="*", metavar="FILE.json",
                   help="hgrm, folded: kvbench result files, right after the format")
    history.add_selection_arguments(p)
    p.add_argument("--out", metavar="PATH", help="csv, hgrm: a directory; bencher: a file "
                                                 "(default: stdout; hgrm, folded: .)")
    p.add_argument("--document", metavar="HASH", help="bencher: this stored run instead of "
                                                      "each series' latest")
