#!/usr/bin/env python3
"""`kvb selfcheck` at small sizes: it measures and prints the harness's cost per op and its peak
RSS at two --num values, records them with --json, and fails (exit 1, figures still printed)
when a bound is missed."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS  # noqa: E402

KVB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "kvb")
SMALL = ["--reads", "300000", "--small", "10000", "--large", "300000"]


def selfcheck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KVB, "selfcheck", "--kvbench", ARGS.kvbench, *SMALL, *args],
                          capture_output=True, text=True, timeout=600)


class SelfcheckTest(unittest.TestCase):
    def test_prints_and_records_its_figures(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "selfcheck.json")
            # A bound on time no emulator or sanitizer reaches: this test is about the figures.
            p = selfcheck("--json", out, "--max-ns-per-op", "100000")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(out, encoding="utf-8") as f:
                fig = json.load(f)
        print(p.stdout, file=sys.stderr)
        m = re.search(r"^harness cost: null readrandom ([\d.]+) ns/op; memory readrandom "
                      r"([\d.]+) ns/op \(same run\); harness = ([\d.]+) of the memory engine's op$",
                      p.stdout, re.M)
        self.assertIsNotNone(m, p.stdout)
        assert m is not None
        self.assertAlmostEqual(float(m.group(1)), fig["null_readrandom_ns_per_op"], delta=0.05)
        self.assertAlmostEqual(float(m.group(2)), fig["memory_readrandom_ns_per_op"], delta=0.05)
        m = re.search(r"^harness CPU: null readrandom ([\d.]+) ns/op of its thread's CPU timing "
                      r"every op, ([\d.]+) with --latency_sample=16, ([\d.]+) untimed: timing an "
                      r"op costs (-?[\d.]+) ns$", p.stdout, re.M)
        self.assertIsNotNone(m, p.stdout)
        assert m is not None
        self.assertAlmostEqual(float(m.group(1)), fig["null_readrandom_cpu_ns_per_op"], delta=0.05)
        self.assertAlmostEqual(float(m.group(2)), fig["null_readrandom_sampled_cpu_ns_per_op"],
                               delta=0.05)
        self.assertAlmostEqual(float(m.group(3)), fig["null_readrandom_untimed_cpu_ns_per_op"],
                               delta=0.05)
        self.assertRegex(p.stdout, r"(?m)^harness memory: null fillrandom peak RSS [\d.]+ MiB at "
                                   r"--num=10000, [\d.]+ MiB at --num=300000: [-+][\d.]+ MiB, "
                                   r"-?[\d.]+ bytes per added key; ratio [\d.]+$")
        for key in ("null_readrandom_ns_per_op", "memory_readrandom_ns_per_op",
                    "null_readrandom_cpu_ns_per_op", "null_readrandom_sampled_cpu_ns_per_op",
                    "null_readrandom_untimed_cpu_ns_per_op",
                    "peak_rss_small_bytes", "peak_rss_large_bytes"):
            self.assertGreater(fig[key], 0, key)
        self.assertEqual(fig["failed"], [])
        self.assertEqual((fig["small"], fig["large"]), (10000, 300000))

    def test_a_missed_bound_fails_with_the_figures_printed(self) -> None:
        p = selfcheck("--max-ns-per-op", "0.001", "--max-rss-growth-mib", "0",
                      "--max-rss-bytes-per-key", "0")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("harness cost: null readrandom", p.stdout)
        self.assertRegex(p.stderr, r"kvb: error: null readrandom costs [\d.]+ ns/op, over "
                                   r"--max-ns-per-op=0.001")


if __name__ == "__main__":
    kvbtest.main("kvbench")
