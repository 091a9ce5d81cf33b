"""kvb dbbench parity: kvbench's rocksdb engine against db_bench, timed, on the same librocksdb.

Runs the same sequence (fillseq, readrandom, overwrite, and fwdrange = db_bench seekrandom with
--seek_nexts=10, settling flushes and compactions between them) in both tools with matched
options, alternating which tool goes first, and prints the median ops/s of each, their ratio
with a bootstrap 95% interval, and each tool's run-to-run spread; per run, its wall time, the
process's CPU seconds and the load average, and at the end each tool's CPU seconds per run (a
loaded machine stretches wall time, not the work done), and kvbench's per phase. --cpus runs
both under the same taskset. The flag mapping is in docs/dbbench-parity.md.

  kvb dbbench parity [--num 1000000] [--runs 5] [--cpus LIST] [--kvbench PATH] [--db-bench PATH]
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(sub: Any) -> None:
    p = command.add(sub, "parity", __doc__, "parity")
    groups.add_dbbench_arguments(p, 1000000)
    p.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    p.add_argument("--target", type=float, default=0.97,
                   help="the ratio each verdict is judged against (default 0.97)")
    p.add_argument("--min-ratio", type=float, default=0.0,
                   help="exit 1 if any kvbench/db_bench median ratio is below this")
    p.add_argument("--cpus", help="run both tools under `taskset -c CPUS` (0-3, 2,3): the whole "
                   "process, RocksDB's background threads included, as db_bench cannot pin its "
                   "benchmark thread alone (default: unpinned)")
