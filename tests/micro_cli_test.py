#!/usr/bin/env python3
"""kvbench_micro's command line: usage errors exit 2 with a message, as kvbench's do (its flags are
a table parsed by src/cli/flags.h); Google Benchmark's own flags pass through."""
from __future__ import annotations

import argparse
import subprocess
import sys
import unittest

MICRO = ""


def run(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MICRO, *flags], capture_output=True, text=True, timeout=120)


class MicroCliTest(unittest.TestCase):
    def test_usage_errors_exit_2(self) -> None:
        for flags, words in ((["--nonsense"], "nonsense"),
                             (["--compression_ratio=2"], "--compression_ratio must be (0, 1]"),
                             (["--compression_ratio=x"], "invalid value 'x' for --compression_ratio"),
                             (["--block_sizes=4096,x"], "--block_sizes"),
                             (["--cold_buffer_mb=99999999"], "--cold_buffer_mb must be"),
                             (["--seed"], "flag --seed needs a value")):
            with self.subTest(flags=flags):
                p = run(*flags)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)

    def test_help_lists_the_flag_table_and_google_benchmarks(self) -> None:
        p = run("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--compression_ratio (double, default 0.5, range (0, 1])", p.stdout)
        self.assertIn("--benchmark_filter", p.stdout)

    def test_both_parsers_take_their_flags(self) -> None:
        p = run("--block_sizes", "256", "--benchmark_filter=crc32c/table/256$",
                "--benchmark_min_time=0.001", "--nocache_cold")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("crc32c/table/256", p.stdout)
        self.assertNotIn("crc32c/table/4096", p.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--micro", required=True)
    args, rest = parser.parse_known_args()
    MICRO = args.micro
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
