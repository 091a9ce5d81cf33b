"""kvb dbbench instructions, run: what the command does with its arguments. Its command line and
--help: commands/parsers/dbbench_instructions.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

from kvbtools.commands.arguments import DbbenchRequest
from kvbtools.core import table
from kvbtools.core import dbbench_args
from kvbtools.measure import dbbench_runs
from kvbtools.core.errors import UsageError


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(InstructionsRequest.of(args))


@dataclass(frozen=True)
class InstructionsRequest:
    """kvb dbbench instructions' arguments as values."""
    tools: DbbenchRequest
    ops: str             # the two op counts, as given
    seeds: str
    jobs: int

    @staticmethod
    def of(args: argparse.Namespace) -> "InstructionsRequest":
        return InstructionsRequest(DbbenchRequest.of(args), args.ops, args.seeds, args.jobs)


def parse_counts(req: InstructionsRequest) -> tuple[list[int], list[int]]:
    try:
        ops = [int(x) for x in req.ops.split(",")]
        seeds = [int(x) for x in req.seeds.split(",")]
    except ValueError:
        raise UsageError("--ops and --seeds take comma-separated integers") from None
    if len(ops) != 2 or not 0 < ops[0] < ops[1] or not seeds or req.tools.num < ops[1] \
            or req.jobs < 1:
        raise UsageError("--ops needs two counts 0 < a < b <= --num, --seeds at least one, "
                         "--jobs >= 1")
    return ops, seeds


def runs_of(tools: DbbenchRequest) -> dbbench_runs.Tools:
    """The checked request (kvbench resolved) as what measure/dbbench_runs.py runs."""
    assert tools.kvbench is not None, "DbbenchRequest.checked resolves kvbench"
    return dbbench_runs.Tools(tools.kvbench, tools.db_bench, tools.num, tools.cache_size,
                              tools.benchmarks)


def run(req: InstructionsRequest) -> int:
    tools = req.tools.checked("valgrind")
    benchmarks = list(tools.benchmarks)
    ops, seeds = parse_counts(req)
    with dbbench_args.workdir(tools.workdir, "kvbench-instructions-") as work:
        got = dbbench_runs.counted(runs_of(tools), ops, seeds, req.jobs, work)
    rows = []
    for b in benchmarks:
        cost = {tool: [dbbench_runs.per_op(got[(tool, b, s, ops[0])], got[(tool, b, s, ops[1])],
                                           ops[0], ops[1]) for s in seeds]
                for tool in ("db_bench", "kvbench")}
        d, k = statistics.mean(cost["db_bench"]), statistics.mean(cost["kvbench"])
        rows.append([b, f"{d:,.0f}", f"{k:,.0f}", f"{k / d:.3f}",
                     " ".join(f"{kk / dd:.3f}" for dd, kk in zip(cost["db_bench"],
                                                                 cost["kvbench"]))])
    print()
    print("\n".join(table.render(rows, header=["benchmark", "db_bench instr/op",
                                               "kvbench instr/op", "kvbench/db_bench",
                                               "per seed"], left=(0, -1))))
    print("(instructions per op from callgrind totals at two op counts; mean over seeds; a ratio "
          "of 1.031 costs the same as a throughput ratio of 0.97 at equal instructions per cycle)")
    return 0
