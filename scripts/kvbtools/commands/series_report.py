"""What kvb matrix and kvb versions share: the runner's Plan from the request (make_plan: a
study's too); and once the series are known, the dry run, the results directory, the operation
(measure/series_run.py), then its table (printed and in table.txt), <kind>.json, report.html,
summary.txt, the results store and the gate.

Not a command: cli.py registers none of it; matrix and versions call run_series.
"""
from __future__ import annotations

import os
import re
from typing import Any

from kvbtools.commands.arguments import PlanRequest
from kvbtools.core import comparison, manifest, output, profiles, results, store
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure import callgrind, rounds, runner, series_run
from kvbtools.measure.presets import load_presets
from kvbtools.measure.runner import Build, Plan, Series
from kvbtools.measure.series_run import Judging, Key, SeriesOutcome
from kvbtools.pages import result_pages


def make_plan(req: PlanRequest, micro: bool, micro_filter: str) -> Plan:
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
    if req.instructions and req.layouts > 1:
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
    plan = Plan(micro=micro, micro_filter=req.filter or micro_filter if micro else "",
                instructions=req.instructions, min_time=req.min_time,
                engines=[e for e in (req.engines or manifest.default_engine()).split(",")
                         if e],
                workloads=req.workloads, num=num,
                extra=[] if micro else list(req.kvbench_args)
                + (["--profile"] if req.profile else []))
    runner.check_engines_early(plan)  # and check_plan once each kvbench is there
    return plan


def metric_keys(req: PlanRequest, plan: Plan) -> tuple[str, ...]:
    """--metric; the instruction counts' own metrics when --instructions counts them."""
    return req.metrics or (tuple(callgrind.default_metrics(plan.micro))
                           if plan.instructions else ())


def run_series(kind: str, what: str, series: list[Series], plan: Plan, req: PlanRequest,
               meta: dict[str, Any]) -> int:
    """Builds every distinct build, measures interleaved, prints and saves the tables; `kind`
    (matrix, versions) names the results directory (with `what`) and its JSON; `meta` heads
    that JSON."""
    budget = req.budget()
    if plan.instructions:
        presets = load_presets()
        callgrind.check_presets([(s.build.preset, presets[s.build.preset].cache)
                                 for s in series if s.build.preset in presets])
    for s in series:
        s.build.layouts = 1 if s.build.prebuilt else req.layouts
    if req.control and series:
        first = series[0]
        series = series + [Series("control", first.build)]
    if req.dry_run:
        dry_run(series, plan, req, budget)
        return 0
    judging = Judging(req.judgement, metric_keys(req, plan), req.filter, req.layouts,
                      req.until_resolved)
    outdir = runner.new_results_dir(kind, what, req.results_dir)
    try:
        outcome = series_run.run(kind, series, plan, judging, budget, outdir)
        return report(kind, outdir, outcome, series_run.distinct_builds(series), plan, req,
                      budget, meta)
    except (RunError, UsageError) as e:
        runner.write_summary(outdir, f"kvb {kind} failed: {e}")
        raise
    except KeyboardInterrupt:
        runner.write_summary(outdir, f"kvb {kind} was interrupted; the runs so far are here")
        raise


def dry_run(series: list[Series], plan: Plan, req: PlanRequest, budget: rounds.Budget) -> None:
    """--dry-run: the builds' commands and the run order; nothing built or run."""
    print("builds:")
    for b in series_run.distinct_builds(series):
        print(f"  {b.label}: {' '.join(b.configure_cmd())}")
        print(f"  {' ' * len(b.label)}  {' '.join(b.build_cmd(plan.micro))}")
    print("run order (repeat, series, engine):")
    for r, s, e in runner.run_order(series, plan, budget.first):
        print(f"  {r} {s.label}" + (f" {e}" if e else ""))
    if req.until_resolved:
        print(f"then more rounds of the same order until every row's 95% interval is "
              f"narrower than {req.judgement.threshold * 100:g}%, at most {budget.max_rounds} "
              "rounds" + (f" or {budget.max_seconds:g} s of measuring"
                          if budget.max_seconds else ""))


def table_text(outcome: SeriesOutcome, plan: Plan, req: PlanRequest,
               mismatches: list[str]) -> str:
    """The comparison (with each row's interval and decision when the rounds adapt, the
    instructions are counted or placements judged), the rounds and placement lines, the
    warnings and, for kvbench --profile runs, the functions that moved."""
    c, decisions, threshold = outcome.comparison, outcome.decisions, req.judgement.threshold
    extra = {k: f" {d.interval.text()}" + (f" {d.word}" if not d.resolved else
                                           f" same within {threshold * 100:g}%"
                                           if d.word == "same" else "")
             for k, d in decisions.items()}
    text = comparison.format_comparison(c, control="control" if req.control else "",
                                        extra=extra if req.until_resolved or plan.instructions
                                        or req.layouts > 1 else None)
    if plan.instructions:
        text += f"\n[lo, hi]: each ratio's 95% interval; {callgrind.CAVEAT}"
    if req.until_resolved:
        text += "\n" + rounds_line(outcome.rounds, decisions, threshold)
    if req.layouts > 1:
        text += ("\nverdicts: t tests on per-placement medians, placement a random effect "
                 "(docs/placement.md); the control row is the same build measured again\n"
                 + "\n".join(series_run.placement_lines(c, req.layouts)))
    text += "".join(f"\nWARNING: {m}" for m in mismatches)
    text += profiles.compare_text([results.load_all(s.paths) for s in c.sides],
                                  [s.label for s in c.sides])  # kvbench --profile runs
    return text


def report(kind: str, outdir: str, outcome: SeriesOutcome, builds: list[Build], plan: Plan,
           req: PlanRequest, budget: rounds.Budget, meta: dict[str, Any]) -> int:
    """Prints the table and writes table.txt, <kind>.json, report.html and summary.txt; stores
    the runs (unless --no-store); the gate's exit status (the control not counted)."""
    c, decisions, threshold = outcome.comparison, outcome.decisions, req.judgement.threshold
    mismatches = series_run.check_library_versions(c.sides, meta.get("expect", {}))
    text = table_text(outcome, plan, req, mismatches)
    times = "build times: " + ", ".join(f"{k} {v:.0f} s" for k, v in outcome.build_seconds.items())
    print(text)
    print(times)
    output.write_text(os.path.join(outdir, "table.txt"), text + "\n" + times + "\n")
    doc = comparison.to_json(c)
    if req.until_resolved:
        for row, cell in zip(doc["rows"], c.cells):
            d = decisions[(cell.metric.key, cell.bench, cell.side)]
            row.update(interval=[d.interval.lo, d.interval.hi] if d.interval.finite else None,
                       resolved=d.resolved, decision=d.word)
        doc["rounds"] = {"rounds": outcome.rounds.rounds, "settled": outcome.rounds.settled,
                         "stopped_by": outcome.rounds.why, "max_rounds": budget.max_rounds,
                         "max_seconds": budget.max_seconds}
    doc.update(meta)
    doc["build_seconds"] = outcome.build_seconds
    doc["builds"] = {b.label: {"preset": b.preset, "dir": b.dir, "defines": b.defines}
                     for b in builds}
    doc["failed_builds"] = outcome.failed
    doc["library_version_mismatches"] = mismatches
    results.write_json(os.path.join(outdir, f"{kind}.json"), doc)
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    runner.write_summary(outdir, f"kvb {kind} done: {outcome.rounds.rounds} round(s)"
                         + (f", {rounds_line(outcome.rounds, decisions, threshold)}"
                            if req.until_resolved else "") + "; the tables are in table.txt")
    print(f"results: {runner.shown(outdir)}/ (table.txt, {kind}.json, "
          "one JSON per run)")
    if not req.no_store:
        store.auto_store([f for s in c.sides for f in s.paths], req.store)
    return comparison.gate(c, req.fail_on_regression, ignore=("control",))


def rounds_line(outcome: rounds.Outcome, decisions: dict[Key, rounds.Decision],
                threshold: float) -> str:
    left = sum(1 for d in decisions.values() if not d.resolved)
    if outcome.settled:
        return (f"until resolved: every row's 95% interval is narrower than "
                f"{threshold * 100:g}% after {outcome.rounds} round(s)")
    return (f"until resolved: {left} row(s) unresolved at n={outcome.rounds}: the budget "
            f"({outcome.why}) was spent first; [lo, hi] is each ratio's 95% interval")
