#!/usr/bin/env python3
"""Tests of the Python tools in scripts/: kvb report and the db_bench output parser."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import statistics
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
sys.path.insert(0, SCRIPTS)

import compare_dbbench  # noqa: E402
import dbbench_instructions  # noqa: E402
from kvbtools import report, results, schema  # noqa: E402

KVBENCH = ""


def run_kvbench(tmp: str, *args: str) -> str:
    out = os.path.join(tmp, "run.json")
    subprocess.run([KVBENCH, "--engine=memory", f"--db={tmp}/db", "--report_interval_seconds=0",
                    f"--json={out}", *args], check=True, capture_output=True)
    return out


class ReportTest(unittest.TestCase):
    def test_table_has_a_row_per_role_with_found_and_pacing_notes(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = run_kvbench(tmp, "--num=2000", "--benchmarks=fillseq,readrandom,readwhilewriting",
                               "--benchmark_write_rate_limit=100000")
            rows = results.rows(results.load(path))
            self.assertEqual([r.label for r in rows],
                             ["fillseq", "readrandom", "readwhilewriting[reader]",
                              "readwhilewriting[writer]"])
            text = report.table(rows)
            self.assertIn("2000/2000 found", text)
            self.assertIn("reference engine", text)
            self.assertRegex(text, r"readwhilewriting\[writer\].*(sustained|NOT sustained)")
            p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "kvb"), "report", path],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("ops/s", p.stdout)

    def test_rejects_files_that_are_not_kvbench_runs(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                json.dump({"benchmarks": []}, f)
            with self.assertRaises(results.ResultError):
                results.load(bad)
            p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "kvb"), "report", bad,
                                os.path.join(tmp, "missing.json")], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not a kvbench run document", p.stderr)

    def test_undecodable_or_unreadable_files_are_errors_not_tracebacks(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            good = run_kvbench(tmp, "--num=10", "--benchmarks=fillseq")
            with open(good, "rb") as f:
                text = f.read()
            bad = os.path.join(tmp, "latin1.json")
            with open(bad, "wb") as f:
                f.write(text.replace(b'"fillseq"', b'"fillseq\xff"', 1))
            for command in ("validate", "report"):
                for path, message in ((bad, "not UTF-8"), (tmp, "cannot read")):
                    with self.subTest(command=command, path=path):
                        p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "kvb"), command,
                                            path], capture_output=True, text=True)
                        self.assertEqual(p.returncode, 2, p.stderr)
                        self.assertIn(f"kvb: error: {path}: {message}", p.stderr)
                        self.assertNotIn("Traceback", p.stderr)


class SchemaTest(unittest.TestCase):
    """The schema checker against kvbench's real output (docs/json.md)."""

    def test_real_output_of_every_kind_conforms(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = run_kvbench(tmp, "--num=3000", "--report_interval_seconds=0.05",
                               "--benchmarks=fillrandom,settle,readrandom[X2],fwdrangewhilewriting",
                               "--benchmark_write_rate_limit=100000")
            doc = results.load(path)
            self.assertEqual(schema.validate(doc), [])
            p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "kvb"), "validate", path],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)

    def test_incomplete_run_conforms_and_says_why(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "f.json")
            p = subprocess.run([KVBENCH, "--engine=memory", f"--db={tmp}/none", "--use_existing_db",
                                f"--json={out}"], capture_output=True)
            self.assertEqual(p.returncode, 1)
            doc = results.load(out)
            self.assertFalse(doc["complete"])
            self.assertEqual(schema.validate(doc), [])

    def test_departures_are_reported(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            doc = results.load(run_kvbench(tmp, "--num=100", "--benchmarks=fillseq"))
        del doc["context"]["build"]["preset"]
        doc["results"][0]["roles"][0]["ops_per_sec"] = "fast"
        doc["results"][0]["latency"] = 5
        errors = schema.validate(doc)
        self.assertIn("$.context.build.preset: missing", errors)
        self.assertTrue(any("ops_per_sec: expected" in e for e in errors))
        self.assertIn("$.results[0].latency: a number whose name gives no unit", errors)


class DbBenchParserTest(unittest.TestCase):
    def test_parses_db_bench_result_lines(self) -> None:
        out = ("Keys:       16 bytes each\n"
               "fillseq      :       5.639 micros/op 177331 ops/sec 5.639 seconds 1000000 "
               "operations;   19.6 MB/s\n"
               "seekrandom   :      15.593 micros/op 64131 ops/sec 4.678 seconds 300000 "
               "operations;   70.9 MB/s (300000 of 300000 found)\n")
        self.assertEqual(compare_dbbench.parse_db_bench(out),
                         {"fillseq": 177331.0, "seekrandom": 64131.0})

    def test_kvbench_and_db_bench_get_the_same_sizes(self) -> None:
        d = compare_dbbench.db_bench_args("db_bench", "/d", 1000, 1 << 20, ["fillseq", "fwdrange"])
        k = compare_dbbench.kvbench_args("kvbench", "/k", 1000, 1 << 20, ["fillseq", "fwdrange"], "o")
        for flag in ("--num=1000", "--key_size=16", "--value_size=100", "--seek_nexts=10",
                     "--cache_size=1048576"):
            self.assertIn(flag, d)
            self.assertIn(flag, k)
        self.assertIn("--benchmarks=fillseq,flush,waitforcompaction,seekrandom", d)
        self.assertIn("--benchmarks=fillseq,settle,fwdrange", k)

    def test_summary_ratio_of_medians_and_paired_ratios(self) -> None:
        # Round 3 is slow for both tools (drift): the paired ratio cancels it, the medians do not.
        db = [100.0, 110.0, 50.0, 105.0, 95.0]
        kv = [97.0, 110.0, 49.0, 100.0, 98.0]
        row = compare_dbbench.summarize(db, kv)
        self.assertEqual(row["db_median"], 100.0)
        self.assertEqual(row["kv_median"], 98.0)
        self.assertAlmostEqual(row["ratio"], 0.98)
        self.assertAlmostEqual(row["paired_median"], 0.98)
        self.assertAlmostEqual(row["paired_min"], 100.0 / 105.0)
        self.assertAlmostEqual(row["paired_max"], 98.0 / 95.0)
        self.assertAlmostEqual(row["db_cv"], statistics.stdev(db) / statistics.mean(db))
        self.assertLessEqual(row["ci_low"], row["ratio"])
        self.assertGreaterEqual(row["ci_high"], row["ratio"])

    def test_verdict_needs_the_whole_interval_on_one_side(self) -> None:
        db = [100.0, 101.0, 99.0, 100.5, 99.5]
        same = compare_dbbench.summarize(db, [x * 1.00 for x in db])
        half = compare_dbbench.summarize(db, [x * 0.50 for x in db])
        noisy = compare_dbbench.summarize(db, [70.0, 130.0, 98.0, 110.0, 85.0])
        self.assertEqual(compare_dbbench.verdict(same, 0.97), "meets")
        self.assertEqual(compare_dbbench.verdict(half, 0.97), "below")
        self.assertEqual(compare_dbbench.verdict(noisy, 0.97), "unresolved")
        # Seeded: the same runs give the same interval.
        self.assertEqual(compare_dbbench.summarize(db, [70.0, 130.0, 98.0, 110.0, 85.0]), noisy)


class DbBenchInstructionsTest(unittest.TestCase):
    def flags(self, tool: str, benchmark: str) -> list[str]:
        return dbbench_instructions.tool_args(tool, tool, "/db", 1000000, 1 << 20, benchmark,
                                              30000, 7, "/o.json")

    def test_reads_run_on_the_existing_database_with_the_same_seed_and_counts(self) -> None:
        d, k = self.flags("db_bench", "fwdrange"), self.flags("kvbench", "fwdrange")
        for flag in ("--num=1000000", "--seed=7", "--reads=30000", "--writes=30000",
                     "--use_existing_db=true", "--seek_nexts=10", "--cache_size=1048576"):
            self.assertIn(flag, d)
            self.assertIn(flag, k)
        self.assertIn("--benchmarks=seekrandom", d)
        self.assertIn("--benchmarks=fwdrange", k)
        # Each flag given once: the sequence and use_existing_db defaults were replaced.
        for args in (d, k):
            names = [a.split("=", 1)[0] for a in args[1:]]
            self.assertEqual(len(names), len(set(names)), names)

    def test_fillseq_starts_empty_with_num_equal_to_ops(self) -> None:
        d, k = self.flags("db_bench", "fillseq"), self.flags("kvbench", "fillseq")
        self.assertIn("--num=30000", d)
        self.assertIn("--num=30000", k)
        self.assertIn("--use_existing_db=false", d)
        self.assertNotIn("--use_existing_db=true", k)

    def test_per_op_cost_is_the_difference_over_the_extra_ops(self) -> None:
        # 1,000,000 instructions of start-up plus 250 per op.
        self.assertEqual(dbbench_instructions.per_op(1000000 + 250 * 10000,
                                                     1000000 + 250 * 30000, 10000, 30000), 250.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--kvbench", required=True)
    args, rest = parser.parse_known_args()
    KVBENCH = args.kvbench
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
