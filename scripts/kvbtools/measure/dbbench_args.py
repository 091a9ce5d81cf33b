"""The flags that make kvbench's rocksdb engine and RocksDB's db_bench run the same workload
(docs/dbbench-parity.md), and what `kvb dbbench parity` and `instructions` share."""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from typing import Iterator

from kvbtools.core import host, output
from kvbtools.core.errors import UsageError

# kvbench benchmark -> db_bench benchmark
BENCHMARKS = {"fillseq": "fillseq", "readrandom": "readrandom", "overwrite": "overwrite",
              "fwdrange": "seekrandom"}
# Between phases both tools flush and wait for compactions, so each phase starts from the same
# LSM shape instead of whatever compaction happened to be running (the largest source of spread).
SETTLE = {"kvbench": ["settle"], "db_bench": ["flush", "waitforcompaction"]}
# The engine kvbench runs: db_bench is RocksDB's tool.
ENGINE = "rocksdb"


def sequence(tool: str, benchmarks: list[str]) -> str:
    names: list[str] = []
    for i, b in enumerate(benchmarks):
        if i > 0:
            names += SETTLE[tool]
        names.append(b if tool == "kvbench" else BENCHMARKS[b])
    return ",".join(names)


def common_settings(num: int, cache: int) -> dict[str, str]:
    return {"num": str(num), "key_size": "16", "value_size": "100", "compression_ratio": "0.5",
            "threads": "1", "seek_nexts": "10", "cache_size": str(cache)}


def db_bench_args(binary: str, db: str, num: int, cache: int, benchmarks: list[str]) -> list[str]:
    s = common_settings(num, cache)
    args = [binary, f"--db={db}", "--benchmarks=" + sequence("db_bench", benchmarks),
            "--compression_type=none",
            # db_bench's defaults that differ from RocksDB's (kvbench uses RocksDB's):
            "--enable_pipelined_write=false", "--table_cache_numshardbits=6",
            "--cache_high_pri_pool_ratio=0.5", "--index_shortening_mode=1",
            "--pin_top_level_index_and_filter=true", "--delayed_write_rate=16777216",
            "--hard_pending_compaction_bytes_limit=274877906944", "--dump_malloc_stats=false",
            "--reverse_iterator=false",
            "--use_existing_db=false", "--histogram=false", "--statistics=false"]
    return args + [f"--{k}={v}" for k, v in s.items()]


def kvbench_args(binary: str, db: str, num: int, cache: int, benchmarks: list[str],
                 json_path: str) -> list[str]:
    s = common_settings(num, cache)
    return [binary, f"--engine={ENGINE}", f"--db={db}",
            "--benchmarks=" + sequence("kvbench", benchmarks), "--compression=none",
            "--report_interval_seconds=0", f"--json={json_path}"] + \
        [f"--{k}={v}" for k, v in s.items()]


def add_arguments(p: argparse.ArgumentParser, num: int) -> None:
    """The flags both commands take."""
    p.add_argument("--num", type=int, default=num, help=f"keys (default {num})")
    p.add_argument("--cache-size", type=int, default=256 << 20,
                   help="block cache bytes (default 268435456)")
    p.add_argument("--benchmarks", default=",".join(BENCHMARKS),
                   help=f"comma-separated, of {', '.join(BENCHMARKS)} (default all)")
    p.add_argument("--kvbench", help="default: build/<host gcc native preset>/src/kvbench")
    p.add_argument("--db-bench", default=shutil.which("db_bench") or "db_bench",
                   help="default: db_bench on PATH (Debian: rocksdb-tools)")
    p.add_argument("--workdir", help="where the databases go (default: a temporary directory)")


def check(args: argparse.Namespace, *tools: str) -> list[str]:
    """The benchmarks asked for; args.kvbench and args.db_bench resolved. A tool (db_bench, or
    one of `tools`, e.g. valgrind) that is not there, or a --workdir that cannot be one, is a
    UsageError."""
    output.check_directory(args.workdir, "--workdir")
    benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [b for b in benchmarks if b not in BENCHMARKS]
    if unknown or not benchmarks:
        raise UsageError(f"--benchmarks: unknown {', '.join(unknown) or 'empty list'}; valid: "
                         f"{', '.join(BENCHMARKS)}")
    if args.num < 1 or args.cache_size < 0:
        raise UsageError("--num must be positive and --cache-size not negative")
    args.kvbench = host.binary("kvbench", args.kvbench, "--kvbench")
    for tool in (args.db_bench, *tools):
        if not shutil.which(tool) and not os.access(tool, os.X_OK):
            raise UsageError(f"{tool} not found (apt-get install rocksdb-tools valgrind)")
    return benchmarks


@contextlib.contextmanager
def workdir(given: str | None, prefix: str) -> Iterator[str]:
    """--workdir (kept), or a temporary directory removed at the end."""
    path = given or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(path, exist_ok=True)
    try:
        yield path
    finally:
        if given is None:
            shutil.rmtree(path, ignore_errors=True)
