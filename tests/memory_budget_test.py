#!/usr/bin/env python3
"""--memory_budget, --io_bound and --drop_caches through the real binary (issue 21).

Each storage engine's split of the budget is recorded in the JSON and shown by --version; the
refusals exit 2 with a message naming the problem; an IO-bound RocksDB run reads from the
device; the console shows syscall and engine bytes per op.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS  # noqa: E402

STORAGE = kvbtest.storage_engines()
BUDGET = 256 << 20


def engines() -> list[str]:
    found = [e.lower() for e in ARGS.engines.replace(",", ";").split(";") if e]
    return [e for e in STORAGE if e in found]


def as_nobody() -> list[str]:
    """A prefix that runs a command as an unprivileged user, or [] when that is not possible."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class MemoryBudgetTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvbench-budget-"

    def setUp(self) -> None:
        super().setUp()
        os.chmod(self.tmp, 0o777)  # the unprivileged runs write here too

    def run_kvbench(self, args: list[str], prefix: list[str] | None = None,
                    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*(prefix or []), ARGS.kvbench, "--report_interval_seconds=0",
                               *args], capture_output=True, text=True, timeout=600)

    def assertUsageError(self, args: list[str], message: str,
                         prefix: list[str] | None = None) -> None:
        p = self.run_kvbench(args, prefix)
        self.assertEqual(p.returncode, 2, msg=f"{args}: {p.stderr}")
        self.assertIn(message, p.stderr)

    def run_json(self, engine: str, *args: str) -> tuple[dict, str]:
        out = os.path.join(self.tmp, f"{engine}.json")
        p = self.run_kvbench([f"--engine={engine}", f"--db={self.tmp}/{engine}", f"--json={out}",
                              *args])
        self.assertEqual(p.returncode, 0, msg=p.stderr)
        with open(out, encoding="utf-8") as f:
            return json.load(f), p.stdout

    def test_each_engine_records_its_split_of_the_budget(self) -> None:
        if not engines():
            self.skipTest("no storage engine compiled in")
        for engine in engines():
            doc, _ = self.run_json(engine, "--num=2000", "--benchmarks=fillrandom,readrandom",
                                   "--memory_budget=256MB")
            config = doc["context"]["engine"]["config"]
            self.assertEqual(config["memory_budget"], str(BUDGET), engine)
            parts = {k: int(v) for k, v in config.items()
                     if k.startswith("memory_budget.") and not k.startswith("memory_budget.sets.")}
            self.assertTrue(parts, engine)
            self.assertEqual(sum(parts.values()), BUDGET, f"{engine}: {parts}")
            if engine == "rocksdb":
                self.assertEqual(config["block_cache_bytes"], str(parts["memory_budget.block_cache"]))
                self.assertEqual(config["cache_index_and_filter_blocks"], "true")
            if engine == "wiredtiger":
                self.assertIn(f"cache_size={BUDGET}", config["connection_config"])
                self.assertIn("eviction_dirty_trigger=80", config["connection_config"])
            if engine == "lmdb":  # without --io_bound nothing bounds its page cache: say so
                self.assertIn("without --io_bound nothing bounds the OS page cache",
                              config["cache_size"])

    def test_version_shows_every_engines_split(self) -> None:
        p = self.run_kvbench(["--version"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("memory budget split at --memory_budget=1GB", p.stdout)
        for engine in engines():
            self.assertRegex(p.stdout, rf"\n  {engine} +\S+ \d+ [MG]iB")

    def test_sizes_take_binary_suffixes(self) -> None:
        if "rocksdb" not in engines():
            self.skipTest("rocksdb not compiled in")
        doc, _ = self.run_json("rocksdb", "--num=100", "--benchmarks=fillseq", "--cache_size=3MiB")
        self.assertEqual(doc["context"]["engine"]["config"]["block_cache_bytes"], str(3 << 20))
        self.assertUsageError(["--cache_size=3XB"], "invalid value '3XB' for --cache_size")

    def test_console_shows_syscall_and_engine_bytes_per_op(self) -> None:
        if "wiredtiger" not in engines():
            self.skipTest("wiredtiger not compiled in")
        _, out = self.run_json("wiredtiger", "--num=20000", "--benchmarks=fillrandom,overwrite")
        self.assertIn("syscall written", out)
        self.assertIn("storage written", out)
        self.assertRegex(out, r"engine bytes/op: .*block_written [0-9.]+ KB")

    def test_bad_input_is_a_usage_error(self) -> None:
        self.assertUsageError(["--memory_budget=0"], "--memory_budget must be")
        self.assertUsageError(["--engine=memory", "--memory_budget=64MB"],
                              "the memory engine takes no --memory_budget")
        self.assertUsageError(["--memory_budget=64MB", "--cache_size=64MB"],
                              "give --memory_budget or --cache_size, not both")
        self.assertUsageError(["--io_bound"], "--io_bound needs --memory_budget")
        self.assertUsageError(["--io_bound", "--memory_budget=1GB", "--num=1000000"],
                              "must be at least twice --memory_budget=1 GiB")

    def test_root_only_flags_refuse_clearly_without_root(self) -> None:
        version = subprocess.run([ARGS.kvbench, "--version"], capture_output=True, text=True,
                                 timeout=120).stdout
        if ", emulated by " in version:
            self.skipTest("the CPU is emulated: qemu-user loses its sysroot across the switch to "
                          "another user")
        nobody = as_nobody()
        if not nobody:
            self.skipTest("needs root and setpriv to run as an unprivileged user")
        self.assertUsageError(["--drop_caches", f"--db={self.tmp}/d"],
                              "--drop_caches needs root", nobody)
        if "lmdb" in engines():
            self.assertUsageError(["--engine=lmdb", "--io_bound", "--memory_budget=16MB",
                                   "--num=1000000", f"--db={self.tmp}/l"],
                                  "only a memory cgroup can bound it, and none is available",
                                  nobody)

    def test_io_bound_rocksdb_reads_the_device(self) -> None:
        if "rocksdb" not in engines():
            self.skipTest("rocksdb not compiled in")
        doc, out = self.run_json("rocksdb", "--io_bound", "--memory_budget=16MB", "--num=400000",
                                 "--reads=5000", "--benchmarks=fillseq,readrandom")
        self.assertIn("O_DIRECT", doc["context"]["engine"]["config"]["io_bound"])
        reader = doc["results"][1]["roles"][0]
        if "storage_reads_per_op" not in reader["cost"]:
            self.skipTest("the database directory is on no block device (tmpfs?)")
        # A block cache of 12 MiB over ~50 MiB of data: most reads miss it and go to the device.
        self.assertGreater(reader["cost"]["storage_reads_per_op"], 0.5, out)

    def test_io_bound_lmdb_runs_in_a_memory_cgroup(self) -> None:
        if "lmdb" not in engines() or os.geteuid() != 0:
            self.skipTest("needs lmdb and root")
        # fillseq appends at the tree's right edge: quick even with the map mostly out of memory.
        doc, _ = self.run_json("lmdb", "--io_bound", "--memory_budget=16MB", "--num=400000",
                               "--reads=2000", "--benchmarks=fillseq,readrandom")
        self.assertIn("memory cgroup", doc["context"]["engine"]["config"]["io_bound"])


if __name__ == "__main__":
    kvbtest.main("kvbench", "engines")
