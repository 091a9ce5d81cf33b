"""kvb dbbench: kvbench's rocksdb engine against RocksDB's db_bench on the same librocksdb.

  kvb dbbench parity        ops/s of both tools, alternating runs, ratio with a 95% interval
  kvb dbbench instructions  instructions per op of both tools under callgrind

The flag mapping: docs/dbbench-parity.md; the runs measured: docs/evidence/dbbench-parity.md.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import dbbench_instructions, dbbench_parity


def register(sub: Any) -> None:
    p = command.add(sub, "dbbench", __doc__, None)
    inner = p.add_subparsers(dest="dbbench_command", required=True, metavar="COMMAND")
    dbbench_parity.register(inner)
    dbbench_instructions.register(inner)
