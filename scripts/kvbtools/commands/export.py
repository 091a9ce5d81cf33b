"""kvb export: the store's series for the tools people already run (docs/history.md).

  kvb export csv [--out DIR]   Apache Otava's (Hunter's) CSV layout, one file per test (a
                               benchmark row on one fingerprint): one row per run; columns
                               time, the attributes (commit, library versions, ...), then one
                               column per metric (its path: ops_per_sec, latency_ns.p99, ...)
                               holding the run's median in the unit the documents give it
                               (kvbench_micro's cpu_time and real_time in ns). Without --out:
                               one test, on stdout.
  kvb export bencher [--out FILE] [--document HASH] [--name-by FIELD]
                               Bencher Metric Format JSON for one run of each series (the
                               latest, or the stored document HASH): {"benchmark": {"metric":
                               {"value": median, "lower_value": lo, "upper_value": hi}}},
                               the interval being kvb history's (omitted for n = 1). The
                               benchmark is the series' row ("rocksdb fillseq",
                               "rocksdb readwhilewriting[writer]"), with
                               "[FIELD=value, ...]" of each --name-by key field: never the
                               fingerprint, so adding a configuration renames nothing. Two
                               configurations that would share a name are refused (exit 2):
                               --filter one (a Bencher testbed each), or --name-by a field
                               that tells them apart.
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
from dataclasses import dataclass
from typing import Any

from kvbtools.commands import arguments, command
from kvbtools.commands.arguments import Selection
from kvbtools.core import hgrm, output, profiles, results
from kvbtools.core.errors import UsageError
from kvbtools.core.series import Point, Series, select, shown_attributes


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


def bencher_name(s: Series, name_by: list[str]) -> str:
    """A series' Bencher benchmark name: its row, and the values of the --name-by key fields
    and --by attributes it has. Nothing in it depends on the other series in the store, so a
    configuration added later never renames one (Bencher keys a benchmark's history by name)."""
    label = [f"{k}={s.key[k]}" for k in name_by if k in s.key]
    label += [f"{k}={v}" for k, v in s.split.items()]
    return s.row + (f" [{', '.join(label)}]" if label else "")


def _refuse_collisions(chosen: list[tuple[Series, Point, str]]) -> None:
    """Two configurations under one benchmark name would interleave in one Bencher history:
    refused, naming the key fields that tell them apart."""
    seen: dict[tuple[str, str], list[Series]] = {}
    for s, _, name in chosen:
        seen.setdefault((name, s.metric), []).append(s)
    for (name, _), group in sorted(seen.items()):
        if len(group) < 2:
            continue
        keys = [dict(s.key, **s.split) for s in group]
        differ = sorted(k for k in {k for d in keys for k in d}
                        if len({d.get(k, "-") for d in keys}) > 1)
        what = "; ".join(f"{k}: {', '.join(sorted({d.get(k, '-') for d in keys}))}"
                         for k in differ)
        raise UsageError(f"{len(group)} configurations (fingerprints "
                         f"{', '.join(s.fingerprint[:12] for s in group)}) would share the "
                         f"Bencher benchmark {name!r}; they differ in {what}. Export one "
                         f"configuration per Bencher testbed (--filter {differ[0]}=VALUE, "
                         f"bencher run --testbed NAME), or label them (--name-by {differ[0]})")


def bencher_doc(series: list[Series], document: str | None,
                name_by: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The BMF document of each series' latest run (or the stored run `document`), and the
    fingerprints it holds."""
    chosen = []
    for s in series:
        points = [p for p in s.points if document is None or p.hash.startswith(document)]
        if points:
            chosen.append((s, points[-1], bencher_name(s, name_by)))
    unknown = [k for k in name_by if not any(k in s.key for s, _, _ in chosen)]
    if chosen and unknown:
        fields = sorted({k for s, _, _ in chosen for k in s.key})
        raise UsageError(f"--name-by {unknown[0]}: not a key field of the exported series "
                         f"(their key fields: {', '.join(fields)})")
    _refuse_collisions(chosen)
    out: dict[str, Any] = {}
    for s, p, name in chosen:
        measure: dict[str, float] = {"value": p.median}
        if p.n > 1:
            lo, hi, _ = p.interval
            measure.update(lower_value=lo, upper_value=hi)
        out.setdefault(name, {})[s.metric] = measure
    return out, sorted({s.fingerprint for s, _, _ in chosen})


@dataclass(frozen=True)
class ExportRequest:
    """kvb export's arguments as values."""
    format: str                  # csv, bencher, hgrm, folded
    files: tuple[str, ...]       # hgrm, folded
    selection: Selection         # csv, bencher
    out: str | None
    document: str | None
    name_by: tuple[str, ...]

    @staticmethod
    def of(args: argparse.Namespace) -> "ExportRequest":
        return ExportRequest(args.format, tuple(args.files), Selection.of(args), args.out,
                             args.document, tuple(args.name_by or ()))


def cmd(req: ExportRequest) -> int:
    # --out checked before any work (docs/cli.md): bencher writes a file, the others a directory.
    (output.check_writable if req.format == "bencher" else output.check_directory)(
        req.out, "--out")
    if req.format == "folded":
        if not req.files:
            raise UsageError("export folded: give kvbench result files of --profile runs")
        return profiles.export_files(list(req.files), req.out or ".",
                                     results.load_all(list(req.files), [results.KVBENCH]))
    if req.format == "hgrm":
        return hgrm.export_files(list(req.files), req.out or ".")
    if req.files:
        raise UsageError(f"export {req.format} reads the store, not files (hgrm and folded "
                         "read files)")
    sel = req.selection
    st, series = select(sel.store, list(sel.filters), list(sel.metrics) or ["all"], list(sel.by))
    st.close()
    if not series:
        raise UsageError("no series in the store" + (" matches the filters" if sel.filters
                                                      else ""))
    if req.format == "bencher":
        doc, fingerprints = bencher_doc(series, req.document.lower() if req.document else None,
                                        list(req.name_by))
        if not doc:
            raise UsageError(f"no stored run's hash starts with {req.document!r}")
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
        if req.out:
            output.write_text(req.out, text)
        else:
            sys.stdout.write(text)
        # BMF has no field for it (a measure holds value, lower_value, upper_value): said here.
        print(f"{req.out or 'stdout'}: {len(doc)} Bencher benchmark(s) of fingerprint(s) "
              f"{', '.join(f[:12] for f in fingerprints)}", file=sys.stderr)
        return 0
    return write_csv(series, req.out)


def write_csv(series: list[Series], out: str | None) -> int:
    """One Otava CSV per test into the directory `out`, or the one test on stdout."""
    groups = tests(series)
    if not out:
        if len(groups) > 1:
            raise UsageError(f"{len(groups)} tests (benchmark row x fingerprint) match: name one "
                             "with --filter, or write one CSV each with --out DIR")
        sys.stdout.write(csv_text(next(iter(groups.values()))))
        return 0
    output.make_dirs(out)
    for (row, fp), group in groups.items():
        output.write_text(os.path.join(out, test_name(row, fp) + ".csv"), csv_text(group))
    print(f"wrote {len(groups)} CSV file(s) to {out}", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "export", __doc__, lambda args: cmd(ExportRequest.of(args)))
    p.add_argument("format", choices=("csv", "bencher", "hgrm", "folded"))
    p.add_argument("files", nargs="*", metavar="FILE.json",
                   help="hgrm, folded: kvbench result files, right after the format")
    arguments.add_selection_arguments(p, metric_default="every stored metric ('all')")
    p.add_argument("--out", metavar="PATH", help="csv, hgrm: a directory; bencher: a file "
                                                 "(default: stdout; hgrm, folded: .)")
    p.add_argument("--document", metavar="HASH", help="bencher: this stored run instead of "
                                                      "each series' latest")
    p.add_argument("--name-by", action="append", metavar="FIELD",
                   help="bencher: add this key field's value to each benchmark name (repeat), "
                        "e.g. host or workload.num, to export several configurations at once")
