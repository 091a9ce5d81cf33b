"""kvb dbbench parity, run: what the command does with its arguments. Its command line and
--help: commands/parsers/dbbench_parity.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
import statistics
from dataclasses import dataclass

from kvbtools.commands.arguments import DbbenchRequest
from kvbtools.core import stats, table
from kvbtools.core import dbbench_args
from kvbtools.measure import dbbench_runs
from kvbtools.core.dbbench_args import db_bench_args, kvbench_args
from kvbtools.measure.dbbench_runs import CPU, phase_cpu
from kvbtools.core.errors import RunError, UsageError


@dataclass(frozen=True)
class ParityRequest:
    """kvb dbbench parity's arguments as values."""
    tools: DbbenchRequest
    runs: int
    target: float
    min_ratio: float
    cpus: str | None

    @staticmethod
    def of(args: argparse.Namespace) -> "ParityRequest":
        return ParityRequest(DbbenchRequest.of(args), args.runs, args.target, args.min_ratio,
                             args.cpus)


def verdict(row: dict[str, float], target: float) -> str:
    """Whether the runs show kvbench at >= target x db_bench, show it below, or cannot tell."""
    if row["ci_low"] >= target:
        return "meets"
    if row["ci_high"] < target:
        return "below"
    return "unresolved"


def runs_of(tools: DbbenchRequest) -> dbbench_runs.Tools:
    """The checked request (kvbench resolved) as what measure/dbbench_runs.py runs."""
    assert tools.kvbench is not None, "DbbenchRequest.checked resolves kvbench"
    return dbbench_runs.Tools(tools.kvbench, tools.db_bench, tools.num, tools.cache_size,
                              tools.benchmarks)


def run(req: ParityRequest) -> int:
    tools = req.tools.checked(*(["taskset"] if req.cpus else []))
    benchmarks = list(tools.benchmarks)
    if req.runs < 1:
        raise UsageError("--runs must be at least 1")
    with dbbench_args.workdir(tools.workdir, "kvbench-vs-dbbench-") as work:
        print(f"kvb dbbench parity: {req.runs} alternating runs of {','.join(benchmarks)} at "
              f"--num={tools.num}, cache {tools.cache_size} B, compression none; databases in "
              f"{work}")
        print("db_bench: " + " ".join(db_bench_args(tools.db_bench, "DB", tools.num,
                                                    tools.cache_size, benchmarks)[1:]))
        print("kvbench:  " + " ".join(kvbench_args(str(tools.kvbench), "DB", tools.num,
                                                   tools.cache_size, benchmarks,
                                                   "OUT.json")[1:]))
        if req.cpus:
            print(f"both pinned: taskset -c {req.cpus} (every thread of each process)")
        load_start = os.getloadavg()
        got = dbbench_runs.timed_rounds(runs_of(tools), req.runs, req.cpus, work)
        load_end = os.getloadavg()
    rows = []
    worst = float("inf")
    for b in benchmarks:
        r = dbbench_runs.summarize(got["db_bench"][b], got["kvbench"][b])
        worst = min(worst, r["ratio"])
        rows.append([b, f"{r['db_median']:,.0f}", f"{r['db_cv']:.1%}", f"{r['kv_median']:,.0f}",
                     f"{r['kv_cv']:.1%}", f"{r['ratio']:.3f}",
                     f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]", verdict(r, req.target),
                     f"{r['paired_median']:.3f} [{r['paired_min']:.3f}, {r['paired_max']:.3f}]"])
    print(f"\nload average (1, 5, 15 min): at start {' '.join(f'{x:.1f}' for x in load_start)}, "
          f"at end {' '.join(f'{x:.1f}' for x in load_end)} on {os.cpu_count()} CPUs")
    print("\n".join(table.render(rows, header=[
        "benchmark", "db_bench ops/s", "cv", "kvbench ops/s", "cv", "ratio", "95% interval",
        f"vs {req.target:g}", "paired: median [min, max]"], left=(0, -1))))
    print(f"(ratio = kvbench median / db_bench median over {req.runs} runs; cv = run-to-run "
          "coefficient of variation;\n 95% interval = bootstrap of that ratio; 'meets' or 'below' "
          "only when the whole interval is on one side of the target, else 'unresolved';\n "
          "paired = kvbench/db_bench of the two runs made back to back in each round, which "
          "cancels drift slower than one round)")
    db_cpu, kv_cpu = got["db_bench"][CPU], got["kvbench"][CPU]
    print(f"process CPU seconds per run (the whole sequence, background threads included): "
          f"db_bench median {statistics.median(db_cpu):.2f} cv {stats.cv(db_cpu):.1%}, kvbench "
          f"median {statistics.median(kv_cpu):.2f} cv {stats.cv(kv_cpu):.1%}\n (CPU time is the "
          "work each tool did; a loaded machine stretches wall time far more than it)")
    print("kvbench CPU seconds per phase (process, background threads included): " + ", ".join(
        f"{b} median {statistics.median(got['kvbench'][phase_cpu(b)]):.2f} cv "
        f"{stats.cv(got['kvbench'][phase_cpu(b)]):.1%}" for b in benchmarks))
    if worst < req.min_ratio:
        raise RunError(f"a ratio is below --min-ratio={req.min_ratio:g}")
    return 0


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(ParityRequest.of(args))
