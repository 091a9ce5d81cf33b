#!/usr/bin/env python3
"""Smoke test of the real kvbench_micro binary (run by ctest as micro_smoke_test).

Runs it with --benchmark_filter/--benchmark_min_time and checks that it writes valid JSON with
kvbench's build context and a measurement (or a stated reason) for every benchmark, that its
names are the documented ones, that its own flags work and bad ones are refused, and that
`kvb micro` (the quick start's summary) prints its table. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from typing import Any

ARGS = argparse.Namespace()
SIZES = [256, 1024, 4096, 8192, 16384, 65536]
FUNCTIONS = [
    "memory/read", "memory/copy",
    "crc32c/table", "crc32c/hw_1way", "crc32c/hw_3way", "crc32c/extend",
    "xxh3_64/inline", "xxh3_64/lib", "xxh3_128/inline", "xxh3_128/lib",
    "xxh64/inline", "xxh64/lib",
    "lz4/compress", "lz4/compress_fast8", "lz4/compress_hc9", "lz4/decompress",
    "zstd/compress_l1", "zstd/compress_l3", "zstd/decompress",
]
CONTEXT_KEYS = [
    "kvbench_version", "kvbench_git_revision", "kvbench_preset", "kvbench_build_type",
    "kvbench_compiler", "kvbench_cxx_flags", "kvbench_arch_flags", "kvbench_target_arch",
    "kvbench_assertions", "kvbench_micro_code_alignment", "crc32c_extend_uses",
    "crc32c_extend_chosen_by",
    "xxhash_library_version", "xxhash_header_version", "xxhash_inline_vector",
    "lz4_library_version", "zstd_library_version", "rocksdb_version", "input", "cache_mode",
]


def run(*flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The binary with `flags`; `env`: extra environment variables (KVBENCH_CRC32C)."""
    environ = {k: v for k, v in os.environ.items() if k != "KVBENCH_CRC32C"}
    environ.update(env or {})
    return subprocess.run([ARGS.binary, *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=300, env=environ)


def run_json(*flags: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="micro_smoke.") as tmp:
        out = os.path.join(tmp, "out.json")
        proc = run(*flags, f"--benchmark_out={out}", "--benchmark_out_format=json", env=env)
        if proc.returncode != 0:
            raise AssertionError(f"kvbench_micro {' '.join(flags)} exited {proc.returncode}:\n"
                                 f"{proc.stderr}")
        with open(out, encoding="utf-8") as f:
            return json.load(f)  # raises if the JSON is not valid


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["name"]: b for b in doc["benchmarks"]}


class MicroSmokeTest(unittest.TestCase):
    def test_writes_json_with_build_context_and_measurements(self) -> None:
        doc = run_json("--benchmark_filter="
                       "^(memory|crc32c|xxh3_64|xxh64|lz4|zstd)/[a-z0-9_]+/4096$",
                       "--benchmark_min_time=0.01")
        ctx = doc["context"]
        for key in CONTEXT_KEYS:
            self.assertIn(key, ctx)
        self.assertEqual(ARGS.preset, ctx["kvbench_preset"])
        # The environment audit (docs/json.md): every fact known, or unknown with the reason.
        for fact in ("cpu_model", "microcode", "governor", "boost", "smt", "thp", "kernel",
                     "virtualization", "memory_available_bytes", "load_average_start"):
            value = ctx[f"environment.{fact}"]
            self.assertEqual(value == "unknown", f"environment.unknown.{fact}" in ctx, fact)
        self.assertIn("environment.during", ctx)
        results = by_name(doc)
        for fn in FUNCTIONS:
            if fn.startswith("xxh3_128"):
                continue  # not in this filter
            name = f"{fn}/4096"
            self.assertIn(name, results)
            b = results[name]
            if b.get("error_occurred"):
                # Only a hardware crc32c path may be unavailable, and it must say why.
                self.assertRegex(name, r"^crc32c/(hw_|fold_)")
                self.assertTrue(b["error_message"])
                continue
            self.assertGreater(b["bytes_per_second"], 0, name)
            self.assertEqual(b["iterations"] > 0, True)
            if fn.startswith(("lz4/", "zstd/")):
                self.assertGreater(b["compression_ratio"], 0.0, name)
                self.assertLessEqual(b["compression_ratio"], 1.1, name)

    def test_crc32c_extend_choice_is_measured_or_forced(self) -> None:
        """crc32c::Extend's kernel per size class: measured by default (with the rates), forced
        by KVBENCH_CRC32C, and an unknown kernel refused with the list (docs/micro.md)."""
        flags = ("--benchmark_filter=^crc32c/extend/", "--benchmark_min_time=0.001",
                 "--block_sizes=64,4096")
        doc = run_json(*flags)
        ctx = doc["context"]
        self.assertRegex(ctx["crc32c_extend_chosen_by"],
                         r"^(measured: best of (\d+|interrupted) timings|only one)")
        self.assertRegex(ctx["crc32c_extend_uses"], r"^0-127 B [a-z0-9_]+, 128-511 B ")
        if ctx["crc32c_extend_chosen_by"].startswith("measured"):
            self.assertRegex(ctx["crc32c_extend_rates.0-127 B"], r" GB/s at 64 B$")
        for b in doc["benchmarks"]:
            self.assertRegex(b["label"],
                             r"^crc32c::Extend -> crc32c/[a-z0-9_]+ \((measured|only one)")
        forced = run_json(*flags, env={"KVBENCH_CRC32C": "table"})
        fctx = forced["context"]
        self.assertEqual("forced by KVBENCH_CRC32C=table", fctx["crc32c_extend_chosen_by"])
        self.assertEqual("table for every length", fctx["crc32c_extend_uses"])
        for b in forced["benchmarks"]:
            self.assertRegex(b["label"], r"^crc32c::Extend -> crc32c/table \(forced, class ")
        proc = run(*flags, env={"KVBENCH_CRC32C": "no_such_kernel"})
        self.assertEqual(2, proc.returncode, proc.stderr)
        self.assertIn("KVBENCH_CRC32C=no_such_kernel: no such crc32c kernel (kvbench has table, "
                      "hw_1way, hw_3way", proc.stderr)

    def test_names_are_the_documented_ones(self) -> None:
        proc = run("--benchmark_list_tests=true")
        self.assertEqual(0, proc.returncode, proc.stderr)
        listed = set(proc.stdout.split())
        for fn in FUNCTIONS:
            for size in SIZES:
                self.assertIn(f"{fn}/{size}", listed)
        pattern = re.compile(r"^[a-z0-9_]+/[a-z0-9_]+/\d+$")
        for name in listed:
            self.assertRegex(name, pattern)

    def test_compression_ratio_flag_reaches_the_input(self) -> None:
        ratios = {}
        for r in ("0.25", "1"):
            doc = run_json("--benchmark_filter=^lz4/compress/4096$", "--benchmark_min_time=0.01",
                           f"--compression_ratio={r}", "--block_sizes=4096")
            ratios[r] = by_name(doc)["lz4/compress/4096"]["compression_ratio"]
            self.assertIn(f"compression_ratio {r}", doc["context"]["input"])
        self.assertLess(ratios["0.25"], 0.45)
        self.assertGreater(ratios["1"], 0.9)

    def test_cache_cold_mode(self) -> None:
        doc = run_json("--cache_cold", "--cold_buffer_mb=8", "--block_sizes=4096",
                       "--benchmark_filter=^(crc32c/table|lz4/decompress|zstd/decompress)/",
                       "--benchmark_min_time=0.01")
        results = by_name(doc)
        for name in ("crc32c/table/4096/cold", "lz4/decompress/4096/cold",
                     "zstd/decompress/4096/cold"):
            self.assertIn(name, results)
            self.assertFalse(results[name].get("error_occurred"), results[name])
        self.assertTrue(doc["context"]["cache_mode"].startswith("cold"))

    def test_bad_flags_are_refused(self) -> None:
        for flags, words in ((["--compression_ratio=2"], "--compression_ratio"),
                             (["--block_sizes=4096,x"], "--block_sizes"),
                             (["--no_such_flag"], "no_such_flag")):
            proc = run(*flags)
            self.assertNotEqual(0, proc.returncode, flags)
            self.assertIn(words, proc.stderr + proc.stdout, flags)

    def test_help_lists_kvbench_flags(self) -> None:
        proc = run("--help")
        self.assertEqual(0, proc.returncode)
        for flag in ("--compression_ratio", "--cache_cold", "--block_sizes", "--benchmark_filter"):
            self.assertIn(flag, proc.stdout)

    def test_kvb_micro_prints_gbps_table(self) -> None:
        proc = subprocess.run([ARGS.kvb, "micro", "--binary", ARGS.binary, "--min-time", "0.01"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=300)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn("GB/s", proc.stdout)
        for fn in ("crc32c/table", "xxh3_64/inline", "lz4/decompress", "zstd/decompress"):
            row = rf"^{re.escape(fn)}\s+[\d.]+\s+[\d.]+"  # GB/s, fraction of the ceiling
            self.assertRegex(proc.stdout, re.compile(row, re.M))
        # Every row's fraction of the ceiling row (memory/read) of the same block size.
        self.assertIn("of read", proc.stdout)
        self.assertRegex(proc.stdout, re.compile(r"^memory/read\s+[\d.]+\s+1\.00\s", re.M))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--kvb", required=True, help="scripts/kvb")
    parser.add_argument("--preset", default="none")
    args, rest = parser.parse_known_args()
    ARGS.__dict__.update(vars(args))
    result = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
