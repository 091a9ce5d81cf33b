"""kvb compare, run: what the command does with its arguments. Its command line and
--help: commands/parsers/compare.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass

from kvbtools.commands import arguments
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


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(CompareRequest.of(args))


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
    output.check_outputs(  # exit 2 before any output (docs/cli.md)
        [("--json", req.json), ("--html", req.html)],
        [arguments.store_input(req.store)] if req.store else
        [("input", f) for f in (*req.files, *req.base, *(f for o in req.others for f in o))])
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
        got = fleet.selected(req.store, sides)
        return compare(req, got.groups, list(req.labels) or got.labels, allowed, got.axes,
                       got.contents)
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
            allowed: set[str], axes: set[str], contents: dict[str, bytes] | None = None) -> int:
    """Loads the sides (files, or the stored documents in `contents`), checks that they
    measured the same work but for `allowed` and the `axes`, prints the comparison and writes
    what was asked; the gate's exit status."""
    labels = unique_labels(groups, given)
    # Every file checked before any is used: all their problems in one message.
    loaded = {d.path: d for d in results.load_all(dict.fromkeys(f for g in groups for f in g),
                                                  contents=contents)}
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
