#!/usr/bin/env python3
"""Tests of kvb compare / matrix / versions and their statistics (run by ctest).

The statistics are checked against textbook and published values; compare against synthetic
documents made here with a seeded RNG (from a real kvbench document as the template) and against
real output of kvbench and kvbench_micro; matrix and versions for their argument handling (no
builds); the interval of the adaptive rounds (core/stats) on synthetic samples. kvb bisect has its own
tests/bisect_test.py.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest
from itertools import combinations
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

from kvbtools.commands.parsers import groups  # noqa: E402
from kvbtools.core import callgrind_out, fingerprint, host, levels, results, stats  # noqa: E402
from kvbtools.measure import callgrind, sources  # noqa: E402
from kvbtools.core.errors import RunError, UsageError  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS, kvbench_doc, load_json, write_json  # noqa: E402



def kvb(*args: str, env: dict[str, str] | None = None, cwd: str | None = None,
        python: bool = False) -> subprocess.CompletedProcess[str]:
    """scripts/kvb ARGS, or python3 scripts/kvb ARGS (python=True: for a PATH without python3)."""
    return subprocess.run([*([sys.executable] if python else []), KVB, *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


class StatsTest(unittest.TestCase):
    def test_exact_p_of_completely_separated_samples(self) -> None:
        # U = 0; two-sided exact p = 2 / C(10, 5) = 2/252.
        t = stats.mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        self.assertEqual(t.method, "exact")
        self.assertEqual(t.u, 0)
        self.assertAlmostEqual(t.p, 2 / 252, places=12)
        # With 3 values a side the smallest possible p is 2/C(6,3) = 0.1: never below 0.05.
        self.assertAlmostEqual(stats.mann_whitney_u([1, 2, 3], [4, 5, 6]).p, 0.1)
        self.assertAlmostEqual(stats.min_p(3, 3), 0.1)
        self.assertAlmostEqual(stats.min_p(4, 4), 2 / 70)

    def test_textbook_critical_value_n5_n5(self) -> None:
        # Tables of critical values of U (two-tailed, alpha 0.05, n1 = n2 = 5): U <= 2.
        a = [1, 2, 3, 4, 5]
        u2 = stats.mann_whitney_u(a, [3.5, 5.5, 6, 7, 8])  # 4 > 3.5, 5 > 3.5
        self.assertEqual(u2.u, 2)
        self.assertLess(u2.p, 0.05)
        self.assertAlmostEqual(u2.p, 8 / 252)  # P(U <= 2) = (1 + 1 + 2) / 252, two-sided
        u3 = stats.mann_whitney_u(a, [3.5, 4.5, 6, 7, 8])
        self.assertEqual(u3.u, 3)
        self.assertGreater(u3.p, 0.05)
        self.assertAlmostEqual(u3.p, 14 / 252)

    def test_scipy_documentation_example(self) -> None:
        # scipy.stats.mannwhitneyu docs: males vs females, U1 = 17, exact p = 0.1111...,
        # method="asymptotic" p = 0.11134688653314041.
        males, females = [19, 22, 16, 29, 24], [20, 11, 17, 12]
        exact = stats.mann_whitney_u(males, females)
        self.assertEqual(exact.u, 17)
        self.assertEqual(exact.method, "exact")
        self.assertAlmostEqual(exact.p, 0.1111111111111111, places=12)
        normal = stats.mann_whitney_u(males, females, exact=False)
        self.assertAlmostEqual(normal.p, 0.11134688653314041, places=10)

    def test_exact_distribution_matches_enumeration(self) -> None:
        # Every split of 1..9 into 4 x's and 5 y's, U counted by brute force, against the
        # recursion the exact test uses; then p-values of actual samples against the counts.
        values = list(range(1, 10))
        brute = [0] * 21
        for xs in combinations(values, 4):
            ys = [v for v in values if v not in xs]
            brute[sum(1 for x in xs for y in ys if x > y)] += 1
        self.assertEqual(list(stats._u_counts(4, 5)), brute)
        for xs in ((1, 2, 3, 4), (1, 2, 3, 6), (2, 4, 6, 8), (1, 5, 7, 9)):
            ys = [v for v in values if v not in xs]
            u = sum(1 for x in xs for y in ys if x > y)
            k = min(u, 20 - u)
            expected = min(1.0, 2 * sum(brute[: k + 1]) / 126)
            t = stats.mann_whitney_u(list(xs), ys)
            self.assertEqual(t.u, u)
            self.assertAlmostEqual(t.p, expected, places=12)

    def test_tie_correction_against_the_textbook_formula(self) -> None:
        # a = 1 2 2 3 3 3, b = 3 4 4 5 5 6. Mid-ranks: 1 | 2.5 2.5 | 5.5 x4 | 8.5 8.5 | 10.5 10.5
        # | 12. R_a = 22.5, U_a = 22.5 - 21 = 1.5, mean 18. Tie groups 2,4,2,2: sum t^3-t = 78.
        # var = 6*6/12 * (13 - 78/(12*11)) = 37.227272...; z = (16.5 - 0.5)/sqrt(var).
        t = stats.mann_whitney_u([1, 2, 2, 3, 3, 3], [3, 4, 4, 5, 5, 6])
        self.assertEqual(t.method, "normal")
        self.assertEqual(t.u, 1.5)
        var = 3 * (13 - 78 / 132)
        self.assertAlmostEqual(var, 37.22727272727, places=8)
        expected = 2 * (1 - statistics.NormalDist().cdf(16 / math.sqrt(var)))
        self.assertAlmostEqual(t.p, expected, places=10)
        self.assertAlmostEqual(t.p, 0.00873, places=4)

    def test_identical_samples_give_p_one(self) -> None:
        self.assertEqual(stats.mann_whitney_u([5, 5, 5], [5, 5, 5]).p, 1.0)

    def test_geometric_mean(self) -> None:
        self.assertAlmostEqual(stats.geomean([1, 4]), 2.0)
        self.assertAlmostEqual(stats.geomean([0.5, 2.0]), 1.0)
        self.assertAlmostEqual(stats.geomean([2, 8, 4]), 4.0)
        self.assertTrue(math.isnan(stats.geomean([])))
        # A ratio of 0 makes the mean 0: never (0, 1, 0, 0, 0) -> 1.00.
        self.assertEqual(stats.geomean([0, 1, 0, 0, 0]), 0.0)
        self.assertTrue(math.isnan(stats.geomean([1, -1])))

    def test_bootstrap_is_deterministic_for_a_seed(self) -> None:
        rng = random.Random(3)
        a = [100 + rng.gauss(0, 2) for _ in range(40)]
        b = [90 + rng.gauss(0, 2) for _ in range(40)]
        one = stats.bootstrap_ratio_ci(a, b, seed=7)
        self.assertEqual(one, stats.bootstrap_ratio_ci(a, b, seed=7))
        self.assertNotEqual(one, stats.bootstrap_ratio_ci(a, b, seed=8))
        lo, hi = one
        self.assertLess(lo, statistics.median(b) / statistics.median(a))
        self.assertGreater(hi, statistics.median(b) / statistics.median(a))
        self.assertLess(hi, 1.0)  # 10% slower with 2% noise: the interval excludes 1

    def test_verdict_rules(self) -> None:
        # One file (process) a value, as kvb compare pools files: the one verdict, levels.judge.
        def verdict(a: list[float], b: list[float], j: stats.Judgement) -> stats.Verdict:
            return levels.judge(levels.Sample.processes(a), levels.Sample.processes(b), j)
        base = [100.0, 101.0, 99.0, 100.5, 99.5]
        slower = [x * 0.9 for x in base]
        v = verdict(base, slower, stats.Judgement(0.05, 0.05, True))
        self.assertEqual(v.word, "slower")
        self.assertTrue(v.regression)
        # Lower is better (latency): the same numbers are an improvement.
        v = verdict(base, slower, stats.Judgement(0.05, 0.05, False))
        self.assertEqual(v.word, "faster")
        self.assertFalse(v.regression)
        # Significant, but the whole interval is within a 15% threshold: no change.
        v = verdict(base, slower, stats.Judgement(0.15, 0.05, True))
        self.assertEqual(v.word, stats.NO_CHANGE)
        self.assertTrue(v.decided)
        self.assertIn("within the 15% threshold", v.note)
        # Significant, 10% under a 10.5% threshold, but the interval reaches past it: undecided.
        v = verdict(base, slower, stats.Judgement(0.105, 0.05, True))
        self.assertEqual(v.word, stats.UNDECIDED)
        self.assertIn("reaches beyond it", v.note)
        # One value a side: no noise estimate, no verdict.
        v = verdict([100.0], [50.0], stats.Judgement(0.05, 0.05, True))
        self.assertEqual(v.word, stats.UNDECIDED)
        self.assertEqual(v.note, levels.ONE_PROCESS)
        self.assertFalse(v.regression)
        # Three a side can never reach p < 0.05: a 5x drop is undecided, never "no change".
        v = verdict(base[:3], [x / 5 for x in base[:3]], stats.Judgement(0.05, 0.05))
        self.assertEqual(v.word, stats.UNDECIDED)
        self.assertEqual(v.note, "n=3+3 processes cannot reach p<0.05: 4 processes a side "
                                 "needed, each a separate run (a file)")
        self.assertEqual(stats.runs_needed(0.05), 4)
        self.assertEqual(stats.runs_needed(0.01), 5)
        # Noise as large as the change: not significant, and the interval spans both.
        wide = [100.0, 130.0, 70.0, 110.0, 90.0]
        v = verdict(wide, [x * 0.95 for x in wide], stats.Judgement(0.05, 0.05))
        self.assertEqual(v.word, stats.UNDECIDED)
        self.assertIn("spans both no change and a change of 5% or more", v.note)
        # The same noise, five a side, no change: the interval is within 5%, decided.
        v = verdict(base, [x * 1.001 for x in reversed(base)],
                          stats.Judgement(0.05, 0.05))
        self.assertEqual(v.word, stats.NO_CHANGE)
        self.assertTrue(stats.within(v.interval, 0.05))
        # Constant sides (sizes, counts): no noise, decided either way.
        v = verdict([0.0] * 3, [0.0] * 3, stats.Judgement(0.05, 0.05, False))
        self.assertEqual(v.word, stats.NO_CHANGE)
        v = verdict([4.0] * 3, [5.0] * 3, stats.Judgement(0.05, 0.05, False))
        self.assertEqual(v.word, "slower")


# ---- adaptive rounds -------------------------------------------------------------------------

def log_interval(base: list[float], other: list[float]) -> tuple[float, float, float]:
    """other / base as core/levels takes it: the Hodges-Lehmann shift of the logs."""
    est, lo, hi = stats.shift_interval([math.log(b) for b in base], [math.log(o) for o in other])
    return math.exp(est), math.exp(lo), math.exp(hi)


class RoundsTest(unittest.TestCase):
    def test_the_interval_is_the_inverted_u_test(self) -> None:
        # 5 values a side: the 3rd smallest and 3rd largest of the 25 pairwise log ratios, as the
        # tables of Hollander & Wolfe give (coverage 1 - 2 * 4/252 = 96.8%).
        self.assertEqual(stats.cut(5, 5), 3)
        self.assertEqual(stats.cut(8, 8), 14)
        self.assertEqual(stats.cut(10, 10), 24)
        self.assertEqual(stats.cut(3, 3), 0)         # no finite 95% interval with 3 a side
        # Past 25 a side, the normal approximation: one pair wider than the exact 318.
        self.assertEqual(stats.cut(30, 30), 317)
        base, other = [10, 11, 12, 13, 14], [15, 16, 17, 18, 19]
        d = sorted(math.log(o / b) for o in other for b in base)
        est, lo, hi = log_interval(base, other)
        self.assertAlmostEqual(lo, math.exp(d[2]))
        self.assertAlmostEqual(hi, math.exp(d[22]))
        self.assertAlmostEqual(est, math.exp(d[12]))
        # The interval excludes 1 exactly when the exact U test gives p <= 2 P(U <= 2).
        edge = 2 * sum(stats._u_counts(5, 5)[:3]) / math.comb(10, 5)
        rng = random.Random(5)
        for _ in range(300):
            a = [rng.lognormvariate(0, 0.1) for _ in range(5)]
            b = [rng.lognormvariate(0.08, 0.1) for _ in range(5)]
            _, lo, hi = log_interval(a, b)
            self.assertEqual(not lo <= 1 <= hi, stats.mann_whitney_u(b, a).p <= edge)

    def test_the_interval_covers_the_true_ratio(self) -> None:
        rng = random.Random(11)
        hits = 0
        for _ in range(400):
            a = [100 * rng.lognormvariate(0, 0.05) for _ in range(6)]
            b = [110 * rng.lognormvariate(0, 0.05) for _ in range(6)]
            _, lo, hi = log_interval(a, b)
            hits += lo <= 1.1 <= hi
        self.assertGreaterEqual(hits / 400, 0.94)
        self.assertLessEqual(hits / 400, 0.995)

    def test_durations(self) -> None:
        for text, seconds in (("90s", 90), ("20m", 1200), ("1h30m", 5400), ("1.5h", 5400),
                              ("45", 45)):
            self.assertEqual(groups.parse_duration(text), seconds)
        for bad in ("soon", "-5m", "0", "", "5 minutes"):
            with self.assertRaises(argparse.ArgumentTypeError):
                groups.parse_duration(bad)

    def test_bad_budgets_exit_2(self) -> None:
        base = ["matrix", "--presets", f"{HOST}-gcc-native", "--micro", "--dry-run"]
        for extra, message in ((["--max-rounds", "0"], "must be at least 1"),
                               (["--max-time", "soon"], "not a duration"),
                               (["--max-time=-5m"], "not a duration"),
                               (["--layouts", "0"], "must be at least 1"),
                               (["--cpu", "fastest"], "expected auto, none or a CPU number"),
                               (["--cpu", "4096"], "not a CPU this process may run on")):
            p = kvb(*base, *extra)
            self.assertEqual(p.returncode, 2, f"{extra}: {p.stderr}")
            self.assertIn(message, p.stderr)
            self.assertNotIn("Traceback", p.stderr)
        # Adaptive by default: --until-resolved is accepted and changes nothing.
        for extra in ([], ["--until-resolved"]):
            p = kvb(*base, *extra, "--max-rounds", "12", "--repeats", "3")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("-DKVBENCH_LAYOUT_SEEDS=0;1;2;3", p.stdout)   # 4 links by default
            self.assertIn("first rounds (round, layout seed, series, engine; the order rotates "
                          "by one series a round), 4 links:", p.stdout)
            self.assertIn("  8 seed 3 x86-gcc-native" if HOST == "x86" else "  8 seed 3",
                          p.stdout)   # 3 rounds in whole cycles, 2 a link: 8
            self.assertIn("then rounds or links where the variance is, until every row's 95% "
                          "interval is narrower than 5%, at most 12 rounds", p.stdout)
        # Exactly N rounds: --repeats N --max-rounds N; one link: nothing relinked.
        p = kvb(*base, "--repeats", "3", "--max-rounds", "3", "--layouts", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"-DKVBENCH_LAYOUT_SEEDS=\s")   # none (the sources follow)
        self.assertRegex(p.stdout, r"\n  3 seed 0 \S+\n")
        self.assertNotRegex(p.stdout, r"\n  4 seed")
        self.assertNotIn("then rounds", p.stdout)


# ---- synthetic documents ---------------------------------------------------------------------

def gbench_doc(rng: random.Random, scale: float, reps: int, preset: str) -> dict[str, Any]:
    """Google Benchmark JSON with `reps` repetitions of two benchmarks, plus aggregate rows
    whose absurd values must be ignored."""
    rows: list[dict[str, Any]] = []
    for name, gbps in (("crc32c/table/4096", 2.0), ("lz4/compress/4096", 0.8)):
        for i in range(reps):
            bps = gbps * 1e9 * scale * (1 + rng.gauss(0, 0.01))
            rows.append({"name": name, "run_name": name, "run_type": "iteration",
                         "repetitions": reps, "repetition_index": i, "threads": 1,
                         "iterations": 1000, "real_time": 4096 / bps * 1e9,
                         "cpu_time": 4096 / bps * 1e9, "time_unit": "ns",
                         "bytes_per_second": bps})
        for agg in ("mean", "median", "stddev"):
            rows.append({"name": f"{name}_{agg}", "run_name": name, "run_type": "aggregate",
                         "aggregate_name": agg, "real_time": 1e99, "cpu_time": 1e99,
                         "time_unit": "ns", "bytes_per_second": 1e-99})
    return {"context": {"kvbench_preset": preset, "input": "seed 0", "cache_mode": "hot"},
            "benchmarks": rows}


def real_kvbench(tmp: str, *flags: str) -> str:
    out = os.path.join(tmp, "kv.json")
    subprocess.run([ARGS.kvbench, "--engine=memory", f"--db={tmp}/db",
                    "--report_interval_seconds=0", f"--json={out}", *flags],
                   check=True, capture_output=True, timeout=300)
    return out


class CompareTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvb-compare-test."

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def gbench_pair(self, scale: float) -> tuple[str, str]:
        base = write_json(self.path("base.json"), gbench_doc(random.Random(1), 1.0, 8, "gcc"))
        other = write_json(self.path(f"other{scale}.json"),
                      gbench_doc(random.Random(2), scale, 8, "clang"))
        return base, other

    def kvbench_pair(self, scale: float) -> tuple[str, str]:
        template = load_json(real_kvbench(self.tmp, "--num=500", "--benchmarks=fillseq"))
        base = write_json(self.path("kvbase.json"), kvbench_doc(template, random.Random(1), 1.0, 7))
        other = write_json(self.path(f"kvother{scale}.json"),
                      kvbench_doc(template, random.Random(2), scale, 7))
        return base, other

    def test_gbench_identical_distribution_is_no_change_and_passes(self) -> None:
        # One process a side, eight repetitions: compare.py's model, asked for.
        p = kvb("compare", *self.gbench_pair(1.0), "--fail-on-regression",
                "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("no significant change", p.stdout)
        self.assertNotRegex(p.stdout, r"\d (slower|faster|undecided)\b")
        self.assertRegex(p.stdout, r"crc32c/table/4096\s+1\.00\s+1\.0\d no change "
                                   r"\(p=0\.\d+(, adj\. [\d.]+)?\)")
        self.assertIn("unit: 8 repetitions a side, counted as independent", p.stdout)
        # The builds are the axis: allowed, and named at the top.
        self.assertRegex(p.stdout, r"^the sides' builds differ: preset: gcc in gcc, clang in "
                                   r"clang\n")
        self.assertRegex(p.stdout, r"crc32c/table/4096\s+[12]\.\d+\s+[12]\.\d+\n")
        # Time per iteration is shown only for benchmarks without a rate.
        self.assertNotIn("CPU time per iteration", p.stdout)

    def test_gbench_ten_percent_slower_is_slower_and_fails(self) -> None:
        base, other = self.gbench_pair(0.9)
        p = kvb("compare", base, other, "--threshold", "5%", "--fail-on-regression",
                "--repetitions-independent")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)  # a change: docs/cli.md
        self.assertRegex(p.stdout, r"lz4/compress/4096\s+0\.80\d\s+0\.71\d\n")
        self.assertRegex(p.stdout, r"lz4/compress/4096\s+1\.00\s+0\.89 slower \(p<0\.001\)")
        self.assertRegex(p.stdout, r"geometric mean\s+1\.00\s+0\.90\n")
        # Aggregate rows were not taken as measurements.
        self.assertNotIn("e+99", p.stdout)
        # Without --fail-on-regression the exit is 0; a 15% threshold hides a 10% change.
        self.assertEqual(kvb("compare", base, other).returncode, 0)
        p = kvb("compare", base, other, "--threshold", "15%", "--fail-on-regression",
                "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stdout)
        # By default the eight repetitions are one process's: undecided, saying why.
        p = kvb("compare", base, other, "--fail-on-regression")
        self.assertEqual(p.returncode, 4, p.stdout)
        self.assertRegex(p.stdout, r"lz4/compress/4096\s+1\.00\s+0\.89 undecided\n")
        self.assertIn("note: undecided: one process a side: its repetitions share one "
                      "placement and one machine state", p.stdout)
        # The side labels come from the presets in the context.
        self.assertIn("values relative to gcc", kvb("compare", base, other).stdout)

    def test_kvbench_identical_and_slower(self) -> None:
        base, same = self.kvbench_pair(1.0)
        p = kvb("compare", base, same, "--fail-on-regression", "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"memory fillseq\s+1\.00\s+1\.0\d no change")
        _, slow = self.kvbench_pair(0.9)
        p = kvb("compare", base, slow, "--fail-on-regression", "--repetitions-independent")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        for title in ("ops_per_sec [ops/s], higher", "latency_ns.p99 [us], lower",
                      "cost.cpu_user_us_per_op [us/op], lower",
                      "cost.cpu_sys_us_per_op [us/op], lower"):
            self.assertIn(title, p.stdout)
        # Every metric is worse: ops/s lower, latency and CPU higher, all called slower.
        self.assertEqual(p.stdout.count(" slower (p"), 4, p.stdout)
        j = self.path("cmp.json")
        kvb("compare", base, slow, "--json", j, "--repetitions-independent")
        rows = load_json(j)["rows"]
        worse = ("ops_per_sec", "latency_ns.p99", "cost.cpu_user_us_per_op",
                 "cost.cpu_sys_us_per_op")
        self.assertEqual({r["metric"] for r in rows if r["regression"]}, set(worse))

    def test_kvbench_headline_metrics_by_default_and_all_on_request(self) -> None:
        base, slow = self.kvbench_pair(0.9)
        p = kvb("compare", base, slow)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"metrics: the \d+ headline ones \(--metric all: the \d+ ")
        self.assertIn("ops_per_sec [ops/s]", p.stdout)
        self.assertNotRegex(p.stdout, r"(?m)^ops \[ops\]")  # a count, not a measurement
        every = kvb("compare", base, slow, "--metric", "all")
        self.assertEqual(every.returncode, 0, every.stderr)
        self.assertNotIn("headline", every.stdout)
        self.assertGreater(every.stdout.count("higher is better") + every.stdout.count(
            "lower is better"), p.stdout.count("higher is better") + p.stdout.count(
            "lower is better"))

    def test_single_values_say_noise_unknown(self) -> None:
        a = write_json(self.path("a1.json"), gbench_doc(random.Random(1), 1.0, 1, "gcc"))
        b = write_json(self.path("b1.json"), gbench_doc(random.Random(2), 0.5, 1, "clang"))
        p = kvb("compare", a, b, "--fail-on-regression")
        self.assertEqual(p.returncode, 4, p.stdout)  # undecided: docs/cli.md
        self.assertRegex(p.stdout, r"lz4/compress/4096\s+1\.00\s+0\.\d\d undecided\n")
        self.assertRegex(p.stdout, r"geometric mean\s+1\.00\s+0\.50\n")
        self.assertIn("note: undecided: one process a side", p.stdout)
        self.assertIn("row(s) undecided", p.stderr)

    def test_pooling_files_of_one_side(self) -> None:
        # Four processes a side, two repetitions each: the processes are the unit.
        files = [write_json(self.path(f"p{i}.json"), gbench_doc(random.Random(i), 1.0 if i < 4 else
                                                            0.9, 2, "x")) for i in range(8)]
        p = kvb("compare", "--base", *files[:4], "--other", *files[4:],
                "--label", "old", "--label", "new")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("median of 8", p.stdout)
        self.assertIn("unit: 4 processes a side", p.stdout)
        self.assertIn("values relative to old", p.stdout)
        self.assertIn("slower", p.stdout)

    def test_bad_input_is_exit_2_with_a_message(self) -> None:
        good = write_json(self.path("good.json"), gbench_doc(random.Random(1), 1.0, 2, "x"))
        notjson = self.path("notjson.json")
        with open(notjson, "w") as f:
            f.write("{ this is not json")
        binary = self.path("binary.json")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00garbage\x80")
        other_kind = write_json(self.path("other.json"), {"name": "something else"})
        malformed = write_json(self.path("malformed.json"), {"schema": "kvbench-run",
                                                       "schema_version": 1, "context": {},
                                                       "results": [{}]})
        wrong_kind = write_json(self.path("wrong-kind.json"), {"benchmarks": "none"})
        template = load_json(real_kvbench(self.tmp, "--num=200", "--benchmarks=fillseq"))
        kv = write_json(self.path("kv1.json"), template)
        cases = {
            notjson: "not JSON", binary: "not", other_kind: "neither a kvbench run document",
            malformed: "$.results[0].benchmark: missing", self.path("missing.json"): "cannot read",
            wrong_kind: "neither a kvbench run document",
            kv: "cannot compare kvbench results with Google Benchmark",
        }
        for bad, words in cases.items():
            p = kvb("compare", good, bad)
            self.assertEqual(p.returncode, 2, (bad, p.stdout, p.stderr))
            self.assertIn(words, p.stderr, bad)
            self.assertNotIn("Traceback", p.stderr)
        p = kvb("compare", good)
        self.assertEqual(p.returncode, 2)
        p = kvb("compare", good, good, "--threshold", "lots")
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a threshold", p.stderr)

    def test_every_run_is_on_one_side_once(self) -> None:
        # `--base A --base B` compared B alone; a file on both sides compared a run with itself.
        a, b = self.gbench_pair(1.0)
        c = write_json(self.path("c.json"), gbench_doc(random.Random(3), 1.0, 8, "O3"))
        copy = shutil.copy(a, self.path("copy-of-base.json"))
        reindented = write_json(self.path("reindented.json"), load_json(a))
        link = self.path("link.json")
        os.symlink(a, link)
        refused = {
            ("--base", a, "--base", b, "--other", c): "--base given twice (again with",
            (a, a): f"{a} is on two sides (the base and side 2)",
            (a, b, a): f"{a} is on two sides (the base and side 3)",
            (a, link): f"{link} is on two sides (the base and side 2: {a} and {link})",
            ("--base", a, b, "--other", c, b): f"{b} is on two sides (the base and side 2)",
            ("--base", a, a, "--other", b): f"{a} is twice in the base",
            (a, copy): f"{copy} holds the same document as {a} (document ",
            ("--base", a, b, "--other", reindented): f"{reindented} holds the same document as "
                                                     f"{a}",
        }
        for args, says in refused.items():
            p = kvb("compare", *args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn(says, p.stderr, args)
            self.assertEqual(p.stdout, "", args)
        p = kvb("compare", "--base", a, b, "--other", c)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_environment_difference_is_not_comparable(self) -> None:
        path = real_kvbench(self.tmp, "--num=500", "--benchmarks=fillseq")
        doc = load_json(path)
        again = kvbtest.rerun(path, self.path("kv-again.json"))
        p = kvb("compare", path, again)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("not comparable:", p.stdout)
        self.assertRegex(p.stdout, r"noisy: kv.json: (none of 1 run|1 of 1 run)")
        doc["context"]["environment"]["cpu_model"] = "Some Other CPU 9000"
        other = write_json(self.path("other-cpu.json"), doc)
        p = kvb("compare", path, other)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not comparable: cpu_model differs", p.stdout)
        self.assertIn("'Some Other CPU 9000'", p.stdout)
        doc["context"]["environment"].update(noisy=True, noisy_reason="the hypervisor stole 9%")
        noisy = write_json(self.path("noisy.json"), doc)
        p = kvb("compare", path, noisy)
        self.assertIn("noisy: noisy.json: 1 of 1 run(s) noisy, e.g. the hypervisor stole 9%",
                      p.stdout)
        self.assertEqual(kvb("validate", noisy).returncode, 0)

    def test_wall_time_far_above_cpu_time_is_said_on_the_table(self) -> None:
        base, other = self.gbench_pair(1.0)
        p = kvb("compare", base, other)
        self.assertNotIn("the machine was busy", p.stdout)
        # Wall time equal to CPU time is said as a verdict, not as "up to 1.00x".
        self.assertIn("noisy: gcc: not busy by wall time: at most 1.00x CPU time (busy above "
                      "1.25x); kvbench_micro measures no steal", p.stdout)
        self.assertNotIn("up to 1.00x", p.stdout)
        doc = load_json(other)
        for row in doc["benchmarks"]:
            row["real_time"] = row["cpu_time"] * 2.45
        doc["context"]["environment.cpu_model"] = "X"
        busy = write_json(self.path("busy.json"), doc)
        p = kvb("compare", base, busy)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("WARNING: clang: wall time 2.45x CPU time", p.stdout)
        self.assertIn("noisy: clang: busy: wall time up to 2.45x CPU time", p.stdout)
        self.assertIn("the machine was busy", p.stdout)
        self.assertNotIn("not comparable", p.stdout)  # the base does not record cpu_model

    def test_nothing_in_common_exits_2(self) -> None:
        # Engines differ, so rows key on benchmark and role (--by engine): a fillseq against a
        # fillrandom still shares nothing.
        a = real_kvbench(self.tmp, "--num=200", "--benchmarks=fillseq")
        b = self.path("b.json")
        subprocess.run([ARGS.kvbench, "--engine=null", f"--db={self.tmp}/db2",
                        "--report_interval_seconds=0", f"--json={b}", "--num=200",
                        "--benchmarks=fillrandom"], check=True, capture_output=True, timeout=300)
        p = kvb("compare", a, b)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("nothing to compare", p.stderr)
        self.assertNotIn("absent", p.stdout)

    def test_real_kvbench_output_with_repeats(self) -> None:
        path = real_kvbench(self.tmp, "--num=2000", "--benchmarks=fillseq,readrandom[X3]")
        p = kvb("compare", path, kvbtest.rerun(path, self.path("again.json")),
                "--fail-on-regression")
        # One process a side: its three repeats are one sample of it.
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"memory readrandom\s+1\.00\s+1\.00 undecided\n")
        self.assertRegex(p.stdout, r"memory fillseq\s+1\.00\s+1\.00 undecided\n")
        self.assertIn("unit: one process a side", p.stdout)
        self.assertRegex(p.stdout, r"memory readrandom \(n=3\)\s+[\d,]+\s+[\d,]+")

    def test_real_kvbench_micro_output_with_repetitions(self) -> None:
        out = self.path("micro.json")
        subprocess.run([ARGS.micro, "--benchmark_filter=^(crc32c/table|xxh64/inline)/4096$",
                        "--benchmark_min_time=0.01", "--benchmark_repetitions=3",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"],
                       check=True, capture_output=True, timeout=300)
        p = kvb("compare", out, kvbtest.rerun(out, self.path("micro-again.json")),
                "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"crc32c/table/4096\s+1\.00\s+1\.00 undecided "
                                   r"\(p=1\.000\)")
        # A note names the rows it is about (it named none: which of the rows was it?).
        self.assertIn("note: undecided: n=3+3 repetitions cannot reach p<0.05: 4 repetitions a "
                      "side needed (bytes_per_second: crc32c/table/4096, xxh64/inline/4096)",
                      p.stdout)
        self.assertIn("median of 3", p.stdout)
        self.assertIn("GB/s", p.stdout)
        self.assertIn("cannot reach p<0.05", p.stdout)

    def test_kvb_micro_compare_prints_the_fraction_of_the_ceiling(self) -> None:
        out = self.path("micro-ceiling.json")
        subprocess.run([ARGS.micro, "--benchmark_filter=^(memory/read|crc32c/table)/(256|4096)$",
                        "--benchmark_min_time=0.01", "--benchmark_repetitions=3",
                        "--block_sizes=256,4096",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"],
                       check=True, capture_output=True, timeout=300)
        p = kvb("micro", "--compare", out)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("of read", p.stdout)
        rows = {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
            r"^(\S+/\d+)\s+([\d.]+)\s+([\d.]+)$", p.stdout, re.M)}

        def half_ulp(printed: str) -> float:
            """Half a unit in the last printed place: how far the rounding may have moved it."""
            decimals = len(printed.split(".")[1]) if "." in printed else 0
            return 0.5 * 10.0 ** -decimals

        for size in (256, 4096):
            self.assertEqual("1.00", rows[f"memory/read/{size}"][1])
            table, read = rows[f"crc32c/table/{size}"][0], rows[f"memory/read/{size}"][0]
            ratio = float(table) / float(read)
            # The ratio is of the unrounded rates: the printed ones only bound it (at a few
            # GB/s on a loaded machine, 0.43 may be 0.425 and move the ratio by 1%).
            slack = ratio * (half_ulp(table) / float(table) + half_ulp(read) / float(read))
            self.assertAlmostEqual(ratio, float(rows[f"crc32c/table/{size}"][1]),
                                   delta=slack + 0.005)


# ---- matrix and versions: argument handling --------------------------------------------------

HOST = host.native_preset().split("-")[0]
OTHER = "x86" if HOST == "arm" else "arm"


def lz4_tree(path: str, header: str) -> str:
    """A minimal lz4 source tree at `path`, lib/lz4.h holding `header`; returns `path`."""
    os.makedirs(os.path.join(path, "lib"))
    with open(os.path.join(path, "lib", "lz4.h"), "w") as f:
        f.write(header)
    return path


class ComparabilityAndUndecidedTest(kvbtest.TempDirTest):
    """Issue 29's acceptance: sides that measured different work are refused before any ratio
    (exit 2) unless accepted by name; a 3+3 comparison of a 5x drop says "undecided", never
    "no change"; the gate's exit statuses follow docs/cli.md."""
    TMP_PREFIX = "kvb-comparable-test."

    def run_kvbench(self, name: str, *flags: str) -> str:
        out = os.path.join(self.tmp, name)
        subprocess.run([ARGS.kvbench, "--engine=memory", f"--db={self.tmp}/db-{name}",
                        "--report_interval_seconds=0", f"--json={out}",
                        "--benchmarks=fillseq,readrandom", *flags],
                       check=True, capture_output=True, timeout=300)
        return out

    def test_different_num_is_not_comparable_unless_allowed(self) -> None:
        big = self.run_kvbench("big.json", "--num=10000")
        small = self.run_kvbench("small.json", "--num=1000")
        html = os.path.join(self.tmp, "cmp.html")
        p = kvb("compare", big, small, "--json", os.path.join(self.tmp, "cmp.json"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")  # refused before any number
        self.assertIn("kvb: error: not comparable: the sides measured different work", p.stderr)
        self.assertIn("num: 10000 in big.json, 1000 in small.json", p.stderr)
        self.assertNotIn("reads:", p.stderr)  # reads and writes follow num: named once
        self.assertIn("--allow-different num", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "cmp.json")))
        ok = kvb("compare", big, small, "--allow-different", "num")
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertTrue(ok.stdout.startswith(
            "WARNING: not comparable, accepted with --allow-different: num: 10000 in big.json, "
            "1000 in small.json\n"), ok.stdout[:300])
        j = os.path.join(self.tmp, "ok.json")
        kvb("compare", big, small, "--allow-different", "num", "--json", j)
        self.assertIn("accepted with --allow-different: num", load_json(j)["warnings"][0])
        bad = kvb("compare", big, small, "--allow-different", "bogus")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--allow-different bogus: not a field that defines the work", bad.stderr)
        # Pooling two workloads into one side is refused too.
        big2 = kvbtest.rerun(big, os.path.join(self.tmp, "big-again.json"))
        p = kvb("compare", "--base", big, small, "--other", big2, "--allow-different", "seed")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("num: 1000 and 10000 pooled in one side", p.stderr)
        self.assertFalse(os.path.exists(html))

    def test_a_forced_crc32c_kernel_is_another_run(self) -> None:
        # Issue 38: with KVBENCH_CRC32C=table, crc32c/extend ran the table kernel, and compare
        # showed 0.20 against a dispatched run without a word; the store put both in one series.
        files = {}
        for name, forced in (("dispatched.json", None), ("forced.json", "table")):
            files[name] = os.path.join(self.tmp, name)
            env = {k: v for k, v in os.environ.items() if k != "KVBENCH_CRC32C"}
            env.update({"KVBENCH_CRC32C": forced} if forced else {})
            subprocess.run([ARGS.micro, "--benchmark_filter=^crc32c/(extend|table)/256$",
                            "--block_sizes=256", "--benchmark_min_time=0.01",
                            "--benchmark_repetitions=2", f"--benchmark_out={files[name]}",
                            "--benchmark_out_format=json"],
                           check=True, capture_output=True, timeout=300, env=env)
        p = kvb("compare", files["dispatched.json"], files["forced.json"])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("crc32c: dispatched in dispatched.json, forced table in forced.json",
                      p.stderr)
        self.assertIn("--allow-different crc32c", p.stderr)
        ok = kvb("compare", files["dispatched.json"], files["forced.json"],
                 "--allow-different", "crc32c")
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertIn("accepted with --allow-different: crc32c: dispatched", ok.stdout)
        # The store's series: a forced run is its own; a dispatched one keeps the key it had.
        points = [fingerprint.extract(results.load(f)) for f in files.values()]
        self.assertNotIn("crc32c", points[0].key)
        self.assertEqual(points[1].key["crc32c"], "forced table")
        self.assertNotEqual(points[0].fingerprint, points[1].fingerprint)

    def test_a_different_engine_is_the_axis(self) -> None:
        a = self.run_kvbench("memory.json", "--num=1000", "--repeats=4")
        b = os.path.join(self.tmp, "null.json")
        subprocess.run([ARGS.kvbench, "--engine=null", f"--db={self.tmp}/db-null",
                        "--report_interval_seconds=0", f"--json={b}", "--num=1000",
                        "--repeats=4", "--benchmarks=fillseq,readrandom"],
                       check=True, capture_output=True, timeout=300)
        p = kvb("compare", a, b)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("not comparable", p.stdout + p.stderr)

    def test_store_selectors_name_the_axis(self) -> None:
        # Two configurations in one store: the field the selectors name is the axis (it was
        # refused, suggesting a selector that could not help); another difference is not.
        files = [self.run_kvbench(f"v{v}-k{k}-{i}.json", "--num=500", f"--value_size={v}",
                                  f"--key_size={k}")
                 for v, k in ((100, 16), (200, 16), (200, 24)) for i in range(2)]
        st = os.path.join(self.tmp, "store.db")
        self.assertEqual(kvb("store", "add", "--store", st, *files).returncode, 0)
        p = kvb("compare", "--store", st, "--base", "workload.value_size=100",
                "--other", "workload.value_size=200", "workload.key_size=16")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(p.stdout.startswith("the axis of this comparison: value_size: 100 in "),
                        p.stdout[:200])
        p = kvb("compare", "--store", st, "--base", "workload.value_size=100",
                "--other", "workload.value_size=200")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("key_size: 16 and 24 pooled in one side, workload.value_size=200",
                      p.stderr)

    def test_trend_gate_on_a_short_history_is_undecided(self) -> None:
        files = [self.run_kvbench(f"t{i}.json", "--num=500") for i in range(2)]
        st = os.path.join(self.tmp, "trend.db")
        self.assertEqual(kvb("store", "add", "--store", st, *files).returncode, 0)
        p = kvb("trend", "--store", st, "--fail-on-change")
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)  # undecided: docs/cli.md
        self.assertIn("too short to test, undecided", p.stdout)
        self.assertNotIn("no change found", p.stdout)
        self.assertEqual(kvb("trend", "--store", st).returncode, 0)  # no gate: done
        # The history page says the same of each series, not "0 change point(s)".
        html = os.path.join(self.tmp, "history.html")
        p = kvb("history", "--store", st, "--html", html)
        if p.returncode == 2 and "python3-matplotlib" in p.stderr:
            return
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn("too short to test for change points (fewer than 6 points): undecided",
                      page)
        self.assertNotIn("0 change point(s)", page)

    def test_the_gate_does_not_count_the_control(self) -> None:
        from kvbtools.core import comparison, metrics as metrics_mod
        m = metrics_mod.Metric("ops_per_sec", "ops/s", "higher")
        def cell(side: str, word: str) -> comparison.Cell:
            better = {"slower": False, "faster": True}.get(word)
            v = stats.Verdict(1.0, better, word, None)
            return comparison.Cell(m, "memory fillseq", side, [1.0], [1.0], v)
        c = comparison.Comparison([], {}, {}, [cell("control", "slower"), cell("b", "no change")],
                                  stats.Judgement(0.05, 0.05))
        self.assertEqual(comparison.gate(c, True, ignore=("control",)), 0)
        self.assertEqual(comparison.gate(c, True), 3)
        self.assertEqual(comparison.gate(c, False), 0)
        c.cells.append(cell("b", stats.UNDECIDED))
        self.assertEqual(comparison.gate(c, True, ignore=("control",)), 4)
        c.cells.append(cell("b", "slower"))
        self.assertEqual(comparison.gate(c, True, ignore=("control",)), 3)

    def test_report_rows_say_their_file_and_repeat(self) -> None:
        # Six rows that all read "memory fillseq" said nothing of which run each was.
        a = self.run_kvbench("ra.json", "--num=500", "--repeats=3")
        b = self.run_kvbench("rb.json", "--num=500")
        p = kvb("report", a)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"(?m)^repeat\s+engine\s+benchmark")
        self.assertRegex(p.stdout, r"\n2/3\s+memory\s+fillseq\s")
        p = kvb("report", a, b)
        self.assertRegex(p.stdout, r"(?m)^file\s+repeat\s+engine")
        self.assertRegex(p.stdout, r"\nrb\.json\s+1/1\s+memory\s+readrandom\s")
        self.assertRegex(p.stdout, r"\nra\.json\s+3/3\s+memory\s+readrandom\s")

    def test_report_says_which_runs_were_noisy(self) -> None:
        # Issue 42: five runs at 72-84% foreign CPU, and the text said nothing (the page did).
        run = load_json(self.run_kvbench("n.json", "--num=500"))
        for name, noisy in (("noisy.json", True), ("quiet.json", False)):
            run["context"]["environment"].update(
                noisy=noisy, noisy_reason="other processes used 84.4% of the 2 CPUs" if noisy
                else "")
            write_json(os.path.join(self.tmp, name), run)
        p = kvb("report", *(os.path.join(self.tmp, f) for f in ("noisy.json", "quiet.json")))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("noisy: noisy.json: this run was noisy: other "
                                            "processes used 84.4% of the 2 CPUs. "), p.stdout)
        self.assertNotIn("quiet.json: this run was noisy", p.stdout)
        rows = [line for line in p.stdout.splitlines()
                if line.startswith(("noisy.json", "quiet.json"))]
        self.assertEqual(len(rows), 4, p.stdout)
        for line in rows:
            self.assertEqual(line.endswith("noisy run"), line.startswith("noisy.json"), line)

    def test_three_a_side_five_times_slower_is_undecided_not_no_change(self) -> None:
        template = load_json(real_kvbench(self.tmp, "--num=500", "--benchmarks=fillseq"))

        def side(name: str, seed: int, scale: float, n: int) -> list[str]:
            """n processes: n files of one repeat each."""
            rng = random.Random(seed)
            return [write_json(os.path.join(self.tmp, f"{name}{n}-{i}.json"),
                               kvbench_doc(template, rng, scale, 1)) for i in range(n)]
        p = kvb("compare", "--base", *side("b", 1, 1.0, 3), "--other", *side("s", 2, 0.2, 3),
                "--fail-on-regression")
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)  # undecided: docs/cli.md
        self.assertNotIn("no significant change", p.stdout)
        # Every metric the drop moved is undecided (those it did not move are constant in these
        # files: no noise, decided "no change").
        self.assertRegex(p.stdout, r"memory fillseq\s+1\.00\s+0\.20 undecided \(p=0\.100\)")
        self.assertEqual(p.stdout.count("4.96 undecided (p=0.100)"), 3, p.stdout)
        self.assertNotRegex(p.stdout, r"(0\.20|4\.96) no change")
        self.assertIn("note: undecided: n=3+3 processes cannot reach p<0.05: 4 processes a side "
                      "needed, each a separate run (a file)", p.stdout)
        # Four a side decide it: slower, and the gate exits 3.
        p = kvb("compare", "--base", *side("b", 1, 1.0, 4), "--other", *side("s", 2, 0.2, 4),
                "--fail-on-regression")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"memory fillseq\s+1\.00\s+0\.20 slower \(p=0\.029\)")


def gbench_rows(rng: random.Random, ratios: list[float], reps: int) -> dict[str, Any]:
    """Google Benchmark JSON of len(ratios) benchmarks, bench/i at 1 GB/s times ratios[i],
    `reps` repetitions each, 2% noise."""
    rows = []
    for i, ratio in enumerate(ratios):
        for r in range(reps):
            bps = 1e9 * ratio * math.exp(rng.gauss(0, 0.02))
            rows.append({"name": f"bench/{i}", "run_name": f"bench/{i}", "run_type": "iteration",
                         "repetitions": reps, "repetition_index": r, "threads": 1,
                         "iterations": 1000, "real_time": 4096 / bps * 1e9,
                         "cpu_time": 4096 / bps * 1e9, "time_unit": "ns",
                         "bytes_per_second": bps})
    return {"context": {"kvbench_preset": "x", "input": "seed 0"}, "benchmarks": rows}


class UnitOfVerdictTest(kvbtest.TempDirTest):
    """Issue 36's constructed files: repetitions of one process are one sample of it, and a
    comparison's rows are one family of tests (core/levels.py, docs/compare.md)."""
    TMP_PREFIX = "kvb-unit-test."

    def files(self, name: str, seed: int, ratios: list[float], n: int, reps: int) -> list[str]:
        rng = random.Random(seed)
        return [write_json(os.path.join(self.tmp, f"{name}{i}.json"),
                           gbench_rows(rng, ratios, reps)) for i in range(n)]

    def test_one_process_a_side_is_undecided_unless_repetitions_are_independent(self) -> None:
        # (a) one process a side, 5 repetitions, B 1.5x A in every one.
        a = self.files("a", 1, [1.0], 1, 5)
        b = self.files("b", 2, [1.5], 1, 5)
        p = kvb("compare", *a, *b, "--fail-on-regression")
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"bench/0\s+1\.00\s+1\.5\d undecided\n")
        self.assertIn("one process a side: its repetitions share one placement and one machine "
                      "state; run more processes (kvb matrix/versions interleave them) or pass "
                      "--repetitions-independent", p.stdout)
        p = kvb("compare", *a, *b, "--fail-on-regression", "--repetitions-independent")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"bench/0\s+1\.00\s+1\.5\d faster \(p=0\.008\)")
        self.assertIn("unit: 5 repetitions a side, counted as independent "
                      "(--repetitions-independent)", p.stdout)

    def test_one_separated_row_of_twenty_is_not_a_change(self) -> None:
        # (b) five single-repetition files a side, 20 benchmarks, one 1.3x apart (p=0.008, the
        # least 5+5 can give), nineteen equal.
        ratios = [1.3] + [1.0] * 19
        p = kvb("compare", "--base", *self.files("a", 3, [1.0] * 20, 5, 1),
                "--other", *self.files("b", 4, ratios, 5, 1), "--json",
                os.path.join(self.tmp, "c.json"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"bench/0\s+1\.00\s+1\.[23]\d undecided \(p=0\.008, adj\. "
                                   r"0\.159\)")
        self.assertNotRegex(p.stdout, r"\d (faster|slower) \(")
        self.assertIn("is 0.159 adjusted over the 20 tests of this comparison "
                      "(Benjamini-Hochberg)", p.stdout)
        self.assertIn("unit: 5 processes a side", p.stdout)
        row = next(r for r in load_json(os.path.join(self.tmp, "c.json"))["rows"]
                   if r["benchmark"] == "bench/0")
        self.assertAlmostEqual(row["p"], 2 / 252)
        self.assertAlmostEqual(row["p_adjusted"], 20 * 2 / 252)
        self.assertEqual(row["rested_on"], "5 processes a side")

    def test_twenty_rows_that_all_doubled_are_all_faster(self) -> None:
        # (c) the same with all 20 rows 2x.
        p = kvb("compare", "--base", *self.files("a", 5, [1.0] * 20, 5, 1),
                "--other", *self.files("b", 6, [2.0] * 20, 5, 1))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(len(re.findall(r"bench/\d+\s+1\.00\s+\d\.\d\d faster", p.stdout)), 20,
                         p.stdout)


def micro_file(path: str, rates: list[float]) -> str:
    """A kvbench_micro file (one process) whose benchmark bench/0 ran at these GB/s, one
    repetition each."""
    rows = [{"name": "bench/0", "run_name": "bench/0", "run_type": "iteration", "repetitions":
             len(rates), "repetition_index": r, "threads": 1, "iterations": 1000,
             "real_time": 4096 / (g * 1e9) * 1e9, "cpu_time": 4096 / (g * 1e9) * 1e9,
             "time_unit": "ns", "bytes_per_second": g * 1e9} for r, g in enumerate(rates)]
    return write_json(path, {"context": {"kvbench_preset": "x", "input": "seed 0"},
                             "benchmarks": rows})


class RatioIsWhatItsLabelSaysTest(kvbtest.TempDirTest):
    """Issue 42 item 3: the ratio column is the estimate the verdict tested, and the line over it,
    the page's column, --json and docs/compare.md name it; a note about a median of 0 names the
    side that is 0, and only when it is."""
    TMP_PREFIX = "kvb-ratio-test."

    # Five processes a side (three repetitions each) whose pooled medians and Hodges-Lehmann
    # estimate differ (the base has one fast process).
    BASE = [[1.0, 1.0, 1.0], [1.1, 1.1, 1.1], [1.2, 1.2, 1.2], [1.3, 1.3, 1.3], [3.0, 3.0, 3.0]]
    OTHER = [[0.98, 0.98, 0.98], [1.05, 1.05, 1.05], [1.5, 1.5, 1.5], [1.6, 1.6, 1.6],
             [1.7, 1.7, 1.7]]

    def test_five_a_side_prints_the_estimate_and_names_it(self) -> None:
        base = [micro_file(os.path.join(self.tmp, f"a{i}.json"), v)
                for i, v in enumerate(self.BASE)]
        other = [micro_file(os.path.join(self.tmp, f"b{i}.json"), v)
                 for i, v in enumerate(self.OTHER)]
        out = os.path.join(self.tmp, "c.json")
        p = kvb("compare", "--base", *base, "--other", *other, "--json", out)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        hl = math.exp(statistics.median(math.log(o[0]) - math.log(b[0])
                                        for o in self.OTHER for b in self.BASE))
        quotient = 1.5 / 1.2   # the pooled medians of 15 values a side
        self.assertGreater(abs(round(hl, 2) - round(quotient, 2)), 0.05)  # they differ
        m = re.search(r"bench/0\s+([\d.]+)\s+([\d.]+)\n", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual((m.group(1), m.group(2)), ("1.200", "1.500"))  # the medians printed
        self.assertRegex(p.stdout, rf"bench/0\s+1\.00\s+{round(hl, 2):.2f} ")
        self.assertIn("values relative to a0.json+4 (ratio: the Hodges-Lehmann estimate over the "
                      "units, not the medians' quotient)", p.stdout)
        row = load_json(out)["rows"][0]
        self.assertAlmostEqual(row["ratio"], hl)
        self.assertEqual(row["estimator"], "Hodges-Lehmann")
        with open(os.path.join(ROOT, "docs", "compare.md"), encoding="utf-8") as f:
            docs = " ".join(f.read().split())
        self.assertIn("**The ratio** is the estimate its verdict tested", docs)
        self.assertIn("the **Hodges-Lehmann** estimate", docs)
        self.assertIn("not the quotient of the medians printed above it", docs)

    def comparison(self, base: list[list[float]], other: list[list[float]]) -> str:
        """kvb compare's text of one row, cpu_sys of memory fillseq, the sides' processes given
        with their repeats."""
        from kvbtools.core import comparison, levels, metrics as metrics_mod, samples
        m = metrics_mod.Metric("cost.cpu_sys_us_per_op", "us/op", "lower")
        sides = []
        for label, procs in (("gcc", base), ("clang", other)):
            s = samples.Side(label, kind=results.KVBENCH, metrics={m.key: m})
            for i, values in enumerate(procs):
                s.at = levels.Where("", f"p{i}")
                s.paths.append(f"{label}{i}.json")
                for v in values:
                    s.add("memory fillseq", m.key, v)
            sides.append(s)
        return comparison.format_comparison(comparison.build(sides, stats.Judgement(0.05, 0.05),
                                                             [m.key]))

    def test_a_note_of_a_median_of_0_names_the_side_that_is_0(self) -> None:
        # The base's median 0.001, one of its processes 0 (the note said "the base's median is 0").
        text = self.comparison([[0.011865, 0.0, 0.01955], [0.0, 0.0, 0.002065]],
                               [[0.0, 0.0, 0.0], [0.0, 0.0, 0.01254]])
        self.assertRegex(text, r"memory fillseq\s+0\.001\s+0\.000")
        self.assertNotIn("median is 0", text)
        # The other side's median 0: no note about a 0 either (its ratio is 0.00).
        text = self.comparison([[0.01, 0.02], [0.03, 0.01]], [[0.0, 0.0], [0.0, 0.0]])
        self.assertNotIn("median is 0", text)
        # The base's median 0: said, naming it and the row.
        text = self.comparison([[0.0, 0.0, 0.01], [0.0, 0.0, 0.0]],
                               [[0.01, 0.02, 0.0], [0.03, 0.02, 0.01]])
        self.assertRegex(text, r"memory fillseq\s+0\.000\s+0\.0(1|2)\d?\s")
        self.assertIn("note: undecided: gcc's median is 0: no ratio to it; p=", text)
        self.assertIn("(cost.cpu_sys_us_per_op: memory fillseq)", text)

    def test_sys_cpu_near_0_is_not_turned_around(self) -> None:
        # Issue 42: 0.010 -> 0.005 printed beside 1.61. Two processes a side; on logs their
        # ratio was the ratio of geometric means (1.57); as differences, that of the medians.
        text = self.comparison([[0.0005], [0.0195]], [[0.004], [0.006]])
        self.assertRegex(text, r"memory fillseq\s+0\.010\s+0\.005\n")
        self.assertRegex(text, r"memory fillseq\s+1\.00\s+0\.50 undecided")


class CpuNotesTest(kvbtest.TempDirTest):
    """Sides pinned to different CPUs, or on CPUs whose speed differed by kvbench's own audit,
    are named at the top of a comparison (issue 36 item 5)."""
    TMP_PREFIX = "kvb-cpu-test."

    def doc(self, template: dict[str, Any], name: str, cpu: str, ns: float) -> str:
        d = json.loads(json.dumps(template))
        d["context"]["workload"]["cpu_affinity"] = cpu
        for c in d["context"]["environment"]["cpu_speed"]["cpus"]:
            c["start_ns_per_loop"] = c["end_ns_per_loop"] = ns
        return write_json(os.path.join(self.tmp, name), d)

    def test_different_cpus_and_speeds_are_named(self) -> None:
        template = load_json(real_kvbench(self.tmp, "--num=500", "--benchmarks=fillseq"))
        self.assertIn("cpu_speed", template["context"]["environment"])
        a = self.doc(template, "a.json", "0", 1.7)
        same = self.doc(template, "same.json", "0", 1.72)
        other_cpu = self.doc(template, "b.json", "1", 1.72)
        slow = self.doc(template, "slow.json", "0", 2.6)
        p = kvb("compare", a, same)
        self.assertNotIn("WARNING: the sides", p.stdout)
        p = kvb("compare", a, other_cpu)
        self.assertIn("WARNING: the sides ran on different CPUs (a.json 0; b.json 1)", p.stdout)
        p = kvb("compare", a, slow)
        self.assertIn("WARNING: the sides' CPUs ran at different speeds by kvbench's reference "
                      "loop (ns per loop, median of each side's runs: a.json 1.7; slow.json 2.6)",
                      p.stdout)


class MatrixVersionsArgsTest(unittest.TestCase):
    def test_unknown_preset_lists_valid_ones(self) -> None:
        p = kvb("matrix", "--presets", f"{HOST}-gcc-native,no-such-preset", "--micro")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown preset no-such-preset", p.stderr)
        self.assertIn(f"{HOST}-clang-portable", p.stderr)

    def test_preset_of_another_architecture_is_skipped(self) -> None:
        p = kvb("matrix", "--presets", f"{OTHER}-gcc-native,{HOST}-gcc-native", "--micro",
                "--dry-run", "--repeats", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"skipping preset {OTHER}-gcc-native: its architecture", p.stderr)
        self.assertNotIn(f"{OTHER}-gcc-native", p.stdout)
        p = kvb("matrix", "--presets", f"{OTHER}-gcc-native", "--micro")
        self.assertEqual(p.returncode, 2)
        self.assertIn("none of the presets can be built", p.stderr)

    def test_preset_whose_compiler_is_missing_is_skipped(self) -> None:
        with tempfile.TemporaryDirectory() as empty:
            env = dict(os.environ, PATH=empty)
            p = kvb("matrix", "--presets", f"{HOST}-clang-native", "--micro", env=env,
                    python=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"skipping preset {HOST}-clang-native: compiler clang, clang++ not found",
                      p.stderr)

    def test_runs_interleave_with_a_control_series(self) -> None:
        p = kvb("matrix", "--presets", f"{HOST}-gcc-native,{HOST}-gcc-portable", "--micro",
                "--repeats", "2", "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        order = p.stdout.split("the order rotates by one series a round), 4 links:\n")[1]
        order = order.split("\nthen ")[0].split("\n")
        g, q = f"{HOST}-gcc-native", f"{HOST}-gcc-portable"
        c = "control"
        # 4 links, at least 2 rounds on each: 8 rounds, every series once a round, the order
        # rotating, round r on seed (r - 1) % 4.
        self.assertEqual(len(order), 8 * 3)
        self.assertEqual([x.strip() for x in order[:9]],
                         [f"1 seed 0 {g}", f"1 seed 0 {q}", f"1 seed 0 {c}",
                          f"2 seed 1 {q}", f"2 seed 1 {c}", f"2 seed 1 {g}",
                          f"3 seed 2 {c}", f"3 seed 2 {g}", f"3 seed 2 {q}"])
        self.assertEqual(order[-1].strip(), f"8 seed 3 {g}")
        # --micro: every preset builds lz4, zstd and xxhash from source (study_test has more).
        self.assertRegex(p.stdout, rf"-B {re.escape(ROOT)}/build/kvb/{g}-lz4-[\d.]+-zstd-[\d.]+-"
                                   r"xxhash-[\d.]+ -DKVBENCH_BUILD_TESTS=OFF")
        self.assertIn("--target kvbench_micro", p.stdout)

    def test_from_source_needs_a_tree(self) -> None:
        p = kvb("matrix", "--presets", f"{HOST}-gcc-native", "--from-source", "lz4", "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--source lz4=DIR", p.stderr)
        p = kvb("matrix", "--presets", f"{HOST}-gcc-native", "--from-source", "snappy")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown dependency 'snappy'", p.stderr)

    def test_unknown_dep_and_wrong_source_tree(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            p = kvb("versions", "--dep", "leveldb", "--source", tmp, tmp)
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown dependency 'leveldb'", p.stderr)
            self.assertIn("rocksdb", p.stderr)
            with open(os.path.join(tmp, "README"), "w") as f:
                f.write("not lz4\n")
            p = kvb("versions", "--dep", "lz4", "--source", tmp, "--dry-run")
            self.assertEqual(p.returncode, 2)
            self.assertIn(f"{tmp} is not a lz4 source tree: no lib/lz4.h", p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            # An xxhash tree given as lz4 is refused too.
            with open(os.path.join(tmp, "xxhash.h"), "w") as f:
                f.write("#define XXH_VERSION_MAJOR 0\n#define XXH_VERSION_MINOR 8\n"
                        "#define XXH_VERSION_RELEASE 3\n")
            open(os.path.join(tmp, "xxhash.c"), "w").close()
            self.assertEqual(kvb("versions", "--dep", "lz4", "--source", tmp,
                                 "--dry-run").returncode, 2)
            self.assertEqual(sources.detect("xxhash", tmp), "0.8.3")

    def test_versions_are_labelled_by_the_headers(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            trees = []
            for v in ("1.9.4", "1.10.0"):
                a, b, c = v.split(".")
                trees.append(lz4_tree(os.path.join(tmp, v),
                                      f"#define LZ4_VERSION_MAJOR    {a}    /* for breaking "
                                      f"interface changes  */\n#define LZ4_VERSION_MINOR   {b}\n"
                                      f"#define LZ4_VERSION_RELEASE  {c}\n"))
            p = kvb("versions", "--dep", "lz4", "--source", *trees, "--repeats", "3",
                    "--preset", f"{HOST}-gcc-native", "--dry-run")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"lz4 1.9.4: cmake --preset {HOST}-gcc-native -B "
                          f"{ROOT}/build/kvb/{HOST}-gcc-native-lz4-1.9.4", p.stdout)
            self.assertIn(f"-DKVBENCH_LZ4_SOURCE_DIR={trees[1]}", p.stdout)
            self.assertIn("3 control", p.stdout)

    def test_trees_of_one_version_are_told_apart_by_commit_or_name(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            header = ("#define LZ4_VERSION_MAJOR 1\n#define LZ4_VERSION_MINOR 9\n"
                      "#define LZ4_VERSION_RELEASE 3\n")
            trees = [lz4_tree(os.path.join(tmp, name), header) for name in ("lz4-a", "lz4-b")]
            args = ["versions", "--dep", "lz4", "--preset", f"{HOST}-gcc-native", "--dry-run"]
            p = kvb(*args, "--source", *trees)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("  lz4 1.9.3 (lz4-a): cmake", p.stdout)
            self.assertIn(f"-B {ROOT}/build/kvb/{HOST}-gcc-native-lz4-1.9.3-lz4-b ", p.stdout)
            env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                       GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
                       GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
            git = lambda *a: subprocess.run(["git", "-C", trees[0], *a], check=True, env=env,
                                            capture_output=True, text=True).stdout.strip()
            git("init", "-q")
            git("add", "-A")
            git("commit", "-q", "-m", "1.9.3")
            git("tag", "v1.9.3")
            with open(os.path.join(trees[0], "NEWS"), "w") as f:
                f.write("x\n")
            git("add", "-A")
            git("commit", "-q", "-m", "after")
            short = git("rev-parse", "--short", "HEAD")
            p = kvb(*args, "--source", *trees)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn(f"  lz4 1.9.3 ({short} v1.9.3-1-g{short}): cmake", p.stdout)
            self.assertIn("  lz4 1.9.3 (lz4-b): cmake", p.stdout)
            p = kvb(*args, "--source", trees[1], trees[1] + "/")
            self.assertEqual(p.returncode, 2)
            self.assertIn("a tree given twice", p.stderr)


    def test_a_build_that_used_another_library_version_is_flagged(self) -> None:
        from kvbtools.core import comparability
        from kvbtools.core.samples import Side
        micro = Side("lz4 1.10.0", contexts=[{"lz4_library_version": "1.9.4"}])
        kv = Side("rocksdb 9.10.0", contexts=[{"libraries": [
            {"name": "rocksdb", "version": ""}], "engine": {"name": "rocksdb",
                                                           "version": "9.10.0"}}])
        expect = {"lz4 1.10.0": [["lz4", "1.10.0"]], "rocksdb 9.10.0": [["rocksdb", "9.10.0"]]}
        self.assertEqual(comparability.check_library_versions([micro, kv], expect),
                         ["lz4 1.10.0: the runs report lz4 1.9.4, not 1.10.0: the build did not "
                          "use that tree"])


def portable_micro() -> str | None:
    """A kvbench_micro of this host's portable gcc preset, from cmake --preset or kvb matrix."""
    arch = {"x86_64": "x86", "aarch64": "arm"}.get(host.host_arch(), "")
    # kvb matrix --micro's build of it names the libraries it built from source too.
    for d in (f"build/{arch}-gcc-portable", f"build/kvb/{arch}-gcc-portable",
              *sorted(glob.glob(os.path.join(host.ROOT, f"build/kvb/{arch}-gcc-portable-*")))):
        path = os.path.join(host.ROOT, d, "bench", "kvbench_micro")
        if os.access(path, os.X_OK):
            return path
    return None


class InstructionsTest(unittest.TestCase):
    """--instructions: callgrind's counts per measured loop, and the AVX-512 refusal."""

    def test_dumps_split_per_benchmark_and_difference_cancels_fixed_cost(self) -> None:
        # Two benchmarks: iteration counts grow within one, drop at the next; cost 100/iteration
        # plus a fixed 900 per run of the loop.
        dumps = [(1, 1000), (10, 1900), (100, 10900), (1, 600), (50, 5500)]
        got = callgrind_out.per_iteration(dumps, [("a/x/4096", 100), ("b/y/256", 50)])
        self.assertEqual(got, {"a/x/4096": 100.0, "b/y/256": 100.0})
        self.assertEqual(callgrind_out.block_bytes("a/x/4096"), 4096)
        self.assertEqual(callgrind_out.block_bytes("a/x/4096/cold"), 4096)
        with self.assertRaisesRegex(RunError, "do not line up"):
            callgrind_out.per_iteration(dumps, [("a/x/4096", 100)])
        with self.assertRaisesRegex(RunError, "do not line up"):
            callgrind_out.per_iteration(dumps, [("a/x/4096", 99), ("b/y/256", 50)])

    def test_native_presets_are_refused_on_an_avx512_host(self) -> None:
        native = ("x86-gcc-native", {"KVBENCH_ARCH_FLAGS": "-march=native"})
        portable = ("x86-gcc-portable", {"KVBENCH_ARCH_FLAGS": "-march=x86-64"})
        with self.assertRaisesRegex(UsageError, "x86-gcc-portable, x86-clang-portable"
                                    if host.host_arch() == "x86_64" else "portable"):
            callgrind.check_presets([portable, native], avx512=True)
        callgrind.check_presets([portable], avx512=True)
        callgrind.check_presets([native], avx512=False)

    def test_kvb_matrix_native_instructions_exits_2(self) -> None:
        if host.host_arch() != "x86_64" or not callgrind.host_has_avx512():
            self.skipTest("the refusal applies to AVX-512 hosts; this one has no avx512f")
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind is not installed (scripts/install-deps.sh)")
        p = kvb("matrix", "--presets", "x86-gcc-portable,x86-gcc-native", "--micro",
                "--instructions", "--filter", "xxh3", "--dry-run")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("preset x86-gcc-native: valgrind 3.19 cannot execute AVX-512", p.stderr)
        self.assertIn("x86-gcc-portable, x86-clang-portable", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        # KV workloads are counted too (kv_instructions_test), with a small --num by default.
        p = kvb("matrix", "--presets", "x86-gcc-portable", "--engines", "null",
                "--instructions", "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 seed 0 x86-gcc-portable null", p.stdout)
        self.assertIn("cpu: not pinned (--instructions", p.stdout)

    def test_a_native_binary_that_dies_with_sigill_is_refused(self) -> None:
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind is not installed (scripts/install-deps.sh)")
        if "native" not in ARGS.micro or not callgrind.host_has_avx512():
            self.skipTest("needs a -march=native kvbench_micro on an AVX-512 host")
        tmp = tempfile.mkdtemp(prefix="kvb-instr-test.")
        try:
            out = os.path.join(tmp, "m.json")
            with self.assertRaisesRegex(UsageError, "SIGILL.*portable preset"):
                callgrind.micro_instructions(
                    [ARGS.micro, "--benchmark_filter=xxh3_64/inline/256$",
                     "--benchmark_min_time=0.01", f"--benchmark_out={out}",
                     "--benchmark_out_format=json"], out, "native build")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_portable_counts_are_deterministic(self) -> None:
        micro = portable_micro()
        if micro is None:
            self.skipTest("no portable kvbench_micro (cmake --preset x86-gcc-portable and build "
                          "kvbench_micro, or kvb matrix --presets ...-portable, makes one)")
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind is not installed (scripts/install-deps.sh)")
        tmp = tempfile.mkdtemp(prefix="kvb-instr-test.")
        try:
            docs = []
            for i, min_time in enumerate(("0.01", "0.02")):
                out = os.path.join(tmp, f"m{i}.json")
                callgrind.micro_instructions(
                    [micro, "--benchmark_filter=^(crc32c/table|xxh3_64/inline)/256$",
                     f"--benchmark_min_time={min_time}", f"--benchmark_out={out}",
                     "--benchmark_out_format=json"], out, "portable")
                docs.append({b["name"]: b for b in load_json(out)["benchmarks"]})
            self.assertEqual(set(docs[0]), {"crc32c/table/256", "xxh3_64/inline/256"})
            for name, b in docs[0].items():
                self.assertGreater(b["instructions_per_byte"], 0.01, name)
                self.assertAlmostEqual(b["instructions_per_byte"] * 256,
                                       b["instructions_per_iteration"], delta=0.01)
                # Other iteration counts, the same count per iteration.
                self.assertEqual(b["instructions_per_iteration"],
                                 docs[1][name]["instructions_per_iteration"], name)
            # The table loop of crc32c costs more per byte than XXH3's vector code.
            self.assertGreater(docs[0]["crc32c/table/256"]["instructions_per_byte"],
                               docs[0]["xxh3_64/inline/256"]["instructions_per_byte"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    kvbtest.main("kvbench", "micro")
