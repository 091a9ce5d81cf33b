"""kvb compare: values of two or more sides and their ratios to the first, with verdicts.

One table per metric, like the "values relative to ..." tables of the seeds: a row per benchmark,
the median of each side, then for every side after the first its ratio to the first side, the
verdict (faster / slower / no significant change, direction aware) and the Mann-Whitney p-value;
the last row is the geometric mean of the ratios. For kvbench files the headline metrics by
default (ops/s, p50/p99/p99.9, CPU and storage per op, the worst interval, size; --metric all:
every one). matrix, versions and bisect print through here.
--html OUT.html also writes a page with a figure per metric: each side's ratio to the base with
its 95% interval (docs/report.md).
Files of `kvbench --profile` runs also get, per benchmark and role, the functions whose CPU time
per op moved most (self and total, ns/op), and on the page a differential flame graph of each
side against the base (docs/profile.md).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass
from typing import Any

from kvbtools import (command, compare_by, environment, flame_figures, metrics, profiles,
                      results, stats, table)
from kvbtools.errors import UsageError
from kvbtools.metrics import Metric
from kvbtools.samples import Side, context_preset, side_of
from kvbtools.table import fmt_value

# Context entries of Google Benchmark JSON that describe the input, not the build: if they
# differ, the sides measured different bytes.
INPUT_KEYS = ("input", "cache_mode")


def parse_threshold(text: str) -> float:
    """'5%' -> 0.05; '0.05' -> 0.05; '5' -> 0.05 (a bare number of 1 or more is percent)."""
    def fraction(t: str) -> float:
        if t.endswith("%"):
            return float(t[:-1]) / 100.0
        v = float(t)
        return v / 100.0 if v >= 1 else v
    return command.checked(text.strip(), fraction, f"not a threshold: {text!r} (e.g. 5%)",
                           lambda v: 0 <= v < 10, f"threshold out of range: {text!r}")


def parse_alpha(text: str) -> float:
    return command.checked(text, float, f"not a number: {text!r}", lambda v: 0 < v < 1,
                           "alpha must be between 0 and 1")


@dataclass
class Cell:
    metric: Metric
    bench: str
    side: str
    base: list[float]
    other: list[float]
    verdict: stats.Verdict


@dataclass
class Comparison:
    sides: list[Side]
    metrics: dict[str, Metric]
    benches: dict[str, list[str]]         # metric key -> benchmarks in order
    cells: list[Cell]
    threshold: float
    alpha: float
    described: int = 0  # the metrics the files describe, when only the headline ones are shown

    def regressions(self) -> list[Cell]:
        return [c for c in self.cells if c.verdict.regression]


def build(sides: list[Side], *, threshold: float, alpha: float,
          metric_keys: list[str] | None = None, bench_filter: str | None = None) -> Comparison:
    """Aligns the sides by (benchmark, metric) and judges every other side against the first."""
    kinds = {s.kind for s in sides}
    if len(kinds) > 1:
        raise UsageError("cannot compare kvbench results with Google Benchmark results: "
                         + ", ".join(f"{s.label} is {s.kind}" for s in sides))
    # kvb --instructions files (callgrind.py): their times are callgrind's, not the machine's.
    counted = {"kvbench_instructions" in ctx for s in sides for ctx in s.contexts}
    if len(counted) > 1:
        raise UsageError("some files count instructions under callgrind (--instructions) and "
                         "some are timed: instructions and time cannot be compared")
    if counted == {True} and not metric_keys:
        metric_keys = ["instructions_per_byte"]
    described = union_of_metrics(sides)
    asked = bool(metric_keys)  # --metric given (all included): every row of what it names
    every = bool(metric_keys) and metrics.ALL in metric_keys  # type: ignore[operator]
    headline = not asked and sides[0].kind == results.KVBENCH
    if every or not asked:
        chosen = {k: described[k] for k in metrics.KVBENCH_HEADLINE
                  if k in described} if headline else described
    else:
        chosen = metrics.select(described, metric_keys, sides[0].kind)  # type: ignore[arg-type]
    rx = re.compile(bench_filter) if bench_filter else None
    base = sides[0]
    # Google Benchmark rows: a rate when there is one, time per iteration only for benchmarks
    # without a rate (unless --metric asks for it).
    rated = {b for s in sides for b, m in s.order if m in metrics.GBENCH_RATES}
    def wanted(bench: str, mkey: str) -> bool:
        if rx is not None and not rx.search(bench):
            return False
        return asked or mkey not in metrics.GBENCH_TIMES or bench not in rated
    benches: dict[str, list[str]] = {}
    cells: list[Cell] = []
    for mkey, metric in chosen.items():
        names: list[str] = []
        for s in sides:
            for bench, mk in s.order:
                if mk == mkey and bench not in names and wanted(bench, mkey):
                    names.append(bench)
        if not names:
            continue
        benches[mkey] = names
        for bench in names:
            b = base.values.get((bench, mkey))
            for s in sides[1:]:
                o = s.values.get((bench, mkey))
                if not b or not o:
                    continue
                v = stats.verdict(b, o, higher_is_better=metric.higher_is_better,
                                  threshold=threshold, alpha=alpha,
                                  better_word=metric.better_word, worse_word=metric.worse_word)
                cells.append(Cell(metric, bench, s.label, b, o, v))
    return Comparison(sides, chosen, benches, cells, threshold, alpha,
                      described=len(described) if headline else 0)


def union_of_metrics(sides: list[Side]) -> dict[str, Metric]:
    """The metrics the sides' files describe, the base's first; one described differently by
    two sides (another unit or direction) is refused."""
    out: dict[str, Metric] = {}
    for s in sides:
        for key, m in s.metrics.items():
            known = out.setdefault(key, m)
            if known != m:
                raise UsageError(f"metric {key} is {m.unit}, {m.better} is better in side "
                                 f"{s.label} but {known.unit}, {known.better} in another side")
    return out


def fmt_p(p: float) -> str:
    return f"p={p:.3f}" if p >= 0.001 else "p<0.001"


def format_comparison(c: Comparison, control: str = "",
                      extra: dict[tuple[str, str, str], str] | None = None) -> str:
    """Per metric: the medians ("absolute values"), then the ratios to the base with verdicts
    ("values relative to ..."), then the geometric mean of the ratios. With one other side the
    verdict is spelled out; with several, a ratio without a word is no significant change.
    `extra` (metric, benchmark, side) -> text is appended to that ratio cell (e.g. the interval
    and 'unresolved at n=12' of kvb matrix --until-resolved)."""
    lines: list[str] = []
    base = c.sides[0]
    lines.append("sides (" + ("kvbench" if base.kind == "kvbench" else "Google Benchmark")
                 + " JSON):")
    for s in c.sides:
        presets = sorted({context_preset(ctx) for ctx in s.contexts} - {""})
        what = f"{len(s.paths)} file(s)" + (f", preset {', '.join(presets)}" if presets else "")
        if s.label == control:
            what += f"; {base.label} measured again as an independent series: the noise floor"
        lines.append(f"  {s.label}: {what}"
                     + (f": {', '.join(s.paths)}" if len(s.paths) <= 2 else ""))
    for key in INPUT_KEYS:
        vals = {str(ctx.get(key)) for s in c.sides for ctx in s.contexts if key in ctx}
        if len(vals) > 1:
            lines.append(f"WARNING: '{key}' differs between files ({'; '.join(sorted(vals))}): "
                         "they measured different input; their numbers are not comparable")
    lines.extend(environment.notes(c.sides))
    wide = len(c.sides) > 2
    if c.described:
        lines.append(f"metrics: the {len(c.metrics)} headline ones (--metric all: the "
                     f"{c.described} the files describe; --metric NAME: chosen ones)")
    lines.append(f"verdict: Mann-Whitney U two-sided, alpha {c.alpha:g}, threshold "
                 f"{c.threshold * 100:g}% (smaller changes are no significant change)"
                 + ("; a ratio with no word after it is no significant change" if wide else ""))
    notes: set[str] = set()
    by_key = {(x.metric.key, x.bench, x.side): x for x in c.cells}
    for mkey, names in c.benches.items():
        metric = c.metrics[mkey]
        lines.append("")
        better = "higher" if metric.higher_is_better else "lower"
        ns = {len(s.values.get((b, mkey), [])) for s in c.sides for b in names}
        ntext = f"median of {next(iter(ns))}" if len(ns) == 1 else "median of n"
        lines.append(f"{metric.path} [{metric.shown_unit}], {better} is better: {ntext}")
        rows = [[""] + [s.label for s in c.sides]]
        for bench in names:
            row = [bench]
            if len(ns) > 1:
                counts = [len(s.values.get((bench, mkey), [])) for s in c.sides]
                row[0] += f" (n={counts[0]})" if len(set(counts)) == 1 else \
                    " (n=" + "/".join(map(str, counts)) + ")"
            for s in c.sides:
                vals = s.values.get((bench, mkey))
                if vals:
                    row.append(fmt_value(statistics.median(vals) * metric.scale))
                else:
                    row.append("skipped" if bench in s.skipped else "absent")
            rows.append(row)
        lines.extend(table.render(rows))
        lines.append(f"values relative to {base.label}")
        rows = [[""] + [s.label for s in c.sides]]
        ratios: dict[str, list[float]] = {s.label: [] for s in c.sides[1:]}
        for bench in names:
            b = base.values.get((bench, mkey))
            row = [bench, "1.00" if b else "-"]
            for s in c.sides[1:]:
                cell = by_key.get((mkey, bench, s.label))
                if cell is None:
                    row.append("-")
                    continue
                v = cell.verdict
                r = f"{v.ratio:.2f}" if math.isfinite(v.ratio) else "-"
                if v.test is None:
                    row.append(f"{r} ({v.word})")
                elif wide and v.better is None:
                    row.append(f"{r} ({fmt_p(v.test.p)})")
                else:
                    row.append(f"{r} {v.word} ({fmt_p(v.test.p)})")
                if extra:
                    row[-1] += extra.get((mkey, bench, s.label), "")
                if math.isfinite(v.ratio):
                    ratios[s.label].append(v.ratio)
                if v.note:
                    notes.add(v.note)
            rows.append(row)
        row = ["geometric mean", "1.00"]
        for s in c.sides[1:]:
            g = stats.geomean(ratios[s.label])
            row.append(f"{g:.2f}" if math.isfinite(g) else "-")
        rows.append(row)
        # Ratio cells ("0.94 slower (p=0.008)") aligned on the ratio.
        lines.extend(table.render(rows, left=range(len(rows[0]))))
    skipped = sorted({f"{b}: {m}" for s in c.sides for b, m in s.skipped.items()})
    if skipped:
        lines.append("")
        lines.append("skipped (the benchmark reported an error):")
        lines.extend(f"  {x}" for x in skipped)
    if any(x.verdict.word == stats.NOISE_UNKNOWN for x in c.cells):
        notes.add("n=1: a single value per side gives no estimate of the noise; rerun with "
                  "repeats (kvbench --repeats=5, kvbench_micro --benchmark_repetitions=5)")
    for n in sorted(notes):
        lines.append(f"note: {n}")
    return "\n".join(lines)


def to_json(c: Comparison) -> dict[str, Any]:
    return {
        "schema": "kvb-comparison", "schema_version": 1,
        "threshold": c.threshold, "alpha": c.alpha,
        "sides": [{"label": s.label, "files": s.paths, "kind": s.kind} for s in c.sides],
        "rows": [{
            "metric": x.metric.key, "unit": x.metric.unit, "benchmark": x.bench,
            "side": x.side, "base_values": x.base, "values": x.other,
            "ratio": x.verdict.ratio if math.isfinite(x.verdict.ratio) else None,
            "verdict": x.verdict.word, "regression": x.verdict.regression,
            "u": x.verdict.test.u if x.verdict.test else None,
            "p": x.verdict.test.p if x.verdict.test else None,
            "test": x.verdict.test.method if x.verdict.test else None,
        } for x in c.cells],
    }


def unique_labels(groups: list[list[str]], labels: list[str] | None) -> list[str]:
    """Explicit --label values, else each side's preset when all differ, else file names."""
    if labels:
        if len(labels) != len(groups):
            raise UsageError(f"{len(labels)} --label value(s) for {len(groups)} sides")
        return labels
    names = []
    for g in groups:
        n = os.path.basename(g[0])
        names.append(n + (f"+{len(g) - 1}" if len(g) > 1 else ""))
    if len(set(names)) < len(names):
        names = [f"{i}:{n}" for i, n in enumerate(names)]
    return names


def register(sub: Any) -> None:
    p = command.add(sub, "compare", __doc__, run)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="BASE OTHER [OTHER...]: one JSON file per side, the first is the base")
    p.add_argument("--base", nargs="+", metavar="FILE",
                   help="pool these files as the base side (e.g. several runs of one build)")
    p.add_argument("--other", nargs="+", action="append", metavar="FILE",
                   help="pool these files as one other side; repeat for more sides")
    p.add_argument("--label", action="append", help="name of each side, in order (repeat)")
    p.add_argument("--threshold", type=parse_threshold, default=parse_threshold("5%"),
                   help="smallest change that counts, e.g. 5%% (default 5%%)")
    p.add_argument("--alpha", type=parse_alpha, default=0.05,
                   help="significance level of the U test (default 0.05)")
    p.add_argument("--metric", action="append",
                   help="only these metrics (repeat), by path or its last part: kvbench: those "
                        "the files describe (e.g. ops_per_sec, p99 for latency_ns.p99, "
                        "cpu_user_us_per_op; default: the headline ones, ops/s, p50/p99/p99.9, "
                        "CPU and storage KB per op, the worst interval; 'all': every one); "
                        "Google Benchmark: bytes_per_second, items_per_second, cpu_time, "
                        "real_time")
    p.add_argument("--filter", metavar="REGEX", help="only benchmarks whose name matches")
    p.add_argument("--by", metavar="FIELD",
                   help="compare sides that differ in this context field (engine, build.preset, "
                        "...): rows keyed on benchmark and role, sides labelled by its value. "
                        "Automatic for engine when the sides' engines differ")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any row is a significant regression beyond the threshold")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON here")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write a self-contained HTML page with the ratio figures "
                        "(docs/report.md; needs python3-matplotlib)")
    p.add_argument("--store", metavar="PATH|URL",
                   help="take the sides from the results store: --base and --other are then "
                        "NAME=VALUE selectors, e.g. --base host=A --other host=B "
                        "(docs/history.md)")


def run(args: argparse.Namespace) -> int:
    if args.html:
        from kvbtools import figures
        figures.pyplot("kvb compare --html")  # exit 2 naming the package before any work
    if getattr(args, "store", None):
        from kvbtools import fleet
        with fleet.selected_files(args) as (groups, labels):
            args.store, args.base, args.other = None, groups[0], groups[1:]
            args.label = args.label or labels
            return run(args)
    groups: list[list[str]] = []
    if args.base or args.other:
        if args.files:
            raise UsageError("give files either positionally or with --base/--other, not both")
        if not args.base or not args.other:
            raise UsageError("--base and --other go together")
        groups = [args.base, *args.other]
    else:
        if len(args.files) < 2:
            raise UsageError("need a base and at least one other file (kvb compare BASE OTHER)")
        groups = [[f] for f in args.files]
    if args.filter:
        try:
            re.compile(args.filter)
        except re.error as e:
            raise UsageError(f"--filter: bad regular expression: {e}") from None
    labels = unique_labels(groups, args.label)
    # Every file checked before any is used: all their problems in one message.
    loaded = {d.path: d for d in results.load_all(dict.fromkeys(f for g in groups for f in g))}
    sides = [side_of(label, [loaded[f] for f in g]) for label, g in zip(labels, groups)]
    if not args.label:
        presets = [{context_preset(ctx) for ctx in s.contexts} for s in sides]
        names = [next(iter(p)) for p in presets if len(p) == 1]
        if len(names) == len(sides) and all(names) and len(set(names)) == len(names):
            for s, n in zip(sides, names):
                s.label = n
    by = args.by or (compare_by.auto_field(sides) if sides[0].kind == results.KVBENCH else "")
    if by:
        compare_by.rekey(sides, by, relabel=not args.label)
    c = build(sides, threshold=args.threshold, alpha=args.alpha, metric_keys=args.metric,
              bench_filter=args.filter)
    if not c.cells:
        raise UsageError("nothing to compare: no benchmark and metric is in both the base and "
                         "another side" + (" and matches --filter" if args.filter else "")
                         + " (" + "; ".join(f"{s.label}: {len({b for b, _ in s.order})} "
                                            "benchmark(s)" for s in sides) + ")")
    print(format_comparison(c))
    side_docs = [[loaded[f] for f in g] for g in groups]
    moved = profiles.compare_text(side_docs, [s.label for s in sides])  # kvbench --profile
    if moved:
        print(moved)
    if args.json:
        results.write_json(args.json, to_json(c))
    if args.html:
        from kvbtools import result_pages  # matplotlib: only when asked
        n = result_pages.write_comparison(args.html, c, extra=lambda page: (
            flame_figures.add_diff_sections(page, [profiles.of_documents(d) for d in side_docs],
                                            [s.label for s in sides])))
        print(f"report: {args.html} ({n} figures)")
    regressions = c.regressions()
    if regressions:
        print(f"\n{len(regressions)} significant regression(s) beyond "
              f"{args.threshold * 100:g}%", file=sys.stderr)
    return 1 if args.fail_on_regression and regressions else 0

