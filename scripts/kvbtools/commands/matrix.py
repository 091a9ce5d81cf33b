"""kvb matrix: the same benchmarks across presets, engines, thread counts or configurations.

With --presets alone: the same benchmarks built with several presets, interleaved, one table per
metric (below). With --threads, --configs, or without --presets: a study
(kvbtools/measure/study.py): every combination of the axes, the first the base, tables relative
to it, QPS@N per thread count.

Each preset is configured and built in build/kvb/<preset>[-<dep>-<version>...] with tests off.
The runs interleave: round 1 runs every preset once, round 2 again, and so on, so drift hits
every preset alike. The first preset is also measured a second time in every round, as an
independent series labelled "control": identical code, so its verdict shows the noise floor
(docs/compare.md).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from kvbtools.commands import arguments, command
from kvbtools.core import comparison, host, manifest, output, profiles, results, stats, store
from kvbtools.measure import callgrind, placement, rounds, runner, sources, study
from kvbtools.measure.presets import load_presets, select_presets
from kvbtools.pages import result_pages
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.runner import Build, BuildError, Plan, Series, progress
from kvbtools.core.samples import load_side


def make_plan(args: argparse.Namespace, micro: bool, micro_filter: str) -> Plan:
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.num < 1 or args.min_time <= 0:
        raise UsageError("--num and --min-time must be positive")
    if args.filter:
        try:
            re.compile(args.filter)
        except re.error as e:
            raise UsageError(f"--filter: bad regular expression: {e}") from None
    if args.instructions and not micro:
        raise UsageError("--instructions counts kvbench_micro's measured loops (--micro); for "
                         "kvbench's engines, kvb dbbench instructions counts rocksdb per op")
    if args.instructions and args.layouts > 1:
        raise UsageError("--instructions counts instructions, which do not depend on where the "
                         "linker puts the code: leave out --layouts")
    if args.profile and micro:
        raise UsageError("--profile profiles kvbench's KV runs; kvbench_micro has no profiler "
                         "of its own (perf record -e cpu-clock -g on kvbench_micro does it)")
    if args.instructions:
        callgrind.require_valgrind()
        args.metric = args.metric or ["instructions_per_byte"]
    plan = Plan(micro=micro, micro_filter=args.filter or micro_filter if micro else "",
                instructions=args.instructions,
                min_time=args.min_time,
                engines=[e for e in (args.engines or manifest.default_engine()).split(",") if e],
                workloads=args.workloads, num=args.num,
                extra=[] if micro else list(args.kvbench_arg)
                + (["--profile"] if args.profile else []))
    runner.check_engines_early(plan)  # and check_plan once each kvbench is there
    return plan


def run_series(kind: str, what: str, series: list[Series], plan: Plan,
               args: argparse.Namespace, meta: dict[str, Any]) -> int:
    """Builds every distinct build, measures interleaved, prints and saves the tables."""
    budget = arguments.budget(args.repeats, args.max_rounds, args.max_time, args.until_resolved)
    if plan.instructions:
        presets = load_presets()
        callgrind.check_presets([(s.build.preset, presets[s.build.preset].cache)
                                 for s in series if s.build.preset in presets])
    for s in series:
        s.build.layouts = 1 if s.build.prebuilt else args.layouts
    if not args.no_control and series:
        first = series[0]
        series = series + [Series("control", first.build)]
    builds: list[Build] = []
    for s in series:
        if s.build not in builds:
            builds.append(s.build)
    if args.dry_run:
        print("builds:")
        for b in builds:
            print(f"  {b.label}: {' '.join(b.configure_cmd())}")
            print(f"  {' ' * len(b.label)}  {' '.join(b.build_cmd(plan.micro))}")
        print("run order (repeat, series, engine):")
        for r, s, e in runner.run_order(series, plan, budget.first):
            print(f"  {r} {s.label}" + (f" {e}" if e else ""))
        if args.until_resolved:
            print(f"then more rounds of the same order until every row's 95% interval is "
                  f"narrower than {args.threshold * 100:g}%, at most {budget.max_rounds} "
                  "rounds" + (f" or {budget.max_seconds:g} s of measuring"
                              if budget.max_seconds else ""))
        return 0
    outdir = runner.new_results_dir(kind, what, args.results_dir)
    try:
        return _build_and_measure(kind, outdir, series, builds, plan, args, budget, meta)
    except (RunError, UsageError) as e:
        runner.write_summary(outdir, f"kvb {kind} failed: {e}")
        raise
    except KeyboardInterrupt:
        runner.write_summary(outdir, f"kvb {kind} was interrupted; the runs so far are here")
        raise


def _build_and_measure(kind: str, outdir: str, series: list[Series], builds: list[Build],
                       plan: Plan, args: argparse.Namespace, budget: rounds.Budget,
                       meta: dict[str, Any]) -> int:
    build_seconds: dict[str, float] = {}
    failed: list[str] = []
    for i, b in enumerate(builds, 1):
        try:
            build_seconds[b.label] = runner.do_build(b, plan.micro, f"[{i}/{len(builds)}] ")
            progress(f"built {b.label} in {build_seconds[b.label]:.0f} s")
        except BuildError as e:
            progress(f"skipping {b.label}: build failed: {e}")
            failed.append(b.label)
    series = [s for s in series if s.build.label not in failed]
    if not series or series[0].build.label in failed:
        raise RunError(f"{kind}: the first build failed; nothing to compare against")
    for b in builds:
        if b.label not in failed:
            runner.check_plan(b.binary(plan.micro), plan)
    c, outcome, decisions = measure_until(series, plan, args, budget, outdir)
    mismatches = check_library_versions(c.sides, meta.get("expect", {}))
    extra = {k: f" {d.interval.text()}" + (f" {d.word}" if not d.resolved else
                                           f" same within {args.threshold * 100:g}%"
                                           if d.word == "same" else "")
             for k, d in decisions.items()}
    text = comparison.format_comparison(c, control="" if args.no_control else "control",
                                     extra=extra if args.until_resolved or plan.instructions
                                     or args.layouts > 1 else None)
    if plan.instructions:
        text += f"\n[lo, hi]: each ratio's 95% interval; {callgrind.CAVEAT}"
    if args.until_resolved:
        text += "\n" + rounds_line(outcome, decisions, args.threshold)
    if args.layouts > 1:
        text += ("\nverdicts: t tests on per-placement medians, placement a random effect "
                 "(docs/placement.md); the control row is the same build measured again\n"
                 + "\n".join(placement_lines(c, args.layouts)))
    times = "build times: " + ", ".join(f"{k} {v:.0f} s" for k, v in build_seconds.items())
    text += "".join(f"\nWARNING: {m}" for m in mismatches)
    text += profiles.compare_text([results.load_all(s.paths) for s in c.sides],
                                  [s.label for s in c.sides])  # kvbench --profile runs
    print(text)
    print(times)
    output.write_text(os.path.join(outdir, "table.txt"), text + "\n" + times + "\n")
    doc = comparison.to_json(c)
    if args.until_resolved:
        for row, cell in zip(doc["rows"], c.cells):
            d = decisions[(cell.metric.key, cell.bench, cell.side)]
            row.update(interval=[d.interval.lo, d.interval.hi] if d.interval.finite else None,
                       resolved=d.resolved, decision=d.word)
        doc["rounds"] = {"rounds": outcome.rounds, "settled": outcome.settled,
                         "stopped_by": outcome.why, "max_rounds": budget.max_rounds,
                         "max_seconds": budget.max_seconds}
    doc.update(meta)
    doc["build_seconds"] = build_seconds
    doc["builds"] = {b.label: {"preset": b.preset, "dir": b.dir, "defines": b.defines}
                     for b in builds}
    doc["failed_builds"] = failed
    doc["library_version_mismatches"] = mismatches
    results.write_json(os.path.join(outdir, f"{kind}.json"), doc)
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    runner.write_summary(outdir, f"kvb {kind} done: {outcome.rounds} round(s)"
                         + (f", {rounds_line(outcome, decisions, args.threshold)}"
                            if args.until_resolved else "") + "; the tables are in table.txt")
    print(f"results: {runner.shown(outdir)}/ (table.txt, {kind}.json, "
          "one JSON per run)")
    if not args.no_store:
        store.auto_store([f for s in c.sides for f in s.paths], args.store)
    return comparison.gate(c, args.fail_on_regression, ignore=("control",))


Key = tuple[str, str, str]


def measure_until(series: list[Series], plan: Plan, args: argparse.Namespace,
                  budget: rounds.Budget, outdir: str
                  ) -> tuple[comparison.Comparison, rounds.Outcome, dict[Key, rounds.Decision]]:
    """Measures budget.first rounds, then (--until-resolved) more until every row is resolved
    or the budget is spent. Returns the comparison of all runs, how the rounds ended and each
    row's decision (metric, benchmark, side) -> Decision."""
    files: dict[str, list[str]] = {s.label: [] for s in series}
    of = f" (until resolved, at most {budget.max_rounds})" if args.until_resolved \
        else f"/{budget.first}"
    latest: list[Any] = [None, {}]

    def judge() -> tuple[comparison.Comparison, dict[Key, rounds.Decision]]:
        sides = [load_side(s.label, files[s.label]) for s in series]
        c = comparison.build(sides, stats.Judgement(args.threshold, args.alpha),
                             metric_keys=args.metric,
                             bench_filter=None if plan.micro else args.filter)
        if args.layouts > 1:
            return c, placement_judgements(c, args.layouts)
        decisions = {(x.metric.key, x.bench, x.side): rounds.decide(
            x.base, x.other, c.judgement.for_metric(x.metric)) for x in c.cells}
        return c, decisions

    def one_round(r: int) -> None:
        runner.measure_round(series, plan, r, outdir, files, of)

    def settled(r: int) -> bool:
        latest[0], latest[1] = judge()
        left = [k for k, d in latest[1].items() if not d.resolved]
        if args.until_resolved and left:
            progress(f"after round {r}: {len(left)} row(s) unresolved, e.g. {' '.join(left[0])}")
        return not left or not args.until_resolved

    try:
        outcome = rounds.run(budget, one_round, settled)
    except BuildError as e:
        raise RunError(f"a run failed: {e}") from None
    return latest[0], outcome, latest[1]


def placement_judgements(c: comparison.Comparison, layouts: int) -> dict[Key, rounds.Decision]:
    """--layouts K: every cell's verdict and decision with placements as the units
    (kvbtools.placement), in place of the rounds' U test."""
    c.test = f"t test on per-placement medians ({layouts} links a build),"
    decisions = {}
    for x in c.cells:
        j = c.judgement.for_metric(x.metric)
        x.verdict = placement.verdict(x.base, x.other, layouts, j)
        decisions[(x.metric.key, x.bench, x.side)] = placement.decide(x.base, x.other, layouts, j)
    return decisions


def placement_lines(c: comparison.Comparison, layouts: int) -> list[str]:
    """'<benchmark> <metric>: placement: +-x% over K links', pooled over the sides."""
    out = []
    for mkey, names in c.benches.items():
        for bench in names:
            vals = [s.values[(bench, mkey)] for s in c.sides if (bench, mkey) in s.values]
            out.append(f"{bench} {c.metrics[mkey].path}: "
                       + placement.spread_text([placement.by_rounds(v, layouts) for v in vals]))
    return out


def rounds_line(outcome: rounds.Outcome, decisions: dict[Key, rounds.Decision],
                threshold: float) -> str:
    left = sum(1 for d in decisions.values() if not d.resolved)
    if outcome.settled:
        return (f"until resolved: every row's 95% interval is narrower than "
                f"{threshold * 100:g}% after {outcome.rounds} round(s)")
    return (f"until resolved: {left} row(s) unresolved at n={outcome.rounds}: the budget "
            f"({outcome.why}) was spent first; [lo, hi] is each ratio's 95% interval")


def reported_versions(ctx: dict[str, Any], dep: str) -> set[str]:
    """The versions of `dep` a run says it used: kvbench_micro's context keys, or kvbench's
    context.libraries (the shared objects actually loaded)."""
    out = set()
    for key in (f"{dep}_library_version", f"{dep}_version"):
        if isinstance(ctx.get(key), str):
            out.add(ctx[key])
    for lib in ctx.get("libraries", []) if isinstance(ctx.get("libraries"), list) else []:
        if isinstance(lib, dict) and dep in str(lib.get("name", "")).lower():
            out.add(str(lib.get("version", "")))
    engine = ctx.get("engine")
    if isinstance(engine, dict) and engine.get("name") == dep:
        out.add(str(engine.get("version", "")))
    return {v for v in out if v}


def check_library_versions(sides: list[Any],
                           expect: dict[str, list[list[str]]]) -> list[str]:
    """Messages for sides whose runs report a version of the library other than the one their
    source tree declares (e.g. CMake fell back to the system's library)."""
    out = []
    for s in sides:
        if s.label not in expect:
            continue
        for dep, version in expect[s.label]:
            seen = set().union(*(reported_versions(ctx, dep) for ctx in s.contexts))
            token = re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d.])")
            if seen and not any(token.search(v) for v in seen):
                out.append(f"{s.label}: the runs report {dep} {', '.join(sorted(seen))}, not "
                           f"{version}: the build did not use that tree")
    return out


def from_source_defines(items: list[str], source_args: list[str]
                        ) -> tuple[dict[str, str], str, list[list[str]]]:
    """--from-source DEP[@VERSION],... -> CMake defines, a tag suffix -dep-version... and the
    [dep, version] pairs found in the trees."""
    given = sources.parse_source_args(source_args)
    defines: dict[str, str] = {}
    suffix = ""
    versions: list[list[str]] = []
    for item in items:
        dep, _, version = item.partition("@")
        dep = manifest.check_buildable(dep).name
        if version:
            d = given.get(dep) or sources.fetch(dep, version)
        elif dep in given:
            d = given[dep]
        else:
            raise UsageError(f"--from-source {dep}: give its tree with --source {dep}=DIR "
                              f"or a version to fetch, {dep}@VERSION")
        found = sources.detect(dep, d)
        if version and found != version:
            progress(f"note: {d} holds {dep} {found}, not {version}")
        k, v = runner.source_define(dep, d)
        defines[k] = v
        suffix += f"-{dep}-{found}"
        versions.append([dep, found])
    return defines, suffix, versions


def register(sub: Any) -> None:
    p = command.add(sub, "matrix", __doc__, run)
    p.add_argument("--presets",
                   help="comma-separated configure presets; the first is the base. Without it, "
                        "a study of one kvbench binary (--kvbench)")
    p.add_argument("--threads", metavar="N,N,...",
                   help="an axis: kvbench --threads values (a study: QPS@N tables too)")
    p.add_argument("--configs", metavar="FILE",
                   help="an axis: named configurations, one a line, 'name: --flag=value ...'; "
                        "the first is the base")
    p.add_argument("--kvbench", metavar="BINARY",
                   help="without --presets: the kvbench to run (default: this tree's "
                        "build/<arch>-gcc-native/src/kvbench)")
    p.add_argument("--micro", action="store_true",
                   help="run kvbench_micro instead of kvbench workloads")
    p.add_argument("--from-source", default="", metavar="DEP[@VERSION],...",
                   help="build these libraries from source with each preset's toolchain")
    p.add_argument("--source", action="append", default=[], metavar="DEP=DIR",
                   help="source tree for a --from-source dependency (repeat)")
    arguments.add_plan_arguments(p)


def preset_builds(args: argparse.Namespace) -> tuple[list[Any], list[tuple[str, str]],
                                                     list[Build], str, list[list[str]]]:
    """--presets as builds: the presets that can be built here, those skipped (and why), their
    builds, the --from-source tag suffix and the library versions the trees declare."""
    names = [n for n in args.presets.split(",") if n]
    if not names:
        raise UsageError("--presets is empty")
    presets, skipped = select_presets(names)
    for name, why in skipped:
        print(f"kvb matrix: skipping preset {name}: {why}", file=sys.stderr)
    if not presets:
        raise UsageError("none of the presets can be built on this host")
    defines, suffix, versions = from_source_defines(
        [x for x in args.from_source.split(",") if x], args.source)
    builds = [Build(p.name, p.name, p.name + suffix, dict(defines)) for p in presets]
    return presets, skipped, builds, suffix, versions


def study_builds(args: argparse.Namespace) -> list[tuple[str, Build]]:
    """A study's builds: its presets (labelled by name when more than one), or one binary."""
    if args.presets:
        builds = preset_builds(args)[2]
        return [(b.label if len(builds) > 1 else "", b) for b in builds]
    binary = args.kvbench or os.path.join(host.ROOT, "build", host.native_preset(), "src",
                                          "kvbench")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise UsageError(f"no kvbench at {binary}: build it (cmake --preset ...), give "
                         "--kvbench BINARY, or --presets to build")
    return [("", Build("kvbench", "", "", prebuilt=os.path.abspath(binary)))]


def run(args: argparse.Namespace) -> int:
    output.check_directory(args.results_dir, "--results-dir")  # exit 2 before any work
    if args.threads or args.configs or args.presets is None:
        if args.micro:
            raise UsageError("--threads, --configs and a study without --presets are for "
                             "kvbench workloads, not --micro")
        if args.layouts > 1:
            raise UsageError("--layouts compares builds (--presets, kvb versions); a study's "
                             "series share one build")
        if args.fail_on_regression:
            raise UsageError("--fail-on-regression judges builds (--presets, kvb versions); a "
                             "study's tables show its configurations side by side, without "
                             "verdicts")
        plan = make_plan(args, False, "")
        builds = study_builds(args)
        if builds[0][1].prebuilt:
            runner.check_plan(builds[0][1].prebuilt, plan)
        return study.run(args, builds, plan, plan.engines, result_pages.write_report)
    presets, skipped, builds, suffix, versions = preset_builds(args)
    plan = make_plan(args, args.micro, "/4096$")
    series = [Series(b.label, b) for b in builds]
    meta = {"command": "matrix", "presets": [n for n in args.presets.split(",") if n], "skipped": dict(skipped),
            "from_source": args.from_source, "repeats": args.repeats,
            "expect": {s.label: versions for s in series}}
    meta["expect"]["control"] = versions
    return run_series("matrix", "+".join(p.name for p in presets) + suffix, series, plan,
                      args, meta)

