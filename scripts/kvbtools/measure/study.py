"""The studies of kvb matrix: every combination of its axes (presets or one kvbench binary,
--engines, --threads, --configs) a series, interleaved by round with a control (the first
again), reported as the seeds' write-ups are: a table per metric relative to the base, and with
several thread counts a QPS@N table per benchmark (core/study_tables.py). A --configs file has a
configuration a line, `name: --flag=value ...` (kvbench flags, `#` comments), the first the base.
plan_study makes the series, measure runs them; commands/matrix.py prints and stores.
"""
from __future__ import annotations

import dataclasses
import itertools
import shlex
from dataclasses import dataclass
from typing import Any

from kvbtools.core import manifest, output, profiles, results
from kvbtools.core.study_tables import load_values, median_or_none, metric_tables, qps_tables
from kvbtools.measure import runner
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.plan import Variant
from kvbtools.measure.runner import Build, Workload
from kvbtools.core.output import progress

# Flags the axes and the matrix itself set: a configuration may not.
RESERVED = {"engine", "threads", "db", "json", "benchmarks", "num", "report_interval_seconds"}


@dataclass
class Config:
    name: str
    args: list[str]


def parse_configs(path: str, known: set[str]) -> list[Config]:
    """The configurations of a --configs file; UsageError naming the line for a bad one."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"--configs {path}: {e.strerror}") from None
    out: list[Config] = []
    for n, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"--configs {path}:{n}"
        name, sep, rest = text.partition(":")
        name = name.strip()
        if not sep or not name or " " in name:
            raise UsageError(f"{where}: expected 'name: --flag=value ...', got {raw.strip()!r}")
        if any(c.name == name for c in out):
            raise UsageError(f"{where}: configuration {name!r} is named twice")
        try:
            args = shlex.split(rest)
        except ValueError as e:
            raise UsageError(f"{where}: {e}") from None
        for a in args:
            flag = a[2:].split("=", 1)[0] if a.startswith("--") else ""
            bare = flag[2:] if flag.startswith("no") and "=" not in a else flag
            if not flag or (flag not in known and bare not in known):
                raise UsageError(f"{where}: {a!r} is not a kvbench flag (kvbench --help lists "
                                 "them; write --flag=value)")
            if flag in RESERVED:
                raise UsageError(f"{where}: {a!r} is set by kvb matrix itself (its axes, "
                                 "--num, --workloads); a configuration may not set it")
        out.append(Config(name, args))
    if not out:
        raise UsageError(f"--configs {path}: no configuration in it")
    return out


def parse_threads(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise UsageError(f"--threads {text!r}: expected counts like 1,2,4,8") from None
    if not counts or any(c < 1 for c in counts) or len(set(counts)) != len(counts):
        raise UsageError(f"--threads {text!r}: expected distinct counts >= 1, like 1,2,4,8")
    return counts


@dataclass
class Axes:
    builds: list[tuple[str, Build]]  # (label part, build); label part "" for a single build
    engines: list[str]
    threads: list[int]               # [] = kvbench's default
    configs: list[Config]            # [] = none


def make_series(axes: Axes) -> tuple[list[Variant], dict[str, dict[str, Any]]]:
    """Every combination, the base first; and each series' axis values by label."""
    series: list[Variant] = []
    where: dict[str, dict[str, Any]] = {}
    for (blabel, build), engine, cfg, t in itertools.product(
            axes.builds, axes.engines, axes.configs or [None], axes.threads or [0]):
        parts = [p for p in (blabel, engine if len(axes.engines) > 1 else "",
                             cfg.name if cfg else "", f"t={t}" if t else "") if p]
        label = " ".join(parts) or engine
        args = ([f"--threads={t}"] if t else []) + (cfg.args if cfg else [])
        series.append(Variant(label, build.label, engine, tuple(args)))
        group = " ".join(p for p in parts if not p.startswith("t=")) or engine
        where[label] = {"build": blabel, "engine": engine, "threads": t,
                        "config": cfg.name if cfg else "", "group": group}
    return series, where


def report(series: list[Variant], where: dict[str, dict[str, Any]], files: dict[str, list[str]],
           threads: list[int], metric_names: list[str]) -> tuple[str, dict[str, Any]]:
    """The study's text and its JSON document."""
    labels = [s.label for s in series]
    sides: dict[str, dict[tuple[str, str], list[float]]] = {}
    columns: list[str] = []
    for s in labels:
        sides[s], cols = load_values(files.get(s, []))
        columns += [c for c in cols if c not in columns]
    if "all" in metric_names:  # kvb compare's word for every metric: a study shows all anyway
        metric_names = []
    lines = metric_tables(labels, sides, columns, metric_names)
    if len(threads) > 1:
        lines += qps_tables(labels, where, sides, columns, threads)
    doc = {"schema": "kvb-study", "schema_version": 1, "base": labels[0], "series": [
        {"label": s, **where.get(s, {"control": True}), "files": files.get(s, []),
         "medians": {f"{c}|{m}": median_or_none(v) for (c, m), v in sides[s].items()}}
        for s in labels]}
    return "\n".join(lines).rstrip(), doc


# A study that starts with a read measures an empty database: these write keys first (workload
# names, not engine names; kvbench's table is the authority, this only decides whether to add one).
LOADS = ("fillseq", "fillrandom", "l.i0", "insertbench")


def with_load(workloads: str) -> tuple[str, str]:
    """--workloads with fillseq put first when it starts with no load; and the note saying so."""
    items = [w for w in workloads.split(",") if w]
    if items and not items[0].split("[")[0] in LOADS:
        return ",".join(["fillseq"] + items), (f"note: fillseq added before {items[0]}: each run "
                                               "starts from an empty database")
    return workloads, ""


@dataclass
class Study:
    """A study before its first run: the series of every combination of the axes (the control
    last), each series' axis values by label, and the plan they run."""
    builds: list[tuple[str, Build]]
    series: list[Variant]
    where: dict[str, dict[str, Any]]
    threads: list[int]
    configs: list[Config]
    configs_path: str | None
    plan: Workload
    note: str        # said before the runs: a load added in front of a read

    def build_of(self, v: Variant) -> Build:
        return next(b for _, b in self.builds if b.label == v.build)


@dataclass
class StudyResult:
    """What a study measured: its tables' text, its study.json document and each series'
    files."""
    text: str
    doc: dict[str, Any]
    files: dict[str, list[str]]


def plan_study(builds: list[tuple[str, Build]], plan: Workload, threads: str | None,
               configs_path: str | None, control: bool) -> Study:
    """The series of every combination of the axes: `builds` x plan.engines x the --threads
    counts (text, e.g. '1,2,4') x the configurations of the file `configs_path`, and the
    control (the first series again) when `control`. A configuration's flags are checked
    against the binary when it is prebuilt, else only their form (until it is built)."""
    counts = parse_threads(threads) if threads else []
    configs: list[Config] = []
    prebuilt = builds[0][1].prebuilt
    if configs_path and prebuilt:
        configs = parse_configs(configs_path, manifest.flags_of(prebuilt))
    elif configs_path:  # the form now, the flags against the binary after the build (measure)
        configs = parse_configs(configs_path, known=_AnyFlag())
    workloads, note = with_load(plan.workloads)
    # One-second intervals (after run_once's 0, so this wins): the worst one is the stall.
    plan = dataclasses.replace(plan, workloads=workloads,
                               extra=["--report_interval_seconds=1", *plan.extra])
    series, where = make_series(Axes(builds, plan.engines, counts, configs))
    if control:
        first = series[0]
        series.append(Variant("control", first.build, first.engine, first.args))
    return Study(builds, series, where, counts, configs, configs_path, plan, note)


def measure(study: Study, repeats: int, outdir: str, metric_names: list[str]) -> StudyResult:
    """Builds what is not prebuilt, checks every series' flags, measures `repeats` interleaved
    rounds into `outdir` and makes the tables (RunError, with summary.txt, when a run fails)."""
    builds, series, plan = study.builds, study.series, study.plan
    prebuilt = builds[0][1].prebuilt
    for i, (_, b) in enumerate(builds, 1):
        if not b.prebuilt:
            runner.do_build(b, False, f"[{i}/{len(builds)}] ")
    configs = study.configs
    if study.configs_path and not prebuilt:  # the series carry them; now their flags are checked
        configs = parse_configs(study.configs_path,
                                manifest.flags_of(builds[0][1].binary(False)))
    for _, b in builds if not prebuilt else []:
        runner.check_plan(b.binary(False), plan)
    for s in series:  # each series' own flags (threads, a configuration) before any run
        manifest.check_flags(study.build_of(s).binary(False),
                            runner.run_flags(plan, s.engine, list(s.args)))
    files: dict[str, list[str]] = {s.label: [] for s in series}
    for r in range(1, repeats + 1):
        try:
            measure_round(study, r, outdir, files, f"/{repeats}")
        except runner.BuildError as e:
            output.write_summary(outdir, f"kvb matrix failed: {e}")
            raise RunError(f"a run failed: {e}") from None
    text, doc = report(series, study.where, files, study.threads, metric_names)
    labels = [s.label for s in series]
    text += profiles.compare_text([results.load_all(files[x]) for x in labels if files[x]],
                                  [x for x in labels if files[x]])  # kvbench --profile runs
    doc.update(command="matrix", workloads=plan.workloads, num=plan.num, repeats=repeats,
               configs=[{"name": c.name, "args": c.args} for c in configs])
    return StudyResult(text, doc, files)


def measure_round(study: Study, r: int, outdir: str, files: dict[str, list[str]],
                  of: str = "") -> None:
    """Round `r`: every series once (every engine of each), appending the JSON files to
    `files`; `of` completes the progress lines' "round r" (e.g. "/5")."""
    order = [(s, e) for s in study.series for e in runner.engines(s, study.plan)]
    try:
        for i, (s, engine) in enumerate(order, 1):
            out = runner.run_file(outdir, s.label, engine, r)
            output.status(f"round {r}{of}, run {i}/{len(order)}: {s.label}"
                          + (f", engine {engine}" if engine else ""))
            runner.run_once(study.build_of(s).binary(False), study.plan, out, engine,
                            list(s.args))
            files[s.label].append(out)
    finally:
        output.end_status()
    progress(f"round {r}{of} done ({len(order)} run{'s' if len(order) != 1 else ''})")


class _AnyFlag(set):  # type: ignore[type-arg]
    """Accepts every flag name: checks a --configs file's form before the binary exists."""

    def __contains__(self, item: object) -> bool:
        return True
