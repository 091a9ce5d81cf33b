"""kvb export, run: what the command does with its arguments. Its command line and
--help: commands/parsers/export.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

from kvbtools.commands.arguments import Selection, store_input
from kvbtools.core import hgrm, output, profiles, results
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


def outputs_and_inputs(req: ExportRequest) -> tuple[list[output.Named], list[output.Named]]:
    """What export writes and reads: bencher a file (or stdout), csv a directory (or stdout) of
    TEST.csv, both from the store; hgrm and folded DIR/<file>.*.hgrm, .folded (default the
    current directory) from the files."""
    if req.format == "bencher":
        return [("--out", req.out)], [store_input(req.selection.store)]
    if req.format == "csv":
        return [("--out", req.out, ("*.csv",))], [store_input(req.selection.store)]
    stems = [glob.escape(os.path.splitext(os.path.basename(f))[0]) for f in req.files]
    return ([("--out", req.out or ".", tuple(f"{s}.*.{req.format}" for s in stems))],
            [("input", f) for f in req.files])


def cmd(req: ExportRequest) -> int:
    output.check_outputs(*outputs_and_inputs(req))  # exit 2 before any work (docs/cli.md)
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
    _, series = req.selection.series(("all",))
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


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return cmd(ExportRequest.of(args))
