#!/usr/bin/env python3
"""kvb bisect --layouts on generated histories whose speed depends on code placement (ctest).

The tiny library of bisect_test.py, with a table of placement factors compiled into each
commit: the benchmark reads KVB_LAYOUT_SEED (as a user's benchmark would be linked with it) and
multiplies its cost by that seed's factor, as a relink with another section order would. The
factors are the commit's own (every commit changes sum.c, so every commit is compiled anew).

(a) commit 10 only moves code: 1.5x faster on seed 0, a random +-20% on any other seed, from
    then on; commit 23 is a real 1.25x speed-up. The bisect names 23 or says it could not
    decide, never 10.
(b) every commit has a +-3% placement spread; commit 23 is the same speed-up: it is named.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bisect_test as bt  # noqa: E402  (the Repo, the benchmark and kvb's path)
import kvbtest  # noqa: E402

LIB = """#include <stddef.h>
#include <stdint.h>
/* commit %d */
const double lib_place[8] = {%s};
uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops) {
  uint64_t s = 0;
  for (int r = 0; r < %d; r++) {
    for (size_t i = 0; i < n; i++) s += (uint64_t)p[i] * (i | 1);
    *ops += n;
  }
  return s;
}
"""
# The benchmark of bisect_test.py, its cost multiplied by this link's placement factor.
BENCH = bt.BENCH.replace(
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);",
    "uint64_t lib_sum(const unsigned char *p, size_t n, uint64_t *ops);\n"
    "extern const double lib_place[8];").replace(
    "  ns *= speed * exp(sigma * z);",
    "  const char *layout = getenv(\"KVB_LAYOUT_SEED\");\n"
    "  ns *= lib_place[(layout ? atoi(layout) : 0) % 8];\n"
    "  ns *= speed * exp(sigma * z);")
COMMITS = 30
MOVE, SPEEDUP = 10, 23


def factors(i: int, scenario: str) -> list[float]:
    """Time multipliers of commit i's links 0..7 (below 1: faster)."""
    rng = random.Random(i * 7919 + (1 if scenario == "a" else 2))
    if scenario == "a":
        if i < MOVE:
            return [1.0] * 8
        return [1 / 1.5] + [1 + rng.uniform(-0.2, 0.2) for _ in range(7)]
    return [1 + rng.uniform(-0.03, 0.03) for _ in range(8)]


def history(scenario: str) -> list[tuple[str, dict[str, str]]]:
    out = []
    for i in range(COMMITS):
        passes = 5 if i < SPEEDUP else 4   # 5/4: 1.25x faster
        text = LIB % (i, ", ".join(f"{f:.6f}" for f in factors(i, scenario)), passes)
        files = {"sum.c": text}
        if i == 0:
            files["bench.c"] = BENCH
        out.append((f"commit {i}", files))
    return out


class BisectLayoutsTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvb-bisect-layouts-test."

    def bisect(self, scenario: str) -> tuple[subprocess.CompletedProcess[str], bt.Repo, dict]:
        repo = bt.Repo(self.tmp, history(scenario))
        env = dict(repo.env, KVB_TEST_NOISE=bt.CLEAN, KVB_TEST_SEED="1",
                   KVB_TEST_RUNS=os.path.join(self.tmp, "runs.txt"))
        results = os.path.join(self.tmp, "results")
        p = subprocess.run([sys.executable, bt.KVB, "bisect", "--repo", repo.path,
                            "--old", repo.commits[0], "--new", repo.commits[-1],
                            "--find", "faster", "--layouts", "3", "--build-cmd", bt.BUILD,
                            "--measure-cmd", "./bench", "--results-dir", results, "--no-store"],
                           env=env, capture_output=True, text=True, timeout=500)
        self.assertNotIn("Traceback", p.stderr)
        d = os.path.join(results, os.listdir(results)[0])
        with open(os.path.join(d, "bisect.json")) as f:
            doc = json.load(f)
        print(f"\n{p.stdout}", file=sys.stderr)
        return p, repo, doc

    def test_a_code_move_is_never_blamed(self) -> None:
        p, repo, doc = self.bisect("a")
        c = repo.commits
        self.assertNotEqual(doc["first_new"], c[MOVE], p.stdout)
        if doc["confirmed"]:
            self.assertEqual(doc["first_new"], c[SPEEDUP], p.stdout)
        else:
            self.assertIn(doc["first_new"], (None, c[SPEEDUP]), p.stdout)
            self.assertEqual(p.returncode, 4, p.stdout)  # undecided: docs/cli.md
        self.assertRegex(p.stdout, r"placement: \u00b1\d+\.\d% over \d+ links")
        # Every series ran every commit on the seeds 0, 1, 2 (and any it added) in turn.
        seeds = doc["records"][0]["seeds"]["old"]
        self.assertEqual(sorted(set(seeds)), list(range(max(seeds) + 1)))
        self.assertGreaterEqual(max(seeds), 2)

    def test_a_real_change_within_a_small_placement_spread_is_named(self) -> None:
        p, repo, doc = self.bisect("b")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(doc["first_new"], repo.commits[SPEEDUP], p.stdout)
        self.assertRegex(p.stdout, r"Yuen's trimmed t, two-sided, on \d+ link pairs, paired by "
                                   r"round")


if __name__ == "__main__":
    unittest.main(verbosity=2)
