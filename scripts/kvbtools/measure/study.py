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
import statistics
import subprocess
from dataclasses import dataclass
from typing import Any

from kvbtools.core import results, store
from kvbtools.measure import runner
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.runner import Build, Series
from kvbtools.core.table import fmt_value, render

# Flags the axes and the matrix itself set: a configuration may not.
RESERVED = {"engine", "threads", "db", "json", "benchmarks", "num", "report_interval_seconds"}

def _get(d: dict[str, Any], path: str) -> float | None:
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else None


def _sum(*vals: float | None) -> float | None:
    return None if any(v is None for v in vals) else sum(v for v in vals if v is not None)


def _mb(v: float | None) -> float | None:
    return None if v is None else v / 1048576


# What the tables show, in order: (name, unit, higher is better, how to read it from a role and
# its benchmark result).
STUDY_METRICS: list[tuple[str, str, bool, Any]] = [
    ("ops_per_sec", "ops/s", True, lambda ro, r: _get(ro, "ops_per_sec")),
    ("cpu_us_per_op", "us/op", False,
     lambda ro, r: _sum(_get(ro, "cost.cpu_user_us_per_op"), _get(ro, "cost.cpu_sys_us_per_op"))),
    ("storage_read_kb_per_op", "KB/op", False,
     lambda ro, r: _get(ro, "cost.storage_read_kb_per_op")),
    ("storage_write_kb_per_op", "KB/op", False,
     lambda ro, r: _get(ro, "cost.storage_write_kb_per_op")),
    ("cs_per_op", "switches/op", False,
     lambda ro, r: _sum(_get(ro, "cost.voluntary_cs_per_op"),
                        _get(ro, "cost.involuntary_cs_per_op"))),
    ("p99_latency_us", "us", False,
     lambda ro, r: None if _get(ro, "latency_ns.p99") is None
     else _get(ro, "latency_ns.p99") / 1000),  # type: ignore[operator]
    ("worst_interval_ops_per_sec", "ops/s", True,  # the stall; only when intervals were sampled
     lambda ro, r: _get(ro, "intervals.min_ops_per_sec") if _get(ro, "intervals.count") else None),
    ("db_size_mb", "MB", False, lambda ro, r: _mb(_get(r, "db_size_bytes"))),
    ("peak_rss_mb", "MB", False, lambda ro, r: _mb(_get(r, "peak_rss_bytes"))),
]


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


def load_values(paths: list[str]) -> tuple[dict[tuple[str, str], list[float]], list[str]]:
    """(benchmark column, metric) -> one value per run; and the columns in run order. A column is
    the benchmark, with [role] when it has more than one."""
    values: dict[tuple[str, str], list[float]] = {}
    columns: list[str] = []
    for path in paths:
        doc = results.load(path).doc
        for r in doc.get("results", []):
            roles = r.get("roles", [])
            for ro in roles:
                col = r["benchmark"] if len(roles) == 1 else f"{r['benchmark']}[{ro['role']}]"
                if col not in columns:
                    columns.append(col)
                for name, _, _, fn in STUDY_METRICS:
                    v = fn(ro, r)
                    if v is not None:
                        values.setdefault((col, name), []).append(v)
    return values, columns


def _median(v: list[float] | None) -> float | None:
    return statistics.median(v) if v else None


def _ratio(v: float | None, base: float | None) -> str:
    if v is None or base is None:
        return "-"
    if base == 0:
        return "=" if v == 0 else "n/a"
    return f"{v / base:.2f}"


def metric_tables(labels: list[str], sides: dict[str, dict[tuple[str, str], list[float]]],
                  columns: list[str], metric_names: list[str]) -> list[str]:
    out: list[str] = []
    base = labels[0]
    for name, unit, higher, _ in STUDY_METRICS:
        if metric_names and name not in metric_names:
            continue
        cols = [c for c in columns if any((c, name) in sides[s] for s in labels)]
        if not cols:
            continue
        if all(v == 0 for s in labels for c in cols for v in sides[s].get((c, name), [])):
            out += [f"{name} ({unit}): 0 in every run", ""]
            continue
        out.append(f"{name} ({unit}, {'higher' if higher else 'lower'} is better): "
                   f"{base} in absolute values, the other rows relative to it")
        rows = relative_rows(labels, cols, lambda s, c: _median(sides[s].get((c, name))))
        out += render(rows, header=["series"] + cols, rule=True) + [""]
    return out


def relative_rows(labels: list[str], cols: list[str],
                  median_of: Any) -> list[list[str]]:
    """A row per series: the first (the base) in absolute values, the others relative to it;
    median_of(series, column) is a median or None. The console's tables and report.html's."""
    base = labels[0]
    rows = []
    for s in labels:
        med = [median_of(s, c) for c in cols]
        if s == base:
            rows.append([f"{s} (base)"] + ["-" if v is None else fmt_value(v) for v in med])
        else:
            rows.append([s] + [_ratio(v, median_of(base, c)) for v, c in zip(med, cols)])
    return rows


def qps_tables(labels: list[str], where: dict[str, dict[str, Any]],
               sides: dict[str, dict[tuple[str, str], list[float]]], columns: list[str],
               threads: list[int]) -> list[str]:
    """One table per benchmark column: QPS@N per group, then KB read and cs per op at the
    largest N (the seeds' r/q@N and cs@N)."""
    out: list[str] = []
    top = max(threads)
    groups: list[str] = []
    for s in labels:
        if s in where and where[s]["group"] not in groups:
            groups.append(where[s]["group"])
    for col in columns:
        if not col.endswith("]") or col.endswith("[reader]"):
            header = ["group"] + [f"QPS@{n}" for n in threads] + [f"KBr/q@{top}", f"cs/q@{top}"]
            rows = []
            for g in groups:
                by_t = {where[s]["threads"]: s for s in labels if s in where
                        and where[s]["group"] == g}
                cells = [_median(sides[by_t[n]].get((col, "ops_per_sec"))) if n in by_t else None
                         for n in threads]
                last = by_t.get(top)
                kb = _median(sides[last].get((col, "storage_read_kb_per_op"))) if last else None
                cs = _median(sides[last].get((col, "cs_per_op"))) if last else None
                rows.append([g] + ["-" if v is None else f"{v:,.0f}" for v in cells]
                            + ["-" if kb is None else f"{kb:.3f}",
                               "-" if cs is None else f"{cs:.3f}"])
            out.append(f"{col}: ops/s at each thread count (medians over the rounds)")
            out += render(rows, header=header, rule=True) + [""]
    return out


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
         "medians": {f"{c}|{m}": _median(v) for (c, m), v in sides[s].items()}}
        for s in labels]}
    return "\n".join(lines).rstrip(), doc


def write(outdir: str, text: str, doc: dict[str, Any]) -> None:
    with open(os.path.join(outdir, "table.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
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


def run(args: Any, builds: list[tuple[str, Build]], plan: Any, engines: list[str]) -> int:
    """Measures every combination of the axes, interleaved by round; prints and saves the
    tables."""
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
    files: dict[str, list[str]] = {s.label: [] for s in series}
    for r in range(1, args.repeats + 1):
        try:
            runner.measure_round(series, plan, r, outdir, files, f"/{args.repeats}")
        except runner.BuildError as e:
            runner.write_summary(outdir, f"kvb matrix failed: {e}")
            raise RunError(f"a run failed: {e}") from None
    text, doc = report(series, where, files, threads, args.metric or [])
    doc.update(command="matrix", workloads=plan.workloads, num=plan.num, repeats=args.repeats,
               configs=[{"name": c.name, "args": c.args} for c in configs])
    print(text)
    write(outdir, text, doc)
    from kvbtools.pages.result_pages import write_report  # report.html: bars relative to the base
    write_report(outdir)
    runner.write_summary(outdir, f"kvb matrix done: {args.repeats} round(s); tables in table.txt")
    print(f"results: {runner.shown(outdir)}/ (table.txt, study.json, one JSON per run)")
    store.auto_store([f for s in series for f in files[s.label]], args)
    return 0


class _AnyFlag(set):  # type: ignore[type-arg]
    """Accepts every flag name: checks a --configs file's form before the binary exists."""

    def __contains__(self, item: object) -> bool:
        return True


def _any_flag() -> set[str]:
    return _AnyFlag()
