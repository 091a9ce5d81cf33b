"""kvb dbbench instructions: instructions per op, kvbench's rocksdb engine against db_bench,
counted by callgrind.

Wall-clock ratios on a shared 2-core VM move by 10-20% run to run (docs/dbbench-parity.md);
instruction counts do not: callgrind gives the same total for the same binary, inputs and seed
whatever else the machine is doing. For each benchmark both tools run under callgrind at two op
counts on copies of one database, and the difference divided by the difference in ops is the
cost of one op, free of start-up, open and close:

    instructions/op = (total(ops2) - total(ops1)) / (ops2 - ops1)

fillseq starts from an empty database (--num=ops); readrandom, overwrite and fwdrange (db_bench
seekrandom --seek_nexts=10) run on copies of one --num-key database that kvbench writes and
settles first. Each (benchmark, seed) pair uses the same --seed in both tools; overwrite's cost
depends on the keys drawn (memtable skiplist shape), so use several seeds. Options are matched
exactly as `kvb dbbench parity` matches them (the same flag builders).

  kvb dbbench instructions [--num 1000000] [--ops 10000,30000] [--seeds 1,2,3]
                           [--benchmarks fillseq,readrandom,overwrite,fwdrange] [--jobs 2]
"""
from __future__ import annotations

import os
from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(sub: Any) -> None:
    p = command.add(sub, "instructions", __doc__, "instructions")
    groups.add_dbbench_arguments(p, 1000000)
    p.add_argument("--ops", default="10000,30000", help="the two op counts, ascending")
    p.add_argument("--seeds", default="1,2,3", help="--seed values; per-op figures are averaged")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="callgrind runs at a time (default 2)")
