"""A comparison of sides: every other side judged against the first, per (benchmark, metric),
and its text and JSON forms. kvb compare, matrix, versions and bisect build one; their pages draw
it (pages/compare_figures.py, pages/result_pages.py)."""
from __future__ import annotations

import math
import re
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import environment, fingerprint, levels, metrics, results, stats, table
from kvbtools.core.errors import EXIT_CHANGED, EXIT_OK, EXIT_UNDECIDED, UsageError
from kvbtools.core.metrics import Metric
from kvbtools.core.samples import Side, context_preset
from kvbtools.core.table import fmt_value

# Context entries of Google Benchmark JSON that describe the input, not the build: if they
# differ, the sides measured different bytes (kvb compare refuses them: core/comparability.py;
# matrix and kvb micro warn).
INPUT_KEYS = fingerprint.KEY_MICRO_INPUT


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
    judgement: stats.Judgement  # threshold and alpha; each cell's direction is its metric's
    described: int = 0  # the metrics the files describe, when only the headline ones are shown
    # What the verdicts rest on (core/levels.py): the unit each chose, the tests behind them.
    test: str = "core/levels: the highest level with two units a side"
    repetitions_independent: bool = False   # --repetitions-independent: compare.py's model
    family: int = 0     # the tests of the comparison's family (Benjamini-Hochberg)
    # Lines that head the output and every page of it: the differences accepted with
    # --allow-different (core/comparability.py).
    warnings: list[str] = field(default_factory=list)

    @property
    def threshold(self) -> float:
        return self.judgement.threshold

    @property
    def alpha(self) -> float:
        return self.judgement.alpha

    def regressions(self) -> list[Cell]:
        return [c for c in self.cells if c.verdict.regression]

    def undecided(self) -> list[Cell]:
        return [c for c in self.cells if not c.verdict.decided]


def build(sides: list[Side], judgement: stats.Judgement, metric_keys: list[str] | None = None,
          bench_filter: str | None = None, *,
          repetitions_independent: bool = False) -> Comparison:
    """Aligns the sides by (benchmark, metric) and judges every other side against the first:
    by the `judgement`'s threshold and alpha, in each metric's better direction, on the unit
    core/levels chooses (links > processes > repetitions; the repetitions of one process count
    as independent only with `repetitions_independent`), the rows x metrics of the comparison
    one family of tests (Benjamini-Hochberg)."""
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
        metric_keys = list(metrics.CALLGRIND_KV) if sides[0].kind == results.KVBENCH \
            else ["instructions_per_byte"]
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
                v = levels.judge(base.sample((bench, mkey)), s.sample((bench, mkey)),
                                 judgement.for_metric(metric),
                                 repetitions_independent=repetitions_independent,
                                 exact=counted == {True} and not metric.timing,
                                 names=(base.label, s.label))
                cells.append(Cell(metric, bench, s.label, b, o, v))
    judged = levels.family([x.verdict for x in cells], judgement.alpha)
    for x, v in zip(cells, judged):
        x.verdict = v
    return Comparison(sides, chosen, benches, cells, judgement,
                      described=len(described) if headline else 0,
                      repetitions_independent=repetitions_independent,
                      family=sum(1 for v in judged if v.p_adjusted is not None))


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
                      extra: dict[tuple[str, str, str], str] | None = None,
                      reasons: bool = True) -> str:
    """Per metric: the medians ("absolute values"), then the ratios to the base with verdicts
    ("values relative to ...", saying which estimate they are: ratio_meaning), then the
    geometric mean of the ratios. With one other side every
    verdict is spelled out; with several, a ratio without a word is no change (undecided is
    always written). The reasons of undecided rows follow as notes. `extra` (metric, benchmark,
    side) -> text is appended to that ratio cell (e.g. kvb matrix's interval and 'unresolved').
    Without `reasons`, noisy runs are counted and not said why (a page says it at its top)."""
    lines = _heading(c, control, reasons)
    notes: dict[str, list[Cell]] = {}
    by_key = {(x.metric.key, x.bench, x.side): x for x in c.cells}
    for mkey, names in c.benches.items():
        lines.append("")
        lines.extend(_absolute_table(c, mkey, names))
        lines.append(f"values relative to {c.sides[0].label} ("
                     + ratio_meaning([x for x in c.cells if x.metric.key == mkey]) + ")")
        lines.extend(_relative_table(c, mkey, names, by_key, extra or {}, notes))
    skipped = sorted({f"{b}: {m}" for s in c.sides for b, m in s.skipped.items()})
    if skipped:
        lines.append("")
        lines.append("skipped (the benchmark reported an error):")
        lines.extend(f"  {x}" for x in skipped)
    undecided = c.undecided()
    if undecided:
        lines.append("")
        lines.append(f"undecided: {len(undecided)} of {len(c.cells)} row(s): the data can show "
                     "neither a change nor its absence (reasons below); a gate "
                     "(--fail-on-regression) exits 4 on them")
    wide = len(c.sides) > 2
    for n in sorted(notes):
        lines.append(f"note: {n} ({_rows_named(notes[n], wide)})")
    return "\n".join(lines)


# A note names at most this many of its rows.
NAMED_ROWS = 6


def _rows_named(cells: list[Cell], wide: bool) -> str:
    """The rows a note is about, by metric: 'ops_per_sec: memory fillseq, memory readrandom;
    latency_ns.p99: memory fillseq' (with the side when there are several), at most NAMED_ROWS
    of them."""
    by_metric: dict[str, list[str]] = {}
    for x in cells[:NAMED_ROWS]:
        by_metric.setdefault(x.metric.path, []).append(
            x.bench + (f" [{x.side}]" if wide else ""))
    text = "; ".join(f"{m}: {', '.join(rows)}" for m, rows in by_metric.items())
    more = len(cells) - NAMED_ROWS
    return text + (f"; and {more} more row(s)" if more > 0 else "")


# What a ratio is, by its verdict's estimator (stats.Verdict.estimator): the long form says it
# under a table's heading, the short one heads a column.
ESTIMATORS = {stats.MEDIANS: ("the medians' quotient", "median / median"),
              stats.HODGES_LEHMANN: ("the Hodges-Lehmann estimate over the units",
                                     "Hodges-Lehmann"),
              stats.TRIMMED_MEAN: ("the trimmed mean of the ratios paired by round",
                                   "trimmed mean")}


def ratio_meaning(cells: list[Cell], short: bool = False) -> str:
    """What the ratios of these cells are: "ratio: the medians' quotient", or the estimate their
    verdicts tested, "ratio: the Hodges-Lehmann estimate over the units, not the medians'
    quotient" (docs/compare.md, "The ratio"); `short`: a column's name ("Hodges-Lehmann")."""
    kinds = list(dict.fromkeys(x.verdict.estimator for x in cells)) or [stats.MEDIANS]
    if short:
        return " or ".join(ESTIMATORS[k][1] for k in kinds)
    estimates = [ESTIMATORS[k][0] for k in kinds if k != stats.MEDIANS]
    medians = ESTIMATORS[stats.MEDIANS][0]
    if not estimates:
        return f"ratio: {medians}"
    return (f"ratio: {' or '.join(estimates)}, not {medians}"
            + (f"; exact or constant values: {medians}" if stats.MEDIANS in kinds else ""))


def _heading(c: Comparison, control: str, reasons: bool = True) -> list[str]:
    """The sides, warnings about their inputs and environments, and how verdicts are made."""
    lines: list[str] = list(c.warnings)
    base = c.sides[0]
    lines.append("sides (" + ("kvbench" if base.kind == "kvbench" else "Google Benchmark")
                 + " JSON):")
    for s in c.sides:
        presets = sorted({context_preset(ctx) for ctx in s.contexts} - {""})
        what = f"{len(s.paths)} file(s)" + (f", preset {', '.join(presets)}" if presets else "")
        if s.label == control:
            what += (f"; {base.label} measured again, in the same rounds and on the same "
                     "links: an A/A comparison, the noise floor")
        lines.append(f"  {s.label}: {what}"
                     + (f": {', '.join(s.paths)}" if len(s.paths) <= 2 else ""))
    for key in INPUT_KEYS:
        vals = {str(ctx.get(key)) for s in c.sides for ctx in s.contexts if key in ctx}
        if len(vals) > 1:
            lines.append(f"WARNING: '{key}' differs between files ({'; '.join(sorted(vals))}): "
                         "they measured different input; their numbers are not comparable")
    lines.extend(environment.notes(c.sides, reasons))
    wide = len(c.sides) > 2
    if c.described:
        lines.append(f"metrics: the {len(c.metrics)} headline ones (--metric all: the "
                     f"{c.described} the files describe; --metric NAME: chosen ones)")
    family = (f"after Benjamini-Hochberg over the {c.family} tests of this comparison "
              "(adj.)" if c.family > 1 else "")
    lines.append(f"verdict: alpha {c.alpha:g}, threshold {c.threshold * 100:g}%: changed "
                 f"when p<{c.alpha:g} {family}{' ' if family else ''}and the change is at least "
                 f"the threshold; no change "
                 f"when the {stats.pct(1 - c.alpha)} interval of the ratio lies within the "
                 "threshold; otherwise undecided"
                 + ("; a ratio with no word after it is no change" if wide else ""))
    lines.append("unit: " + unit_text(c))
    return lines


def unit_text(c: Comparison) -> str:
    """What the verdicts rested on: '5 processes a side (Mann-Whitney U on each process's
    median)', or each unit with its rows' count when they differ."""
    counts: dict[str, int] = {}
    for x in c.cells:
        u = x.verdict.unit or "-"
        counts[u] = counts.get(u, 0) + 1
    tests = sorted({x.verdict.test.method for x in c.cells if x.verdict.test is not None})
    how = (f" ({', '.join(tests)}; each unit the median of what it holds: links > processes > "
           "repetitions, docs/compare.md)") if tests else ""
    if len(counts) == 1:
        return next(iter(counts)) + how
    return "; ".join(f"{u}: {n} row(s)" for u, n in counts.items()) + how


def _absolute_table(c: Comparison, mkey: str, names: list[str]) -> list[str]:
    """The metric's heading and the median of each side per benchmark."""
    metric = c.metrics[mkey]
    better = "higher" if metric.higher_is_better else "lower"
    ns = {len(s.values.get((b, mkey), [])) for s in c.sides for b in names}
    ntext = f"median of {next(iter(ns))}" if len(ns) == 1 else "median of n"
    lines = [f"{metric.path} [{metric.shown_unit}], {better} is better: {ntext}"]
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
    return lines + table.render(rows)


def _ratio_cell(cell: Cell, wide: bool) -> str:
    """'0.94 slower (p=0.008)', 'faster (p=0.008, adj. 0.031)' when the family's adjustment
    moved it; with several other sides no word for no change."""
    v = cell.verdict
    r = f"{v.ratio:.2f}" if math.isfinite(v.ratio) else "-"
    if v.test is None:
        return f"{r} {v.word}"
    p = fmt_p(v.test.p)
    if v.p_adjusted is not None and fmt_p(v.p_adjusted) != p:
        p += f", adj. {fmt_p(v.p_adjusted)[2:]}"
    if wide and v.word == stats.NO_CHANGE:
        return f"{r} ({p})"
    return f"{r} {v.word} ({p})"


def _relative_table(c: Comparison, mkey: str, names: list[str],
                    by_key: dict[tuple[str, str, str], Cell],
                    extra: dict[tuple[str, str, str], str],
                    notes: dict[str, list[Cell]]) -> list[str]:
    """Each other side's ratio to the base per benchmark, then their geometric means; adds the
    verdicts' notes to `notes`, each with the rows it is about."""
    base = c.sides[0]
    wide = len(c.sides) > 2
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
            row.append(_ratio_cell(cell, wide) + extra.get((mkey, bench, s.label), ""))
            if math.isfinite(cell.verdict.ratio):
                ratios[s.label].append(cell.verdict.ratio)
            if cell.verdict.note:
                notes.setdefault(("" if cell.verdict.decided else "undecided: ")
                                 + cell.verdict.note, []).append(cell)
        rows.append(row)
    row = ["geometric mean", "1.00"]
    for s in c.sides[1:]:
        g = stats.geomean(ratios[s.label])
        row.append(f"{g:.2f}" if math.isfinite(g) else "-")
    rows.append(row)
    # Ratio cells ("0.94 slower (p=0.008)") aligned on the ratio.
    return table.render(rows, left=range(len(rows[0])))


def to_json(c: Comparison) -> dict[str, Any]:
    return {
        "schema": "kvb-comparison", "schema_version": 3,
        "threshold": c.threshold, "alpha": c.alpha, "warnings": c.warnings,
        "sides": [{"label": s.label, "files": s.paths, "kind": s.kind} for s in c.sides],
        "rows": [{
            "metric": x.metric.key, "unit": x.metric.unit, "benchmark": x.bench,
            "side": x.side, "base_values": x.base, "values": x.other,
            "ratio": x.verdict.ratio if math.isfinite(x.verdict.ratio) else None,
            "estimator": x.verdict.estimator,
            "verdict": x.verdict.word, "regression": x.verdict.regression,
            "decided": x.verdict.decided, "reason": x.verdict.note,
            "interval": _interval_json(x.verdict.interval),
            "u": _finite(x.verdict.test.u) if x.verdict.test else None,
            "p": x.verdict.test.p if x.verdict.test else None,
            "p_adjusted": x.verdict.p_adjusted,
            "test": x.verdict.test.method if x.verdict.test else None,
            "rested_on": x.verdict.unit,
        } for x in c.cells],
        "family": {"method": "Benjamini-Hochberg", "tests": c.family},
        "unit": unit_text(c),
        "repetitions_independent": c.repetitions_independent,
    }


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _interval_json(iv: stats.Interval | None) -> list[float] | None:
    """[lo, hi] of other / base, None when there is no finite interval."""
    return [iv.lo, iv.hi] if iv is not None and iv.finite else None


def gate(c: Comparison, asked: bool, ignore: tuple[str, ...] = ()) -> int:
    """The regressions and undecided rows counted on stderr; with --fail-on-regression (`asked`)
    exit 3 for a regression, else 4 when a row is undecided, else 0 (docs/cli.md). Sides
    labelled in `ignore` (matrix's control: the base measured again) are not counted."""
    regressions = [x for x in c.regressions() if x.side not in ignore]
    undecided = [x for x in c.undecided() if x.side not in ignore]
    if regressions:
        print(f"\n{len(regressions)} significant regression(s) beyond "
              f"{c.threshold * 100:g}%", file=sys.stderr)
    if undecided:
        print(f"{'' if regressions else chr(10)}{len(undecided)} row(s) undecided: more runs "
              "would decide them (see the notes)", file=sys.stderr)
    if not asked:
        return EXIT_OK
    return EXIT_CHANGED if regressions else EXIT_UNDECIDED if undecided else EXIT_OK
