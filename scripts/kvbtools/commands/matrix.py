"""kvb matrix, run: what the command does with its arguments. Its command line and
--help: commands/parsers/matrix.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from kvbtools.commands import series_report
from kvbtools.commands.arguments import PlanRequest
from kvbtools.core import architectures, host, manifest, output, results, store
from kvbtools.measure import fleet, runner, sources, study
from kvbtools.core.presets import select_presets
from kvbtools.pages import result_pages
from kvbtools.core.errors import EXIT_CHANGED, EXIT_FAILURE, EXIT_UNDECIDED, RunError, \
    UsageError
from kvbtools.measure.runner import Build, Workload
from kvbtools.core.output import progress


@dataclass(frozen=True)
class MatrixRequest:
    """kvb matrix's arguments as values: the builds or binary, the axes, and the plan."""
    presets: str | None           # comma-separated; None: a study of one kvbench binary
    threads: str | None           # a study's thread counts, as given
    configs: str | None           # a study's --configs file
    kvbench: str | None
    micro: bool
    from_source: str
    sources: tuple[str, ...]      # --source DEP=DIR
    system_libs: bool             # --system-libs: no library built from source by default
    plan: PlanRequest

    @staticmethod
    def of(args: argparse.Namespace) -> "MatrixRequest":
        return MatrixRequest(args.presets, args.threads, args.configs, args.kvbench, args.micro,
                             args.from_source, tuple(args.source), args.system_libs,
                             PlanRequest.of(args))


def parse_source_args(items: list[str]) -> dict[str, str]:
    """--source DEP=DIR ... -> {dep: dir}."""
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--source {item!r}: expected DEP=DIR")
        dep, d = item.split("=", 1)
        out[manifest.check_buildable(dep).name] = d
    return out


def from_source_defines(items: list[str], source_args: list[str]
                        ) -> tuple[dict[str, str], str, list[list[str]]]:
    """--from-source DEP[@VERSION],... -> CMake defines, a tag suffix -dep-version... and the
    [dep, version] pairs found in the trees."""
    given = parse_source_args(source_args)
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


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(MatrixRequest.of(args))


def preset_builds(req: MatrixRequest) -> tuple[list[Any], list[tuple[str, str]], list[Build],
                                              str, list[list[str]]]:
    """--presets as builds: the presets that can be built here, those skipped (and why), their
    builds, the --from-source tag suffix and the library versions the trees declare."""
    names = [n for n in (req.presets or "").split(",") if n]
    if not names:
        raise UsageError("--presets is empty")
    presets, skipped = select_presets(names, elsewhere=req.plan.slurm is not None)
    for name, why in skipped:
        print(f"kvb matrix: skipping preset {name}: {why}", file=sys.stderr)
    if not presets:
        raise UsageError("none of the presets can be built on this host")
    asked = [x for x in req.from_source.split(",") if x]
    defines, suffix, versions = from_source_defines(asked, list(req.sources))
    trees = sources.debian_trees(default_sources(req), get=False)
    defines.update(runner.source_define(dep, d) for dep, (d, _) in trees.items())
    suffix += "".join(f"-{dep}-{v}" for dep, (_, v) in trees.items())
    versions += [[dep, v] for dep, (_, v) in trees.items()]
    builds = [Build(p.name, p.name, p.name + suffix, dict(defines)) for p in presets]
    return presets, skipped, builds, suffix, versions


def default_sources(req: MatrixRequest) -> list[str]:
    """The libraries every preset builds from Debian's source of the version installed here
    without being asked: with --micro, those its rows run (lz4, zstd, xxhash), unless
    --system-libs, or --from-source names one (that tree is used)."""
    if not req.micro or req.system_libs:
        return []
    asked = [x.partition("@")[0].lower() for x in req.from_source.split(",") if x]
    return [d for d in sources.micro_libraries() if d not in asked]


def fetch_sources(deps: list[str]) -> None:
    """The sources of default_sources, fetched (once: build/kvb/sources/) after every check of
    the command line and before the first build; RunError when one cannot be had."""
    trees = sources.debian_trees(deps)
    if trees:
        progress("each preset compiles " + ", ".join(f"{d} {v}" for d, (_, v) in trees.items())
                 + " from Debian's source (build/kvb/sources/), so the rows of these libraries "
                 "compare their code too; --system-libs measures the installed ones instead")


def study_builds(req: MatrixRequest) -> list[tuple[str, Build]]:
    """A study's builds: its presets (labelled by name when more than one), or one binary."""
    if req.presets:
        builds = preset_builds(req)[2]
        return [(b.label if len(builds) > 1 else "", b) for b in builds]
    binary = req.kvbench or os.path.join(host.ROOT, "build", host.native_preset(), "src",
                                         "kvbench")
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise UsageError(f"no kvbench at {binary}: build it (cmake --preset ...), give "
                         "--kvbench BINARY, or --presets to build")
    return [("", Build("kvbench", "", "", prebuilt=os.path.abspath(binary)))]


def run(req: MatrixRequest) -> int:
    output.check_outputs(  # exit 2 before any work
        [("--results-dir", req.plan.results_dir, ())],
        [("--configs", req.configs), ("--kvbench", req.kvbench),
         *(("--source", s.partition("=")[2], ()) for s in req.sources)])
    if req.threads or req.configs or req.presets is None:
        if req.micro:
            raise UsageError("--threads, --configs and a study without --presets are for "
                             "kvbench workloads, not --micro")
        if (req.plan.layouts or 1) > 1:
            raise UsageError("--layouts compares builds (--presets, kvb versions); a study's "
                             "series share one build")
        if req.plan.max_rounds is not None or req.plan.max_time is not None:
            raise UsageError("--max-rounds and --max-time budget a comparison of builds "
                             "(--presets, kvb versions); a study runs --repeats rounds")
        if req.plan.slurm is not None:
            raise UsageError("--slurm runs comparisons of builds (--presets, kvb versions, kvb "
                             "bisect) on a cluster; a study runs here (docs/fleet.md)")
        if req.plan.fail_on_regression:
            raise UsageError("--fail-on-regression judges builds (--presets, kvb versions); a "
                             "study's tables show its configurations side by side, without "
                             "verdicts")
        plan = series_report.make_plan(req.plan, False, "")
        builds = study_builds(req)
        if builds[0][1].prebuilt:
            runner.check_plan(builds[0][1].prebuilt, plan)
        return run_study(req, builds, plan)
    presets, skipped, builds, suffix, versions = preset_builds(req)
    plan = series_report.make_plan(req.plan, req.micro, "/4096$")
    meta = {"command": "matrix", "presets": [n for n in (req.presets or "").split(",") if n],
            "skipped": dict(skipped), "from_source": req.from_source,
            "system_libs": req.system_libs,
            "repeats": req.plan.repeats, "expect": {b.label: versions for b in builds}}
    meta["expect"]["control"] = versions
    deps = default_sources(req)
    groups: dict[str, list[Build]] = {}
    for b in builds:   # several only on a cluster: select_presets skips the others here
        groups.setdefault(fleet.arch(b.preset), []).append(b)
    if len(groups) > 1:
        return run_architectures(req, groups, plan, meta, lambda: fetch_sources(deps))
    return series_report.run_series("matrix", "+".join(p.name for p in presets) + suffix,
                                     builds, plan, req.plan, meta, lambda: fetch_sources(deps))


def run_architectures(req: MatrixRequest, groups: dict[str, list[Build]], plan: Workload,
                      meta: dict[str, Any], prepare: Callable[[], None]) -> int:
    """--slurm with presets of several architectures: a comparison per architecture (its first
    preset the base, its own control), built and measured on its nodes, one after the other,
    each in a directory of its own under one results directory; then the architectures side by
    side (core/architectures.py), printed and in architectures.txt. An architecture whose
    comparison fails is named, and the others go on; the worst exit status of them all."""
    parent = None if req.plan.dry_run else output.new_results_dir(
        "matrix", "+".join(groups), req.plan.results_dir)
    measured, codes = [], []
    for i, (arch, builds) in enumerate(groups.items()):
        print(f"== {arch}: {', '.join(b.label for b in builds)}", flush=True)
        sub = None if parent is None else os.path.join(parent, arch)
        if sub is not None:
            output.make_dirs(sub)
        try:
            codes.append(series_report.run_series(
                "matrix", arch, builds, plan, req.plan, dict(
                    meta, presets=[b.label for b in builds], architecture=arch),
                prepare if i == 0 else None, sub))
            if sub is not None:
                measured.append(architectures.ArchComparison(
                    arch, results.read_json(os.path.join(sub, "matrix.json"))))
        except RunError as e:
            print(f"kvb: error: {arch}: {e}", file=sys.stderr)
            measured.append(architectures.ArchComparison(arch, None, str(e)))
            codes.append(EXIT_FAILURE)
    if parent is not None:
        text = architectures.side_by_side(measured)
        print(text)
        output.write_text(os.path.join(parent, "architectures.txt"), text + "\n")
        result_pages.write_architectures(parent, measured)
        print(f"results: {output.shown(parent)}/ (architectures.txt, report.html, a directory "
              "per architecture)")
    return next((c for c in (EXIT_FAILURE, EXIT_CHANGED, EXIT_UNDECIDED) if c in codes), 0)


def run_study(req: MatrixRequest, builds: list[tuple[str, Build]], plan: Workload) -> int:
    """A study (measure/study.py): every combination of the axes, interleaved by round; prints
    the tables and writes table.txt, study.json, report.html and summary.txt."""
    if req.plan.until_resolved:
        raise UsageError("--until-resolved is not available with --threads/--configs or "
                         "without --presets (a study reports every series relative to its base)")
    s = study.plan_study(builds, plan, req.threads, req.configs, req.plan.control)
    if req.plan.dry_run:
        print("run order (round, series, engine, flags):")
        for r in range(1, req.plan.repeats + 1):
            for x in s.series:
                for e in runner.engines(x, s.plan):
                    print(f"  {r} {x.label}: --engine={e} --benchmarks={s.plan.workloads} "
                          f"{' '.join(x.args)}")
        return 0
    if s.note:
        print(s.note)
    outdir = output.new_results_dir("study", "+".join(x.label for x in s.series[:4]),
                                    req.plan.results_dir)
    got = study.measure(s, req.plan.repeats, outdir,
                        list(series_report.metric_keys(req.plan, plan)))
    print(got.text)
    output.write_text(os.path.join(outdir, "table.txt"), got.text + "\n")
    results.write_json(os.path.join(outdir, "study.json"), got.doc)
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    output.write_summary(outdir, f"kvb matrix done: {req.plan.repeats} round(s); tables in "
                                 "table.txt")
    print(f"results: {output.shown(outdir)}/ (table.txt, study.json, one JSON per run)")
    if not req.plan.no_store:
        store.auto_store([f for x in s.series for f in got.files[x.label]], req.plan.store)
    return 0
