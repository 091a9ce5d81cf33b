"""The study axes of kvb matrix: engines, thread counts and named configurations.

A study's series are every combination of the axes it is given (presets or one kvbench binary,
--engines, --threads, --configs), measured interleaved by round with a control (the first series
again), and reported as the seeds' write-ups report: one table per metric, a row per series, a
column per benchmark (and role), the first series (the base) in absolute values and every other
row relative to it. With more than one thread count, a QPS@N table per benchmark too: a row per
engine and configuration, a column per thread count, then storage KB read and context switches
per op at the largest count.

A --configs file has one configuration a line, `name: --flag=value --flag ...` (kvbench flags;
`#` starts a comment). The first is the base.
"""
from __future__ import annotations

import itertools
import os
import shlex
import subprocess
from dataclasses import dataclass
from typing import Any, Callable

from kvbtools.core import output, profiles, results, store
from kvbtools.core.study_tables import load_values, median_or_none, metric_tables, qps_tables
from kvbtools.measure import runner
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.runner import Build, Series

# Flags the axes and the matrix itself set: a configuration may not.
RESERVED = {"engine", "threads", "db", "json", "benchmarks", "num", "report_interval_seconds"}


@dataclass
class Config:
    name: str
    args: list[str]


def known_flags(binary: str) -> set[str]:
    """The flags `binary --help` lists."""
    try:
        p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise RunError(f"cannot run {binary}: {e}") from None
    flags = set()
    for line in p.stdout.splitlines():
        if line.startswith("  --"):
            flags.add(line[4:].split()[0])
    return flags


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


def make_series(axes: Axes) -> tuple[list[Series], dict[str, dict[str, Any]]]:
    """Every combination, the base first; and each series' axis values by label."""
    series: list[Series] = []
    where: dict[str, dict[str, Any]] = {}
    for (blabel, build), engine, cfg, t in itertools.product(
            axes.builds, axes.engines, axes.configs or [None], axes.threads or [0]):
        parts = [p for p in (blabel, engine if len(axes.engines) > 1 else "",
                             cfg.name if cfg else "", f"t={t}" if t else "") if p]
        label = " ".join(parts) or engine
        args = ([f"--threads={t}"] if t else []) + (cfg.args if cfg else [])
        series.append(Series(label, build, engine=engine, args=args))
        group = " ".join(p for p in parts if not p.startswith("t=")) or engine
        where[label] = {"build": blabel, "engine": engine, "threads": t,
                        "config": cfg.name if cfg else "", "group": group}
    return series, where


def report(series: list[Series], where: dict[str, dict[str, Any]], files: dict[str, list[str]],
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


def write(outdir: str, text: str, doc: dict[str, Any]) -> None:
    output.write_text(os.path.join(outdir, "table.txt"), text + "\n")
    results.write_json(os.path.join(outdir, "study.json"), doc)


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


def run(args: Any, builds: list[tuple[str, Build]], plan: Any, engines: list[str],
        write_report: Callable[[str], object]) -> int:
    """Measures every combination of the axes, interleaved by round; prints and saves the
    tables, and write_report(directory) writes its report.html (pages/result_pages.py: a page
    is a layer above this one)."""
    if args.until_resolved:
        raise UsageError("--until-resolved is not available with --threads/--configs or "
                         "without --presets (a study reports every series relative to its base)")
    threads = parse_threads(args.threads) if args.threads else []
    configs: list[Config] = []
    prebuilt = builds[0][1].prebuilt
    if args.configs and prebuilt:
        configs = parse_configs(args.configs, known_flags(prebuilt))
    elif args.configs:
        parse_configs(args.configs, known=_any_flag())  # the form now, the flags after the build
    plan.workloads, note = with_load(plan.workloads)
    # One-second intervals (after run_once's 0, so this wins): the worst one is the stall.
    plan.extra = ["--report_interval_seconds=1", *plan.extra]
    series, where = make_series(Axes(builds, engines, threads, configs))
    if not args.no_control:
        first = series[0]
        series.append(Series("control", first.build, engine=first.engine, args=list(first.args)))
    if args.dry_run:
        print("run order (round, series, engine, flags):")
        for r, s, e in runner.run_order(series, plan, args.repeats):
            print(f"  {r} {s.label}: --engine={e} --benchmarks={plan.workloads} {' '.join(s.args)}")
        return 0
    if note:
        print(note)
    outdir = runner.new_results_dir("study", "+".join(s.label for s in series[:4]),
                                    args.results_dir)
    for i, (blabel, b) in enumerate(builds, 1):
        if not b.prebuilt:
            runner.do_build(b, False, f"[{i}/{len(builds)}] ")
    if args.configs and not prebuilt:
        configs = parse_configs(args.configs, known_flags(builds[0][1].binary(False)))
    for _, b in builds if not prebuilt else []:
        runner.check_plan(b.binary(False), plan)
    for s in series:  # each series' own flags (threads, a configuration) before any run
        runner.check_values(s.build.binary(False), runner.run_flags(plan, s.engine, s.args))
    files: dict[str, list[str]] = {s.label: [] for s in series}
    for r in range(1, args.repeats + 1):
        try:
            runner.measure_round(series, plan, r, outdir, files, f"/{args.repeats}")
        except runner.BuildError as e:
            runner.write_summary(outdir, f"kvb matrix failed: {e}")
            raise RunError(f"a run failed: {e}") from None
    text, doc = report(series, where, files, threads, args.metric or [])
    labels = [s.label for s in series]
    text += profiles.compare_text([results.load_all(files[x]) for x in labels if files[x]],
                                  [x for x in labels if files[x]])  # kvbench --profile runs
    doc.update(command="matrix", workloads=plan.workloads, num=plan.num, repeats=args.repeats,
               configs=[{"name": c.name, "args": c.args} for c in configs])
    print(text)
    write(outdir, text, doc)
    write_report(outdir)
    runner.write_summary(outdir, f"kvb matrix done: {args.repeats} round(s); tables in table.txt")
    print(f"results: {runner.shown(outdir)}/ (table.txt, study.json, one JSON per run)")
    if not args.no_store:
        store.auto_store([f for s in series for f in files[s.label]], args.store)
    return 0


class _AnyFlag(set):  # type: ignore[type-arg]
    """Accepts every flag name: checks a --configs file's form before the binary exists."""

    def __contains__(self, item: object) -> bool:
        return True


def _any_flag() -> set[str]:
    return _AnyFlag()
