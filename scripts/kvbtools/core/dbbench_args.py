"""The flags that make kvbench's rocksdb engine and RocksDB's db_bench run the same workload
(docs/dbbench-parity.md): a table and the argument lists made from it, nothing run (measure/
dbbench_runs.py runs them); what `kvb dbbench parity` and `instructions` share (their flags:
commands/parsers/groups.py, their values commands/arguments.py)."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Iterator

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
