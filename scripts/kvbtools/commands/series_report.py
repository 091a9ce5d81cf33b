"""What kvb matrix and kvb versions share: the runner's Workload from the request (make_plan: a
study's too); and once the builds are known, the dry run, the results directory, the operation
(measure/series_run.py: one plan on the engine), then its table (printed and in table.txt), <kind>.json, report.html,
summary.txt, the results store and the gate.

Not a command: cli.py registers none of it; matrix and versions call run_series.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Any, Callable

from kvbtools.commands.arguments import PlanRequest
from kvbtools.core import (comparability, comparison, compiled, manifest, output, profiles,
                           placement, results, store)
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure import callgrind, fleet, pinning, runner, series_run
from kvbtools.measure.plan import FLOOR, Variant
from kvbtools.core.presets import load_presets
from kvbtools.measure.runner import Build, Workload
from kvbtools.measure.series_run import Judging, Key, SeriesOutcome
from kvbtools.pages import result_pages


def make_plan(req: PlanRequest, micro: bool, micro_filter: str) -> Workload:
    """What every series runs: kvbench_micro (`micro`, with `micro_filter` unless --filter
    is given) or kvbench's workloads on the engines. UsageError for bad values, an engine
    no kvbench here knows, or --instructions without valgrind."""
    if req.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    num = req.num if req.num is not None else \
        callgrind.KV_NUM if req.instructions and not micro else 100000
    if num < 1 or req.min_time <= 0:
        raise UsageError("--num and --min-time must be positive")
    if req.filter:
        try:
            re.compile(req.filter)
        except re.error as e:
            raise UsageError(f"--filter: bad regular expression: {e}") from None
    if req.instructions and (req.layouts or 1) > 1:
        raise UsageError("--instructions counts instructions, which do not depend on where "
                         "the linker puts the code: leave out --layouts")
    if req.profile and req.instructions:
        raise UsageError("--profile samples CPU time and --instructions counts instructions "
                         "under callgrind: give one of them")
    if req.profile and micro:
        raise UsageError("--profile profiles kvbench's KV runs; kvbench_micro has no "
                         "profiler of its own (perf record -e cpu-clock -g on kvbench_micro "
                         "does it)")
    if req.instructions:
        callgrind.require_valgrind()
    plan = Workload(micro=micro, micro_filter=req.filter or micro_filter if micro else "",
                instructions=req.instructions, min_time=req.min_time,
                engines=[e for e in (req.engines or manifest.default_engine()).split(",")
                         if e],
                workloads=req.workloads, num=num,
                extra=[] if micro else list(req.kvbench_args)
                + (["--profile"] if req.profile else []))
    manifest.check_known_engines([] if plan.micro else plan.engines)  # check_plan once built
    return plan


def metric_keys(req: PlanRequest, plan: Workload) -> tuple[str, ...]:
    """--metric; the instruction counts' own metrics when --instructions counts them."""
    return req.metrics or (tuple(callgrind.default_metrics(plan.micro))
                           if plan.instructions else ())


def run_series(kind: str, what: str, builds: list[Build], plan: Workload, req: PlanRequest,
               meta: dict[str, Any], prepare: Callable[[], None] | None = None,
               outdir: str | None = None) -> int:
    """Builds every build, measures them (and the control) in rounds, prints and saves the
    tables; `kind` (matrix, versions) names the results directory (with `what`) and its JSON;
    `meta` heads that JSON. `prepare` runs after every check and before anything is written
    (matrix: the library sources the builds need, fetched). `outdir`: the results directory,
    made by the caller (one architecture's of several: commands/matrix.py)."""
    on = req.fleet()
    if on is None:   # a node's CPUs are checked there (pinning.choose_pin)
        pinning.check_cpu(req.cpu)
    if plan.instructions:
        presets = load_presets()
        callgrind.check_presets([(b.preset, presets[b.preset].cache)
                                 for b in builds if b.preset in presets])
    for b in builds:
        b.layouts = 1 if b.prebuilt else req.links()
    variants = [Variant(b.label, b.label) for b in builds]
    if req.control and variants:
        variants.append(Variant(series_run.CONTROL, variants[0].build))
    if req.dry_run:
        dry_run(builds, variants, plan, req)
        if on is not None:
            print(fleet_text(on, builds))
        return 0
    if prepare is not None:
        prepare()
    judging = Judging(req.judgement, metric_keys(req, plan), req.filter)
    outdir = outdir or output.new_results_dir(kind, what, req.results_dir)
    try:
        outcome = series_run.run(kind, builds, variants, plan, judging, req.budget(), req.cpu,
                                 outdir, on)
        return report(kind, outdir, outcome, builds, plan, req, meta)
    except (RunError, UsageError) as e:
        output.write_summary(outdir, f"kvb {kind} failed: {e}")
        raise
    except KeyboardInterrupt:
        output.write_summary(outdir, f"kvb {kind} was interrupted; the runs so far are here")
        raise


def dry_run(builds: list[Build], variants: list[Variant], plan: Workload,
            req: PlanRequest) -> None:
    """--dry-run: the builds' commands and the first rounds' order; nothing built or run."""
    print("builds:")
    for b in builds:
        print(f"  {b.label}: {' '.join(b.configure_cmd())}")
        print(f"  {' ' * len(b.label)}  {' '.join(b.build_cmd(plan.micro))}")
    k, b = req.links(), req.budget()
    first = min(b.max_rounds, k * b.rounds_per_link(k))
    print(f"first rounds (round, layout seed, series, engine; the order rotates by one series "
          f"a round), {k} link{'s' if k != 1 else ''}:")
    for r in range(1, first + 1):
        rotated = variants[(r - 1) % len(variants):] + variants[:(r - 1) % len(variants)]
        for v in rotated:
            for e in runner.engines(v, plan):
                print(f"  {r} seed {(r - 1) % k} {v.label}" + (f" {e}" if e else ""))
    if first < b.max_rounds:
        seconds = (f"{b.max_seconds:g} s" if b.max_seconds is not None else
                   f"as long as the builds take (at least {FLOOR:g} s)")
        print(f"then rounds or links where the variance is, until every row's 95% interval is "
              f"narrower than {req.judgement.threshold * 100:g}%, at most {b.max_rounds} "
              f"rounds and {seconds} of measuring and relinking"
              + ("" if k > 1 else " (one link: rounds only)"))
    if plan.instructions:
        print("cpu: not pinned (--instructions: instruction counts do not depend on the CPU)")
    else:
        print(f"cpu: --cpu {req.cpu}" + (", chosen after the builds (kvbench's canary)"
                                         if req.cpu == "auto" else ""))


def fleet_text(on: fleet.Fleet, builds: list[Build]) -> str:
    """--dry-run --slurm: where the jobs would go."""
    archs = list(dict.fromkeys(fleet.arch(b.preset) for b in builds))
    lines = []
    for a in archs:
        lines.append(f"slurm: {a}: each build's configure and build a job (sbatch "
                     f"{shlex.join(on.build_options(a))}); each step's rounds a job on each "
                     f"node up of: sbatch {shlex.join(on.measure_options(a))}")
    return "\n".join(lines)


def row_texts(outcome: SeriesOutcome, threshold: float) -> dict[Key, str]:
    """Each ratio cell's interval, 'unresolved' when it is not narrower than the threshold, and
    the row's note when no build compiled its library (core/compiled.py)."""
    out = {}
    notes = compiled.notes(outcome.comparison, (series_run.CONTROL,))
    for x in outcome.comparison.cells:
        key = (x.metric.key, x.bench, x.side)
        iv = x.verdict.interval
        text = f" {iv.text()}" if iv is not None else ""
        if not outcome.resolved.get(key, False):
            text += (f" unresolved ({iv.width * 100:.0f}% wide)" if iv is not None
                     and iv.finite else " unresolved")
        if (x.bench, x.side) in notes:
            text += "; same installed library"   # the note itself follows the table
        out[key] = text
    return out


def table_text(outcome: SeriesOutcome, plan: Workload, req: PlanRequest,
               mismatches: list[str]) -> str:
    """The comparison with each row's interval (and 'unresolved' where it is too wide), the
    cost line, the CPU line, the placement spread with several links, the warnings and, for
    kvbench --profile runs, the functions that moved."""
    c, threshold = outcome.comparison, req.judgement.threshold
    text = comparison.format_comparison(c, control=series_run.CONTROL if req.control else "",
                                        extra=row_texts(outcome, threshold))
    if plan.instructions:
        text += f"\n[lo, hi]: each ratio's 95% interval; {callgrind.CAVEAT}"
    else:
        text += (f"\n[lo, hi]: each ratio's {100 * (1 - req.judgement.alpha):g}% interval; a row "
                 f"is resolved when it is narrower than {threshold * 100:g}% (its width only: "
                 "docs/compare.md, Adaptive rounds)")
    text += "".join(f"\nnote: {line}" for line in compiled.note_lines(c, (series_run.CONTROL,)))
    text += "".join(f"\ncompiled: {line}" for line in compiled.origin_lines(
        c, (series_run.CONTROL,)))
    text += "\n" + cost_line(outcome)
    text += f"\ncpu: {outcome.pin.text}"
    if outcome.set_apart:
        text += "".join(f"\nset apart: {note}" for note in outcome.set_apart.values())
    if outcome.spent.links > 1:
        text += "\n" + "\n".join(placement_lines(c))
    elif not plan.instructions:
        text += ("\nplacement: not sampled (one link per build: the verdicts are about these "
                 "binaries; --layouts K samples it)")
    text += "".join(f"\nWARNING: {m}" for m in mismatches)
    text += profiles.compare_text([results.load_all(s.paths) for s in c.sides],
                                  [s.label for s in c.sides])  # kvbench --profile runs
    return text


def cost_line(outcome: SeriesOutcome) -> str:
    return "cost: " + outcome.spent.text(outcome.unresolved())


def report_json(outcome: SeriesOutcome, builds: list[Build], meta: dict[str, Any],
                mismatches: list[str]) -> dict[str, Any]:
    """<kind>.json: the comparison's rows (each with its interval and resolution), what the
    decision cost, the CPU, every run with its link and round (report.html pairs them again),
    the builds."""
    c = outcome.comparison
    doc = comparison.to_json(c)
    notes = compiled.notes(c, (series_run.CONTROL,))
    for row, cell in zip(doc["rows"], c.cells):
        row["resolved"] = outcome.resolved.get((cell.metric.key, cell.bench, cell.side), False)
        row["note"] = notes.get((cell.bench, cell.side))
    doc["compiled"] = compiled.origins(c, (series_run.CONTROL,))
    doc["cost"] = outcome.spent.to_json(outcome.unresolved())
    doc["cpu"] = outcome.pin.to_json()
    if outcome.hosts:   # --slurm: the nodes that measured, and their CPUs
        doc["hosts"] = outcome.hosts
    doc["plan"] = outcome.plan.to_json()
    doc["set_apart"] = {str(r): note for r, note in outcome.set_apart.items()}
    doc["runs"] = [dict(x.to_json(), set_apart=x.round in outcome.set_apart)
                   for x in outcome.runs]
    doc.update(meta)
    doc["build_seconds"] = outcome.build_seconds
    doc["builds"] = {b.label: {"preset": b.preset, "dir": b.dir, "defines": b.defines,
                               "links": b.layouts} for b in builds}
    doc["failed_builds"] = outcome.failed
    doc["library_version_mismatches"] = mismatches
    return doc


def report(kind: str, outdir: str, outcome: SeriesOutcome, builds: list[Build], plan: Workload,
           req: PlanRequest, meta: dict[str, Any]) -> int:
    """Prints the table and writes table.txt, <kind>.json, report.html and summary.txt; stores
    the runs (unless --no-store); the gate's exit status (the control not counted)."""
    c = outcome.comparison
    mismatches = comparability.check_library_versions(c.sides, meta.get("expect", {}))
    text = table_text(outcome, plan, req, mismatches)
    times = "build times: " + ", ".join(f"{k} {v:.0f} s" for k, v in outcome.build_seconds.items())
    print(text)
    print(times)
    output.write_text(os.path.join(outdir, "table.txt"), text + "\n" + times + "\n")
    results.write_json(os.path.join(outdir, f"{kind}.json"),
                       report_json(outcome, builds, meta, mismatches))
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    output.write_summary(outdir, f"kvb {kind} done: {cost_line(outcome)}; the tables are in "
                                 "table.txt")
    print(f"results: {output.shown(outdir)}/ (table.txt, {kind}.json, "
          "one JSON per run)")
    if not req.no_store:
        store.auto_store([f for s in c.sides for f in s.paths], req.store)
    return comparison.gate(c, req.fail_on_regression, ignore=(series_run.CONTROL,))


def placement_lines(c: comparison.Comparison) -> list[str]:
    """'<benchmark> <metric>: placement: +-x% over K links': the spread of per-link medians
    within a build, pooled over the builds (the control left out: it runs the base's links)."""
    out = []
    for mkey, names in c.benches.items():
        for bench in names:
            got = [s.sample((bench, mkey)) for s in c.sides
                   if s.label != series_run.CONTROL and (bench, mkey) in s.values]
            out.append(f"{bench} {c.metrics[mkey].path}: " + placement.spread_text(got))
    return out
