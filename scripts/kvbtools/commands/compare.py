"""kvb compare: values of two or more sides and their ratios to the first, with verdicts.

One table per metric, like the "values relative to ..." tables of the seeds: a row per benchmark,
the median of each side, then for every side after the first its ratio to the first side, the
verdict and its p-value (and the p adjusted over the comparison's rows); the last row is the
geometric mean of the ratios. A verdict rests on the highest level with two units a side: links
(code placements), else processes (files): the repetitions inside one process are one sample of
it (--repetitions-independent counts them apart, as Google's compare.py does), so one file a
side is undecided. A comparison's rows and metrics are one family of tests: their p-values are
adjusted by Benjamini-Hochberg. A verdict is one of three: changed (faster / slower, larger /
smaller: direction aware) when the adjusted p < alpha and the change is at least --threshold;
"no change" when the 95% interval of the ratio lies within the threshold; "undecided"
otherwise, with the reason ("n=3+3 cannot reach p<0.05: 4 runs a side needed"). The unit each
verdict rested on is printed ("unit: 5 processes a side"). Before any ratio the sides'
workloads are compared: sides that differ in what defines the workload (sizes, threads, engine
options, memory budget, ...) are "not comparable" (exit 2) unless --allow-different names the
differences to accept. For kvbench files the headline metrics by
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
import os
import re
from dataclasses import dataclass
from typing import Any

from kvbtools.commands import arguments, command
from kvbtools.core import (comparability, compare_by, compare_sides, comparison, fleet, output,
                           profiles, results, stats)
from kvbtools.core.errors import UsageError
from kvbtools.core.samples import context_preset, side_of
from kvbtools.pages import figures, flame_figures, result_pages


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
    p = command.add(sub, "compare", __doc__, lambda args: run(CompareRequest.of(args)))
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="BASE OTHER [OTHER...]: one JSON file per side, the first is the base")
    p.add_argument("--base", nargs="+", metavar="FILE", action=command.Once,
                   help="pool these files as the base side (e.g. several runs of one build); "
                        "given once (--base A B pools A and B)")
    p.add_argument("--other", nargs="+", action="append", metavar="FILE",
                   help="pool these files as one other side; repeat for more sides")
    p.add_argument("--label", action="append", help="name of each side, in order (repeat)")
    p.add_argument("--threshold", type=arguments.parse_threshold,
                   default=arguments.parse_threshold(arguments.DEFAULT_THRESHOLD),
                   help="smallest change that counts, e.g. 5%% (default 5%%)")
    p.add_argument("--alpha", type=arguments.parse_alpha, default=arguments.DEFAULT_ALPHA,
                   help="significance level of the U test (default 0.05)")
    p.add_argument("--metric", action="append",
                   help="only these metrics (repeat), by path or its last part: kvbench: those "
                        "the files describe (e.g. ops_per_sec, p99 for latency_ns.p99, "
                        "cpu_user_us_per_op; default: the headline ones, ops/s, p50/p99/p99.9, "
                        "CPU and storage KB per op, the worst interval; 'all': every one); "
                        "Google Benchmark: bytes_per_second, items_per_second, cpu_time, "
                        "real_time")
    p.add_argument("--filter", metavar="REGEX", help="only benchmarks whose name matches")
    p.add_argument("--repetitions-independent", action="store_true",
                   help="count the repetitions of one process (kvbench --repeats, Google "
                        "Benchmark's --benchmark_repetitions) as independent samples, as "
                        "Google's compare.py does; by default they are one sample of their "
                        "process, and a verdict needs two processes a side (docs/compare.md); "
                        "the verdict line says so")
    p.add_argument("--by", metavar="FIELD",
                   help="compare sides that differ in this context field (engine, build.preset, "
                        "...): rows keyed on benchmark and role, sides labelled by its value. "
                        "Automatic for engine when the sides' engines differ")
    p.add_argument("--allow-different", action="append", metavar="NAME[,NAME...]",
                   help="accept sides whose work differs in these fields (num, key_size, "
                        "threads, compression, memory_budget, ...): without it such sides are "
                        "'not comparable' (exit 2); the accepted differences head the output")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="a gate for CI: exit 3 when a row is a significant regression beyond "
                        "the threshold, else 4 when a row is undecided (too few runs, or an "
                        "interval that spans both no change and a change), else 0 "
                        "(docs/cli.md)")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON here")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write a self-contained HTML page with the ratio figures "
                        "(docs/report.md; needs python3-matplotlib)")
    p.add_argument("--store", metavar="PATH|URL",
                   help="take the sides from the results store: --base and --other are then "
                        "NAME=VALUE selectors, as --filter and kvb store rm take them, e.g. "
                        "--base host=A --other host=B, --base engine=rocksdb --other "
                        "engine=lmdb (docs/history.md, \"Selectors\")")


@dataclass(frozen=True)
class CompareRequest:
    """kvb compare's arguments as values."""
    files: tuple[str, ...]
    base: tuple[str, ...]                 # --base: files, or with --store NAME=VALUE selectors
    others: tuple[tuple[str, ...], ...]   # each --other
    labels: tuple[str, ...]
    judgement: stats.Judgement
    metrics: tuple[str, ...]              # () = the headline ones
    bench_filter: str | None
    by: str | None
    allow_different: tuple[str, ...]
    fail_on_regression: bool
    json: str | None
    html: str | None
    store: str | None
    repetitions_independent: bool = False

    @staticmethod
    def of(args: argparse.Namespace) -> "CompareRequest":
        return CompareRequest(
            tuple(args.files), tuple(args.base or ()), tuple(tuple(o) for o in args.other or ()),
            tuple(args.label or ()), arguments.judgement(args), tuple(args.metric or ()),
            args.filter, args.by, tuple(args.allow_different or ()), args.fail_on_regression,
            args.json, args.html, args.store, args.repetitions_independent)


def run(req: CompareRequest) -> int:
    output.check_writable(req.json, "--json")  # exit 2 before any output (docs/cli.md)
    output.check_writable(req.html, "--html")
    if req.html:
        figures.pyplot("kvb compare --html")  # exit 2 naming the package before any work
    if req.bench_filter:
        try:
            re.compile(req.bench_filter)
        except re.error as e:
            raise UsageError(f"--filter: bad regular expression: {e}") from None
    allowed = comparability.parse_allowed(req.allow_different)
    if req.store:
        if req.files:
            raise UsageError("with --store, give the sides as --base NAME=VALUE... --other "
                             "NAME=VALUE..., not files")
        if not req.base or not req.others:
            raise UsageError("--store needs --base and --other selectors, e.g. --base host=A "
                             "--other host=B")
        # The selectors' fields are the axis of the comparison (core/fleet.py).
        sides = [list(req.base), *(list(o) for o in req.others)]
        with fleet.selected_files(req.store, sides) as (groups, labels, named):
            return compare(req, groups, list(req.labels) or labels, allowed, named)
    return compare(req, file_groups(req), list(req.labels) or None, allowed, set())


def file_groups(req: CompareRequest) -> list[list[str]]:
    """The sides' files: BASE OTHER... or --base FILE... --other FILE... (repeatable)."""
    if req.base or req.others:
        if req.files:
            raise UsageError("give files either positionally or with --base/--other, not both")
        if not req.base or not req.others:
            raise UsageError("--base and --other go together")
        groups = [list(req.base), *(list(o) for o in req.others)]
    elif len(req.files) < 2:
        raise UsageError("need a base and at least one other file (kvb compare BASE OTHER)")
    else:
        groups = [[f] for f in req.files]
    compare_sides.check_files(groups)  # no run on two sides, none twice (exit 2)
    return groups


def compare(req: CompareRequest, groups: list[list[str]], given: list[str] | None,
            allowed: set[str], axes: set[str]) -> int:
    """Loads the sides, checks that they measured the same work but for `allowed` and the
    `axes`, prints the comparison and writes what was asked; the gate's exit status."""
    labels = unique_labels(groups, given)
    # Every file checked before any is used: all their problems in one message.
    loaded = {d.path: d for d in results.load_all(dict.fromkeys(f for g in groups for f in g))}
    compare_sides.check_documents([[loaded[f] for f in g] for g in groups])
    sides = [side_of(label, [loaded[f] for f in g]) for label, g in zip(labels, groups)]
    if not given:
        presets = [{context_preset(ctx) for ctx in s.contexts} for s in sides]
        names = [next(iter(p)) for p in presets if len(p) == 1]
        if len(names) == len(sides) and all(names) and len(set(names)) == len(names):
            for s, n in zip(sides, names):
                s.label = n
    by = req.by or (compare_by.auto_field(sides) if sides[0].kind == results.KVBENCH else "")
    if by:
        compare_by.rekey(sides, by, relabel=not given)
    warnings = comparability.check(sides, allowed, axes | {by} if by else axes)
    c = comparison.build(sides, req.judgement, metric_keys=list(req.metrics) or None,
                         bench_filter=req.bench_filter,
                         repetitions_independent=req.repetitions_independent)
    c.warnings = warnings
    if not c.cells:
        raise UsageError("nothing to compare: no benchmark and metric is in both the base and "
                         "another side" + (" and matches --filter" if req.bench_filter else "")
                         + " (" + "; ".join(f"{s.label}: {len({b for b, _ in s.order})} "
                                            "benchmark(s)" for s in sides) + ")")
    print(comparison.format_comparison(c))
    side_docs = [[loaded[f] for f in g] for g in groups]
    moved = profiles.compare_text(side_docs, [s.label for s in sides])  # kvbench --profile
    if moved:
        print(moved)
    if req.json:
        results.write_json(req.json, comparison.to_json(c))
    if req.html:
        n = result_pages.write_comparison(req.html, c, extra=lambda page: (
            flame_figures.add_diff_sections(page, [profiles.of_documents(d) for d in side_docs],
                                            [s.label for s in sides])))
        print(f"report: {req.html} ({n} figures)")
    return comparison.gate(c, req.fail_on_regression)
