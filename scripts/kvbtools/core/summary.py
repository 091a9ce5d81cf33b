"""The summary rows of kvbench runs: a line per engine, benchmark and role with ops/s, MB/s,
latency, CPU and bytes written per op and size; and of Google Benchmark (kvbench_micro) files: a
line per benchmark with its time per iteration, rate, repetitions and their spread. kvb report
prints them; its page tabulates them."""
from __future__ import annotations

import statistics
from typing import Any, Iterable, Sequence

from kvbtools.core import stats, table
from kvbtools.core.results import Row

COLUMNS = ["engine", "benchmark", "ops/s", "MB/s", "p50 us", "p99 us", "p99.9 us", "cpu us/op",
           "wKB/op", "db MB", "notes"]


def _fmt(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def cells(row: Row, noisy: bool = False) -> list[str]:
    """The row's columns after the lead ones (COLUMNS); `noisy`: its run was noisy
    (core/environment.noisy_reason), said in its notes."""
    d: dict[str, Any] = row.data
    lat = d["latency_ns"]
    cost = d["cost"]
    notes = []
    if row.role == "reader":
        notes.append(f"{d['found']}/{d['found'] + d['not_found']} found")
    if "pacing" in d:
        p = d["pacing"]
        if p["target_bytes_per_sec"] > 0:
            notes.append("sustained" if p["sustained"] else "NOT sustained")
        else:
            notes.append("unpaced")
    if row.reference:
        notes.append("reference engine")
    cpu = cost["cpu_user_us_per_op"] + cost["cpu_sys_us_per_op"]
    if d.get("background") and "thread_cpu_us_per_op" in cost:
        # The paced writer's own thread: the process's CPU over its few ops is the readers'.
        cpu = cost["thread_cpu_us_per_op"]
        notes.append("cpu: own thread")
    if noisy:
        notes.append("noisy run")
    wkb = cost.get("storage_write_kb_per_op")
    return [row.engine, row.label, _fmt(d["ops_per_sec"], 0), _fmt(d["mb_per_sec"]),
            _fmt(lat["p50"] / 1e3, 2), _fmt(lat["p99"] / 1e3, 2), _fmt(lat["p99_9"] / 1e3, 2),
            _fmt(cpu, 2), "-" if not isinstance(wkb, (int, float)) else _fmt(wkb, 3),
            _fmt(d["_result"]["db_size_bytes"] / 1048576.0), ", ".join(notes)]


def lead(row: Row, file: str, several: bool, repeated: bool) -> list[str]:
    """The columns before cells(row) that tell alike rows apart ("memory fillseq" three
    times): its file when there are several, its repeat ('2/3') when they are shown."""
    r = row.data["_result"]
    return ([file] if several else []) + \
        ([f"{r.get('repeat', 1)}/{r.get('repeats', 1)}"] if repeated else [])


def lead_header(several: bool, repeated: bool) -> list[str]:
    return (["file"] if several else []) + (["repeat"] if repeated else [])


def summary(rows: Iterable[Row], files: Sequence[str] | None = None,
            noisy: Sequence[bool] | None = None) -> str:
    """The table; a `repeat` column when a benchmark was repeated, and a `file` column (each
    row's entry of `files`) when the rows come from several files; `noisy`: per row, whether its
    run was noisy (its notes say so)."""
    rows = list(rows)
    files = list(files) if files is not None else [""] * len(rows)
    noisy = list(noisy) if noisy is not None else [False] * len(rows)
    several = len(set(files)) > 1
    repeated = any(r.data["_result"].get("repeats", 1) > 1 for r in rows)
    header = lead_header(several, repeated)
    k = len(header)
    body = [lead(r, f, several, repeated) + cells(r, n) for r, f, n in zip(rows, files, noisy)]
    return "\n".join(table.render(body, header=header + COLUMNS,
                                  left=(*range(k), k, k + 1, -1), rule=True))


# ---- Google Benchmark JSON (kvbench_micro) -------------------------------------------------------

MICRO_COLUMNS = ["benchmark", "time", "cpu", "rate", "n", "cv", "notes"]
MICRO_NOTE = ("time, cpu: wall and CPU time per iteration, the median of the n repetitions "
              "(--benchmark_repetitions);\ncv: the CPU time's coefficient of variation; rate: "
              "GB/s = 10^9 bytes/s, M items/s = 10^6 items/s")


def micro_context(ctx: dict[str, Any]) -> str:
    """What built and ran a kvbench_micro file, in one line (kvb micro's and kvb report's)."""
    return "kvbench_micro {preset}: {compiler}, {arch}, {build_type}; {mode}".format(
        preset=ctx.get("kvbench_preset", "?"), compiler=ctx.get("kvbench_compiler", "?"),
        arch=ctx.get("kvbench_arch_flags", "?"), build_type=ctx.get("kvbench_build_type", "?"),
        mode=ctx.get("cache_mode", "?"))


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _micro_groups(doc: dict[str, Any]) -> dict[str, tuple[list[dict[str, Any]],
                                                          dict[str, dict[str, Any]]]]:
    """Per benchmark (run_name), in file order: its repetitions and its aggregates by name."""
    out: dict[str, tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]] = {}
    for b in doc["benchmarks"]:
        reps, aggs = out.setdefault(str(b.get("run_name", b["name"])), ([], {}))
        if b.get("run_type", "iteration") == "aggregate":
            aggs[str(b.get("aggregate_name", ""))] = b
        else:
            reps.append(b)
    return out


def _rate(bytes_per_s: float | None, items_per_s: float | None) -> str:
    parts = []
    if bytes_per_s is not None:
        parts.append(f"{bytes_per_s / 1e9:,.2f} GB/s")
    if items_per_s is not None:
        parts.append(f"{items_per_s / 1e6:,.3f} M items/s")
    return ", ".join(parts) or "-"


def micro_cells(name: str, reps: list[dict[str, Any]], aggs: dict[str, dict[str, Any]]
                ) -> list[str]:
    """One benchmark's row: the median of its repetitions (or, in a file of aggregates only,
    Google Benchmark's median or mean row), with the CV when it was repeated."""
    failed = next((b for b in reps if b.get("error_occurred")), None)
    if failed is not None:
        return [name, "-", "-", "-", "", "", "skipped: " + str(failed.get("error_message", ""))]
    first = reps[0] if reps else aggs.get("median") or aggs.get("mean") or {}
    unit = str(first.get("time_unit", "ns"))
    pick = reps or [first]

    def med(key: str) -> float | None:
        return _median([float(b[key]) for b in pick if isinstance(b.get(key), (int, float))])

    n = len(reps) if reps else int(first.get("repetitions", 1) or 1)
    cpu = [float(b["cpu_time"]) for b in reps if isinstance(b.get("cpu_time"), (int, float))]
    cv_row = aggs.get("cv", {}).get("cpu_time")
    cv = stats.cv(cpu) if len(cpu) > 1 else cv_row if not reps else None
    notes = [str(first.get("label", ""))] if first.get("label") else []
    ratio = med("compression_ratio")
    if ratio is not None:
        notes.append(f"ratio {ratio:.3f}")
    time_, cpu_ = med("real_time"), med("cpu_time")
    return [name, "-" if time_ is None else f"{table.fmt_value(time_)} {unit}",
            "-" if cpu_ is None else f"{table.fmt_value(cpu_)} {unit}",
            _rate(med("bytes_per_second"), med("items_per_second")), str(n),
            "" if not isinstance(cv, (int, float)) or n < 2 else f"{cv * 100:.1f}%",
            "; ".join(notes)]


def micro_rows(doc: dict[str, Any]) -> list[list[str]]:
    return [micro_cells(name, reps, aggs) for name, (reps, aggs) in _micro_groups(doc).items()]


def micro_summary(path: str, doc: dict[str, Any]) -> str:
    """kvb report's table of one Google Benchmark file: its context line, then a row per
    benchmark."""
    lines = [f"{path}: {micro_context(doc['context'])}"]
    lines += table.render(micro_rows(doc), header=MICRO_COLUMNS, left=(0, -1), rule=True)
    return "\n".join(lines)
