#!/usr/bin/env python3
"""Tests of kvb as a whole and of its shared parts: report, validate, the one loader (every command
that reads result files, fed damaged documents), metrics described by the document, the
manifest, the interpreter kvb runs under, the top-level error handling, and kvb dbbench's
flag mapping and statistics. kvb runs as users run it: scripts/kvb, and python3 scripts/kvb."""
from __future__ import annotations

import argparse
import concurrent.futures
import copy
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import statistics
import struct
import sys
import tempfile
import time
import unittest
from typing import Any

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

from kvbtools.core import manifest  # noqa: E402
from kvbtools.commands import cli, command as kvb_command  # noqa: E402
from kvbtools.commands import dbbench_parity  # noqa: E402
from kvbtools.measure import dbbench_runs  # noqa: E402
from kvbtools.commands.parsers import bisect as bisect_parser, groups, trend  # noqa: E402
from kvbtools.core import changes, deps_json  # noqa: E402
from kvbtools.core import dbbench_args  # noqa: E402
from kvbtools.measure import plan, slurm  # noqa: E402
from kvbtools.measure.bisect import state as bisect_state  # noqa: E402
from kvbtools.core import metrics, results, schema  # noqa: E402
from kvbtools.measure import sources  # noqa: E402
from kvbtools.core import summary  # noqa: E402
from kvbtools.core.dbbench_args import db_bench_args, kvbench_args  # noqa: E402
from kvbtools.core.errors import UsageError  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS, write_json  # noqa: E402



def kvb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KVB, *args], capture_output=True, text=True, env=env, timeout=300)


def run_kvbench(tmp: str, *args: str) -> str:
    out = os.path.join(tmp, "run.json")
    subprocess.run([ARGS.kvbench, "--engine=memory", f"--db={tmp}/db", "--report_interval_seconds=0",
                    f"--json={out}", *args], check=True, capture_output=True)
    return out


class ReportTest(unittest.TestCase):
    def test_table_has_a_row_per_role_with_found_and_pacing_notes(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = run_kvbench(tmp, "--num=2000",
                               "--benchmarks=fillseq,readrandom,readwhilewriting",
                               "--benchmark_write_rate_limit=100000")
            rows = results.rows(results.load(path).doc)
            self.assertEqual([r.label for r in rows],
                             ["fillseq", "readrandom", "readwhilewriting[reader]",
                              "readwhilewriting[writer]"])
            text = summary.summary(rows)
            self.assertIn("2000/2000 found", text)
            self.assertIn("reference engine", text)
            self.assertRegex(text, r"readwhilewriting\[writer\].*(sustained|NOT sustained)")
            # The writer's cpu us/op is its own thread's (issue 38), and says so.
            self.assertRegex(text, r"readwhilewriting\[writer\].*cpu: own thread")
            p = kvb("report", path)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("ops/s", p.stdout)

    def test_rejects_files_that_are_not_kvbench_runs(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                json.dump({"benchmarks": []}, f)
            with self.assertRaises(UsageError):
                results.load(bad, [results.KVBENCH])
            other = os.path.join(tmp, "other.json")
            with open(other, "w") as f:
                json.dump({"schema": "kvb-compare", "rows": []}, f)
            p = kvb("report", other, os.path.join(tmp, "missing.json"))
            self.assertEqual(p.returncode, 2)
            self.assertEqual(p.stdout, "")
            # Both files' problems, in one message.
            self.assertIn(f"kvb: error: {other}: neither a kvbench run document", p.stderr)
            self.assertIn("missing.json: cannot read", p.stderr)

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
                        p = kvb(command, path)
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
            doc = results.load(path).doc
            self.assertEqual(schema.check_kvbench(doc, full=True), [])
            p = kvb("validate", path)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual(p.stdout, f"{path}: OK\n")

    def test_incomplete_run_conforms_and_says_why(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            run_kvbench(tmp, "--num=100", "--seed=1", "--benchmarks=fillseq")
            # A failure after a result (kvbench writes no document before one, docs/json.md):
            # values read back with another seed.
            out = os.path.join(tmp, "f.json")
            p = subprocess.run([ARGS.kvbench, "--engine=memory", f"--db={tmp}/db", "--num=100",
                                "--seed=2", "--verify", "--use_existing_db",
                                "--benchmarks=settle,readseq", f"--json={out}"],
                               capture_output=True)
            self.assertEqual(p.returncode, 1)
            doc = results.load(out).doc
            self.assertFalse(doc["complete"])
            self.assertIn("differs from what --seed=2", doc["error"])
            self.assertEqual(schema.check_kvbench(doc, full=True), [])

    def test_departures_are_reported(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            doc = results.load(run_kvbench(tmp, "--num=100", "--benchmarks=fillseq")).doc
        del doc["context"]["build"]["preset"]
        doc["results"][0]["roles"][0]["ops_per_sec"] = "fast"
        doc["results"][0]["latency"] = 5
        errors = schema.check_kvbench(doc, full=True)
        self.assertIn("$.context.build.preset: missing", errors)
        self.assertTrue(any("ops_per_sec: expected" in e for e in errors))
        self.assertIn("$.results[0].latency: a number whose name gives no unit", errors)


class DbBenchParityTest(unittest.TestCase):
    def test_parses_db_bench_result_lines(self) -> None:
        out = ("Keys:       16 bytes each\n"
               "fillseq      :       5.639 micros/op 177331 ops/sec 5.639 seconds 1000000 "
               "operations;   19.6 MB/s\n"
               "seekrandom   :      15.593 micros/op 64131 ops/sec 4.678 seconds 300000 "
               "operations;   70.9 MB/s (300000 of 300000 found)\n")
        self.assertEqual(dbbench_runs.parse_db_bench(out),
                         {"fillseq": 177331.0, "seekrandom": 64131.0})

    def test_kvbench_and_db_bench_get_the_same_sizes(self) -> None:
        d = db_bench_args("db_bench", "/d", 1000, 1 << 20, ["fillseq", "fwdrange"])
        k = kvbench_args("kvbench", "/k", 1000, 1 << 20, ["fillseq", "fwdrange"], "o")
        for flag in ("--num=1000", "--key_size=16", "--value_size=100", "--seek_nexts=10",
                     "--cache_size=1048576"):
            self.assertIn(flag, d)
            self.assertIn(flag, k)
        self.assertIn("--benchmarks=fillseq,flush,waitforcompaction,seekrandom", d)
        self.assertIn("--benchmarks=fillseq,settle,fwdrange", k)

    def test_cpus_pins_both_tools_alike(self) -> None:
        d = db_bench_args("db_bench", "/d", 1000, 1 << 20, ["fillseq"])
        k = kvbench_args("kvbench", "/k", 1000, 1 << 20, ["fillseq"], "o")
        self.assertEqual(dbbench_runs.pinned(d, "1"), ["taskset", "-c", "1"] + d)
        self.assertEqual(dbbench_runs.pinned(k, "1"), ["taskset", "-c", "1"] + k)
        self.assertEqual(dbbench_runs.pinned(k, None), k)

    def test_summary_ratio_of_medians_and_paired_ratios(self) -> None:
        # Round 3 is slow for both tools (drift): the paired ratio cancels it, the medians do not.
        db = [100.0, 110.0, 50.0, 105.0, 95.0]
        kv = [97.0, 110.0, 49.0, 100.0, 98.0]
        row = dbbench_runs.summarize(db, kv)
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
        same = dbbench_runs.summarize(db, [x * 1.00 for x in db])
        half = dbbench_runs.summarize(db, [x * 0.50 for x in db])
        noisy = dbbench_runs.summarize(db, [70.0, 130.0, 98.0, 110.0, 85.0])
        self.assertEqual(dbbench_parity.verdict(same, 0.97), "meets")
        self.assertEqual(dbbench_parity.verdict(half, 0.97), "below")
        self.assertEqual(dbbench_parity.verdict(noisy, 0.97), "unresolved")
        # Seeded: the same runs give the same interval.
        self.assertEqual(dbbench_runs.summarize(db, [70.0, 130.0, 98.0, 110.0, 85.0]), noisy)


class DbBenchInstructionsTest(unittest.TestCase):
    def flags(self, tool: str, benchmark: str) -> list[str]:
        return dbbench_runs.tool_args(tool, tool, "/db", 1000000, 1 << 20, benchmark,
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
        self.assertEqual(dbbench_runs.per_op(1000000 + 250 * 10000,
                                                     1000000 + 250 * 30000, 10000, 30000), 250.0)


def gbench(bps: Any = 2e9) -> dict[str, Any]:
    rows = [{"name": "crc32c/table/4096", "run_name": "crc32c/table/4096",
             "run_type": "iteration", "iterations": 10, "real_time": 2.0, "cpu_time": 2.0,
             "time_unit": "ns", "bytes_per_second": bps}]
    return {"context": {"kvbench_preset": "p"}, "benchmarks": rows}


class DamagedDocumentsTest(unittest.TestCase):
    """Every command that reads result files, fed damaged ones: exit 2, every problem named, no
    traceback."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.mkdtemp(prefix="kvb-damaged.")
        cls.good = run_kvbench(cls.tmp, "--num=300", "--benchmarks=fillseq,readrandom")
        with open(cls.good, encoding="utf-8") as f:
            cls.text = f.read()
        cls.doc = json.loads(cls.text)
        cls.gbench = write_json(os.path.join(cls.tmp, "micro.json"), gbench())

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def damaged(self, name: str, change: Any) -> str:
        doc = copy.deepcopy(self.doc)
        change(doc, doc["results"][1]["roles"][0])
        return write_json(os.path.join(self.tmp, name), doc)

    def raw(self, name: str, data: bytes) -> str:
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    NOT_RESULTS = ("truncated.json", "cut-in-string.json", "cut-in-number.json", "empty.json",
                   "latin1.json", "other.json", "list.json")

    def kvbench_cases(self) -> dict[str, str]:
        """File -> a word the message must carry."""
        def setter(key: str, value: Any) -> Any:
            return lambda doc, role: role.__setitem__(key, value)
        return {
            self.damaged("missing.json", lambda doc, role: role.pop("ops_per_sec")):
                "$.results[1].roles[0].ops_per_sec: missing",
            self.damaged("fast.json", setter("ops_per_sec", "fast")):
                "ops_per_sec: expected a number, got a string ('fast')",
            self.damaged("null.json", setter("ops_per_sec", None)):
                "ops_per_sec: expected a number, got null",
            self.damaged("minf.json", setter("ops_per_sec", float("-inf"))):
                "ops_per_sec: -Infinity is not a number",
            self.damaged("nan.json", lambda doc, role: role["latency_ns"].__setitem__(
                "p99", float("nan"))): "latency_ns.p99: NaN is not a number",
            self.damaged("type.json", lambda doc, role: doc.__setitem__("results", {})):
                "$.results: expected an array, got an object",
            self.damaged("role.json", lambda doc, role: doc["results"][0].__setitem__(
                "roles", [7])): "$.results[0].roles[0]: expected an object, got an integer",
            self.damaged("metric.json", lambda doc, role: doc.__setitem__("metrics", [
                {"path": "ops_per_sec", "unit": "ops/s", "better": "up"}])):
                "$.metrics[0].better: 'up' is not higher or lower",
            self.raw("truncated.json", self.text[:len(self.text) // 2].encode()):
                "the file ends early (truncated?)",
            self.raw("cut-in-string.json", self.text[:self.text.index('"fillseq"') + 4].encode()):
                "Unterminated string",
            # Cut after a number's dot ("12."): the decoder fails at the dot, before the end.
            self.raw("cut-in-number.json",
                     self.text[:re.search(r"\d\.\d", self.text).start() + 2].encode()):
                "the file ends early (truncated?)",
            self.raw("empty.json", b""): "empty file",
            self.raw("latin1.json", b'{"schema": "kvbench-run\xff"}'): "not UTF-8",
            write_json(os.path.join(self.tmp, "other.json"), {"name": "left-pad", "version": "1"}):
                "neither a kvbench run document",
            write_json(os.path.join(self.tmp, "v2.json"), {"schema": "kvbench-run",
                                                       "schema_version": 2}):
                "schema_version 2 is not supported",
            write_json(os.path.join(self.tmp, "list.json"), [1, 2]): "neither a kvbench",
            self.tmp: "cannot read: Is a directory",
        }

    def assert_refused(self, p: subprocess.CompletedProcess[str], path: str, words: str) -> None:
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"kvb: error: {path}: ", p.stderr)
        self.assertIn(words, p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_every_reading_command_refuses_damaged_kvbench_documents(self) -> None:
        runs = []
        for path, words in self.kvbench_cases().items():
            for args in (["report", path], ["report", "--metrics", path], ["validate", path],
                         ["compare", self.good, path], ["compare", path, self.good]):
                runs.append((args, path, words))
            if os.path.basename(path) in self.NOT_RESULTS or path == self.tmp:
                runs.append((["micro", "--compare", path], path, words))
        # Many short runs: a few at a time, each under the python3 that runs this test (no
        # re-exec: InterpreterTest covers that).
        env = dict(os.environ, KVB_PYTHON_CHOSEN="1")
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            done = list(pool.map(lambda r: subprocess.run(
                [sys.executable, KVB, *r[0]], capture_output=True, text=True, env=env,
                timeout=300), runs))
        for (args, path, words), p in zip(runs, done):
            with self.subTest(args=args):
                self.assert_refused(p, path, words)

    def test_a_text_file_is_not_json_and_a_cut_document_is_truncated(self) -> None:
        """A file that is not JSON at all is said to be so; only a document that starts as one
        and stops early is called truncated (a cut inside a literal: 'tr')."""
        text = self.raw("notes.txt", b"results of monday\nfillseq 1.2 Mops/s\n")
        brace = self.raw("brace.txt", b"{ not json at all, just braces }\n")
        cut = self.raw("cut-in-literal.json", b'{"schema": "kvbench-run", "complete": tr')
        for path, truncated in ((text, False), (brace, False), (cut, True)):
            for args in (["report", path], ["validate", path], ["compare", self.good, path]):
                with self.subTest(args=args):
                    p = kvb(*args)
                    self.assert_refused(p, path, "not JSON")
                    self.assertEqual("truncated?" in p.stderr, truncated, p.stderr)

    def test_every_reading_command_refuses_damaged_micro_documents(self) -> None:
        bad = write_json(os.path.join(self.tmp, "micro-fast.json"), gbench("fast"))
        inf = write_json(os.path.join(self.tmp, "micro-inf.json"), gbench(float("inf")))
        for path, words in ((bad, "bytes_per_second: expected a number, got a string"),
                            (inf, "bytes_per_second: Infinity is not a number")):
            for args in (["validate", path], ["report", path], ["compare", self.gbench, path],
                         ["micro", "--compare", self.gbench, path]):
                with self.subTest(args=args):
                    self.assert_refused(kvb(*args), path, words)
        # A kvbench_micro file where only kvbench runs are read: refused, saying what it is.
        self.assert_refused(kvb("export", "hgrm", self.gbench), self.gbench,
                            "Google Benchmark JSON")
        # kvb report reads both (README): a line per benchmark.
        p = kvb("report", self.gbench)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"crc32c/table/4096 +2\.000 ns +2\.000 ns +2\.00 GB/s +1")

    def test_all_problems_of_all_files_at_once(self) -> None:
        def three(doc: dict[str, Any], role: dict[str, Any]) -> None:
            del doc["context"]["engine"]["name"]
            role["ops_per_sec"] = "fast"
            doc["results"][0]["db_size_bytes"] = None
        a = self.damaged("three.json", three)
        b = self.raw("empty2.json", b"")
        for command in ("report", "validate"):
            p = kvb(command, a, b)
            self.assertEqual(p.returncode, 2)
            lines = p.stderr.splitlines()
            self.assertIn(f"kvb: error: {a}: $.context.engine.name: missing", lines)
            self.assertIn(f"kvb: error: {a}: $.results[1].roles[0].ops_per_sec: expected a "
                          "number, got a string ('fast')", lines)
            self.assertIn(f"kvb: error: {a}: $.results[0].db_size_bytes: expected an integer, "
                          "got null", lines)
            self.assertIn(f"kvb: error: {b}: empty file: not a JSON document", lines)
        # validate still says OK for the good ones, on stdout.
        p = kvb("validate", self.good, a)
        self.assertIn(f"{self.good}: OK", p.stdout)
        self.assertIn("kvb: error: 1 of 2 file(s) do not conform", p.stderr)


def with_metrics(doc: dict[str, Any], described: list[dict[str, str]]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["metrics"] = described
    return doc


class MetricsTest(unittest.TestCase):
    """compare, report and validate take the metrics a document describes; older documents get
    the built-in list."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.mkdtemp(prefix="kvb-metrics.")
        cls.doc = results.load(run_kvbench(cls.tmp, "--num=300", "--benchmarks=fillseq")).doc

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def titles(self, stdout: str) -> list[str]:
        """The metric of each table compare printed."""
        return re.findall(r"^(\S+) \[[^\]]*\], (?:higher|lower) is better", stdout, re.M)

    def test_a_described_metric_reaches_compare_report_and_validate(self) -> None:
        new = {"path": "cost.thread_cpu_us_per_op", "unit": "us/op", "better": "lower"}
        doc = with_metrics(self.doc, [*metrics.FALLBACK, new])
        path = write_json(os.path.join(self.tmp, "described.json"), doc)
        self.assertEqual(kvb("validate", path).returncode, 0)
        again = kvbtest.rerun(path, os.path.join(self.tmp, "described-again.json"))
        p = kvb("compare", path, again, "--metric", "all")  # by default only the headline ones
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.titles(p.stdout),
                         [m["path"] for m in metrics.FALLBACK] + ["cost.thread_cpu_us_per_op"])
        self.assertIn("cost.thread_cpu_us_per_op [us/op], lower is better", p.stdout)
        p = kvb("report", "--metrics", path)
        self.assertRegex(p.stdout, r"memory\s+fillseq\s+cost\.thread_cpu_us_per_op\s+[\d.]+"
                                   r"\s+us/op\s+lower is better")
        p = kvb("compare", path, again, "--metric", "thread_cpu_us_per_op")
        self.assertEqual(self.titles(p.stdout), ["cost.thread_cpu_us_per_op"])

    def test_documents_without_metrics_get_the_fallback(self) -> None:
        # As kvbench wrote them before it described its metrics.
        older = {k: v for k, v in self.doc.items() if k != "metrics"}
        path = write_json(os.path.join(self.tmp, "old.json"), older)
        again = kvbtest.rerun(path, os.path.join(self.tmp, "old-again.json"))
        p = kvb("compare", path, again, "--metric", "all")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.titles(p.stdout), [m["path"] for m in metrics.FALLBACK])
        self.assertIn("latency_ns.p99 [us], lower is better", p.stdout)   # ns shown as us
        self.assertIn("db_size_bytes [MB], lower is better", p.stdout)    # from the result
        # Short names pick a path by its last parts; unknown ones list the valid ones.
        p = kvb("compare", path, again, "--metric", "p99")
        self.assertEqual(self.titles(p.stdout), ["latency_ns.p99"])
        p = kvb("compare", path, again, "--metric", "p42")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown metric p42; valid for kvbench files: ops_per_sec, latency_ns.p99",
                      p.stderr)

    def test_a_metric_that_is_not_a_number_is_refused(self) -> None:
        doc = with_metrics(self.doc, [{"path": "role", "unit": "x", "better": "higher"},
                                      {"path": "no.such.field", "unit": "x", "better": "lower"}])
        path = write_json(os.path.join(self.tmp, "string-metric.json"), doc)
        for command in ("validate", "report", "compare"):
            again = os.path.join(self.tmp, "string-metric-again.json")
            p = kvb(command, path, *([write_json(again, doc)] if command == "compare" else []))
            self.assertEqual(p.returncode, 2, command)
            self.assertIn(f"{path}: $.results[0].roles[0].role: expected a number, got a string "
                          "('writer') (a metric)", p.stderr)
            self.assertNotIn("no.such.field", p.stderr)  # absent in a role is allowed

    def test_sides_that_describe_a_metric_differently_are_refused(self) -> None:
        a = write_json(os.path.join(self.tmp, "a.json"), with_metrics(
            self.doc, [{"path": "ops_per_sec", "unit": "ops/s", "better": "higher"}]))
        b = write_json(os.path.join(self.tmp, "b.json"), with_metrics(
            self.doc, [{"path": "ops_per_sec", "unit": "ops/s", "better": "lower"}]))
        p = kvb("compare", a, b)
        self.assertEqual(p.returncode, 2)
        self.assertIn("metric ops_per_sec is ops/s, lower is better", p.stderr)


class ManifestTest(unittest.TestCase):
    """cmake/deps.json is the one list of libraries and engines."""

    def test_the_manifest_is_read_as_written(self) -> None:
        with open(manifest.DEPS_JSON, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(list(manifest.deps()), [d["name"] for d in doc["deps"]])
        self.assertEqual(manifest.buildable(),
                         [d["name"] for d in doc["deps"] if d["source_build"]])
        self.assertEqual(manifest.default_engine(),
                         next(d["name"] for d in doc["deps"] if d["engine"]))

    def test_no_module_spells_a_library_name(self) -> None:
        # The one exception: db_bench is RocksDB's own tool.
        names = list(manifest.deps())
        tools = os.path.join(SCRIPTS, "kvbtools")
        modules = sorted(os.path.relpath(os.path.join(d, f), tools)
                         for d, _, fs in os.walk(tools) for f in fs if f.endswith(".py"))
        self.assertGreater(len(modules), 50)
        for module in modules:
            if os.path.basename(module) == "dbbench_args.py":
                continue
            with open(os.path.join(tools, module), encoding="utf-8") as f:
                text = f.read()
            for name in names:
                with self.subTest(module=module, name=name):
                    self.assertNotIn(f'"{name}"', text)

    def fake(self, tmp: str, script: str) -> str:
        path = os.path.join(tmp, "kvbench")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + script)
        os.chmod(path, 0o755)
        return path

    def test_engines_of_a_binary(self) -> None:
        engines = manifest.engines_of(ARGS.kvbench)
        self.assertEqual(engines.get("memory"), "reference")
        self.assertEqual(engines.get("null"), "reference")
        for name, kind in engines.items():
            self.assertEqual(kind == "storage", manifest.is_engine(name), name)
        storage = [d.name for d in manifest.deps().values() if d.engine]
        with tempfile.TemporaryDirectory() as tmp:
            new = self.fake(tmp, f'[ "$1" = --list-engines ] || exit 9\n'
                                 f'printf "{storage[0]}\\tstorage\\nmemory\\treference\\n"\n')
            self.assertEqual(manifest.engines_of(new),
                             {storage[0]: "storage", "memory": "reference"})
            # Binaries from before --list-engines: their --version line.
            old = self.fake(tmp, 'if [ "$1" = --list-engines ]; then\n'
                                 '  echo "kvbench: unknown flag --list-engines" >&2; exit 2\nfi\n'
                                 f'echo "engines: {storage[0]} {storage[1]}(not compiled in) '
                                 'memory null"\n')
            self.assertEqual(manifest.engines_of(old), {storage[0]: "storage",
                                                        "memory": "reference",
                                                        "null": "reference"})
            with self.assertRaises(UsageError):
                manifest.engines_of(os.path.join(tmp, "nothing-here"))

    def test_source_trees_are_recognised_by_the_manifest_markers(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for dep in manifest.deps().values():
                if not dep.source_build:
                    continue
                tree = dep.source_trees[0]
                root = os.path.join(tmp, dep.name)
                for rel in (tree.marker, *tree.also, tree.version_file):
                    os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                    with open(os.path.join(root, rel), "a") as f:
                        f.write("".join(f"#define {m} {i + 1}\n"
                                        for i, m in enumerate(dep.version_macros)))
                prefix = os.path.join(tmp, dep.name + "-prefix")
                os.makedirs(os.path.dirname(os.path.join(prefix, dep.prefix_version_file)))
                shutil.copy(os.path.join(root, tree.version_file),
                            os.path.join(prefix, dep.prefix_version_file))
                with self.subTest(dep=dep.name):
                    self.assertEqual(sources.detect(dep.name, root), "1.2.3")
                    self.assertEqual(sources.detect(dep.name, prefix, prefix=True), "1.2.3")
                    with self.assertRaises(UsageError):
                        sources.detect(dep.name, os.path.dirname(tmp))


class InterpreterTest(unittest.TestCase):
    """kvb runs under /usr/bin/python3, where Debian's packages are, however it is started."""

    SYSTEM = "/usr/bin/python3"

    def version(self, cmd: list[str], **env: str) -> str:
        p = subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                           env=dict(os.environ, **env), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_started_as_a_program_or_by_any_python3(self) -> None:
        if not os.path.exists(self.SYSTEM):
            self.skipTest("no /usr/bin/python3 here")
        pythons = {sys.executable, shutil.which("python3") or self.SYSTEM, self.SYSTEM}
        for cmd in [[KVB]] + [[py, KVB] for py in sorted(pythons)]:
            with self.subTest(cmd=cmd):
                self.assertIn(f" at {self.SYSTEM}\n", self.version(cmd))

    def test_version_and_commit_as_kvbench_prints_them(self) -> None:
        out = self.version([KVB])
        m = re.match(r"kvb (\d+\.\d+\.\d+) \(git ([0-9a-f]{12}|unknown)\): kvbench tools in ",
                     out)
        self.assertIsNotNone(m, out)
        assert m is not None
        p = subprocess.run([ARGS.kvbench, "--version"], capture_output=True, text=True,
                           timeout=60)
        self.assertTrue(p.stdout.startswith(f"kvbench {m.group(1)} "), p.stdout[:80])

    def test_the_choice_can_be_kept(self) -> None:
        out = self.version([sys.executable, KVB], KVB_PYTHON_CHOSEN="1")
        self.assertIn(f" at {sys.executable}\n", out)


class TopLevelTest(unittest.TestCase):
    """One handler at the top: usage 2, run failure 1, interrupt 130, a closed pipe quietly."""

    def test_every_command_has_help(self) -> None:
        p = kvb("--help")
        self.assertEqual(p.returncode, 0)
        commands = [name for name, *_ in cli.COMMANDS]
        for c in commands:
            self.assertRegex(p.stdout, rf"\n    {c}\b")
        for args in ([[c, "--help"] for c in commands]
                     + [["dbbench", "parity", "--help"], ["dbbench", "instructions", "--help"]]):
            with self.subTest(args=args):
                self.assertEqual(kvb(*args).returncode, 0)

    def test_the_command_table_is_the_modules(self) -> None:
        # kvb imports only the parser of the command asked for: `kvb --help` lists the others
        # from cli.COMMANDS, whose lines must be the parsers' own (their docstrings' first).
        raw = kvb("--help").stdout
        names = [name for name, *_ in cli.COMMANDS]
        self.assertEqual(re.findall(r"^    ([a-z]+)\b", raw, re.M), names)
        listed = " ".join(raw.split())
        listing = listed[listed.index("COMMAND report"):listed.index("options:")]
        for name, module, _, line in cli.COMMANDS:
            with self.subTest(command=name):
                doc = importlib.import_module(module).__doc__ or ""
                self.assertEqual(line, kvb_command.help_line(doc))
                self.assertIn(f" {name} {line}", listing)
        order = [listing.index(f" {name} ") for name in names]
        self.assertEqual(order, sorted(order))
        # Every module of commands/parsers/ with a register() is a command of the table, or a
        # subcommand registered by one (dbbench's); every other module (groups.py, and the run
        # modules of commands/) registers nothing.
        here = os.path.join(SCRIPTS, "kvbtools", "commands")
        registering = {}
        for d in (here, os.path.join(here, "parsers")):
            for f in os.listdir(d):
                if f.endswith(".py"):
                    with open(os.path.join(d, f), encoding="utf-8") as fh:
                        if re.search(r"^def register\(", fh.read(), re.M):
                            registering[f[:-3]] = d
        self.assertEqual(set(registering.values()), {os.path.join(here, "parsers")})
        self.assertEqual(set(registering) - set(names), {"dbbench_parity", "dbbench_instructions"})
        # Each line in full (argparse wraps it) and only the chosen parser imported (with
        # commands/command.py, kvb's parser class, which cli itself needs).
        probe = ("import sys; sys.path.insert(0, sys.argv[1]); from kvbtools.commands import cli; "
                 "cli.parser(sys.argv[2] or None); print(' '.join(sorted(m for m in sys.modules "
                 "if m.startswith('kvbtools.commands.'))))")
        for chosen, imported in (("", "kvbtools.commands.cli kvbtools.commands.command"),
                                 ("report", "kvbtools.commands.cli kvbtools.commands.command "
                                            "kvbtools.commands.parsers "
                                            "kvbtools.commands.parsers.report")):
            p = subprocess.run([sys.executable, "-c", probe, SCRIPTS, chosen], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.stdout.strip(), imported, p.stderr)

    def test_a_parser_loads_no_run_module(self) -> None:
        # kvb's start (docs/kvbtools.md): `kvb COMMAND --help`, and the parse of every command
        # line, import the command's parser and what it names, none of the run modules' weight:
        # of kvbtools only these modules, and none of the standard library's heavier ones (those
        # the run modules bring: dataclasses, with inspect and ast, is the most common).
        light = {"kvbtools", "kvbtools.commands", "kvbtools.commands.cli",
                 "kvbtools.commands.command", "kvbtools.core", "kvbtools.core.errors",
                 "kvbtools.core.version", "kvbtools.core.store_schema", "kvbtools.core.deps_json"}
        heavy = {"dataclasses", "inspect", "hashlib", "datetime", "socket", "sqlite3",
                 "statistics", "matplotlib"}
        probe = ("import sys; sys.path.insert(0, sys.argv[1]); from kvbtools.commands import cli; "
                 "cli.parser(sys.argv[2]).format_help(); print(' '.join(sorted("
                 "m for m in sys.modules if m.startswith('kvbtools') or m in sys.argv[3:])))")
        for name, *_ in cli.COMMANDS:
            with self.subTest(command=name):
                p = subprocess.run([sys.executable, "-c", probe, SCRIPTS, name, *heavy],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                loaded = set(p.stdout.split())
                self.assertIn(f"kvbtools.commands.parsers.{name}", loaded)
                self.assertEqual({m for m in loaded - light
                                  if not m.startswith("kvbtools.commands.parsers")}, set())

    def test_every_parser_names_a_function_of_its_run_module(self) -> None:
        # A parser sets `func`, the name of the function of its run module that cli calls.
        p = cli.parser(None, every=True)
        run_modules = {name: run for name, _, run, _ in cli.COMMANDS}

        def funcs(q: argparse.ArgumentParser) -> list[str]:
            sub = [a for a in q._actions if isinstance(a, argparse._SubParsersAction)]
            if not sub:
                return [q.get_default("func")]
            return [f for inner in sub[0].choices.values() for f in funcs(inner)]
        top = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)][0]
        for name, q in top.choices.items():
            for func in funcs(q):
                with self.subTest(command=name, func=func):
                    self.assertTrue(callable(getattr(importlib.import_module(run_modules[name]),
                                                     func, None)))

    def test_the_defaults_a_parser_states_are_the_run_codes(self) -> None:
        # The parsers write these numbers down rather than import the modules that define them
        # (kvb's start): they must stay the same numbers.
        self.assertEqual((groups.MAX_ROUNDS, groups.FLOOR),
                         (plan.MAX_ROUNDS, plan.FLOOR))
        self.assertEqual(groups.DBBENCH_BENCHMARKS, tuple(dbbench_args.BENCHMARKS))
        self.assertEqual(bisect_parser.WITNESSES, bisect_state.WITNESSES)
        self.assertEqual((trend.WINDOW, trend.PVALUE, trend.MIN_SIZE),
                         (changes.Params.window, changes.Params.judgement.alpha,
                          changes.Params.min_size))
        self.assertEqual(deps_json.buildable(), manifest.buildable())
        self.assertEqual(groups.SLURM_CONFIG_ENV, slurm.CONFIG_ENV)

    def test_an_unknown_argument_is_said_with_its_commands_usage(self) -> None:
        # argparse said it with kvb's own usage, which names no argument of report.
        for args, usage in ((["report", "--bogus", "x.json"], "usage: kvb report "),
                            (["store", "add", "--bogus", "x.json"], "usage: kvb store add ")):
            p = kvb(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertTrue(p.stderr.startswith(usage), p.stderr)
            self.assertIn(f"kvb: error: {' '.join(args[:-2])}: unrecognized arguments: --bogus",
                          p.stderr)

    def test_usage_errors_exit_2(self) -> None:
        for args, words in ((["nosuch"], "invalid choice"), (["dbbench"], "required"),
                            (["dbbench", "parity", "--benchmarks", "nosuch", "--kvbench",
                              ARGS.kvbench], "--benchmarks: unknown nosuch"),
                            (["micro", "--binary", "/nonexistent"], "not an executable file"),
                            (["selfcheck", "--kvbench", ARGS.kvbench, "--small", "10", "--large", "5"],
                             "--large above --small")):
            with self.subTest(args=args):
                p = kvb(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)
                self.assertNotIn("Traceback", p.stderr)

    def test_interrupt_is_one_line_and_130(self) -> None:
        p = subprocess.Popen([KVB, "selfcheck", "--kvbench", ARGS.kvbench, "--reads", "1000000000000",
                              "--small", "1000", "--large", "2000"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertEqual(err, "kvb: interrupted\n")

    def test_a_closed_pipe_is_not_an_error_message(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = run_kvbench(tmp, "--num=100", "--benchmarks=fillseq[X200]")
            r, w = os.pipe()
            os.close(r)  # the reader is gone before kvb writes a line
            p = subprocess.run([KVB, "report", "--metrics", path], stdout=w,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            os.close(w)
        self.assertEqual(p.returncode, 141)
        self.assertEqual(p.stderr, "")


class DbBenchCommandTest(unittest.TestCase):
    def test_missing_db_bench_is_a_usage_error(self) -> None:
        p = kvb("dbbench", "parity", "--kvbench", ARGS.kvbench, "--db-bench", "/nonexistent/db_bench")
        self.assertEqual(p.returncode, 2)
        self.assertIn("kvb: error: /nonexistent/db_bench not found", p.stderr)

    @unittest.skipUnless(shutil.which("db_bench") and shutil.which("taskset"),
                         "needs db_bench (rocksdb-tools) and taskset")
    def test_cpus_runs_both_tools_pinned(self) -> None:
        cpu = str(min(os.sched_getaffinity(0)))  # one this process may use, whatever the cpuset
        p = kvb("dbbench", "parity", "--kvbench", ARGS.kvbench, "--num", "2000", "--runs", "1",
                "--benchmarks", "fillseq", "--cpus", cpu)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"both pinned: taskset -c {cpu}", p.stdout)
        self.assertIn("run 1 db_bench", p.stdout)
        self.assertIn("run 1 kvbench", p.stdout)
        self.assertRegex(p.stdout,
                         r"kvbench CPU seconds per phase .*: fillseq median \d+\.\d\d cv ")
        # taskset refuses a CPU the process may not use: the run fails, it does not run unpinned.
        p = kvb("dbbench", "parity", "--kvbench", ARGS.kvbench, "--num", "2000", "--runs", "1",
                "--benchmarks", "fillseq", "--cpus", "4095")
        self.assertEqual(p.returncode, 1, p.stdout)


ROOT = os.path.dirname(SCRIPTS)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def markdown_pages() -> list[str]:
    """README.md and every page under docs/ (docs/evidence/ too), relative to the checkout."""
    pages = ["README.md"]
    for top, _, files in os.walk(os.path.join(ROOT, "docs")):
        pages += [os.path.relpath(os.path.join(top, f), ROOT) for f in files if f.endswith(".md")]
    return sorted(pages)


def prose(path: str) -> str:
    """A page without its code blocks and code spans, where a `](x)` is no link."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return re.sub(r"`[^`\n]*`", "", FENCE.sub("", f.read()))


def anchors(path: str) -> set[str]:
    """The fragments GitHub gives the headings of a page: the text as shown, in lower case,
    punctuation dropped, spaces as hyphens, a repeated one suffixed -1, -2, ..."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    found: set[str] = set()
    count: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M):
        shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
        slug = re.sub(r"[^\w\- ]", "", shown.lower()).replace(" ", "-")
        found.add(f"{slug}-{count[slug]}" if slug in count else slug)
        count[slug] = count.get(slug, 0) + 1
    return found


class DocsTest(unittest.TestCase):
    """README.md and docs/ as a user reads them: every relative link or image leads to a file
    (and heading) that exists, no placeholder is left unexpanded, and the README's picture is
    made again by the command it names."""

    def test_every_relative_link_leads_to_a_file_and_heading(self) -> None:
        broken = []
        for page in markdown_pages():
            for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:, file: are not the checkout's
                name, _, fragment = target.partition("#")
                path = os.path.normpath(os.path.join(os.path.dirname(page), name)) if name else page
                if not os.path.exists(os.path.join(ROOT, path)):
                    broken.append(f"{page}: {target}: no {path}")
                elif fragment and path.endswith(".md") and fragment not in anchors(path):
                    broken.append(f"{page}: {target}: no heading #{fragment} in {path}")
        self.assertEqual(broken, [])

    def test_no_placeholder_is_left(self) -> None:
        left = []
        for page in markdown_pages():
            with open(os.path.join(ROOT, page), encoding="utf-8") as f:
                left += [f"{page}: {m}" for m in re.findall(r"@[A-Z_]{2,}@", f.read())]
        self.assertEqual(left, [])

    def test_the_readme_picture_is_made_by_its_command(self) -> None:
        script = os.path.join(SCRIPTS, "screenshot.sh")
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            self.assertIn("scripts/screenshot.sh", f.read())
        with tempfile.TemporaryDirectory(prefix="kvb-test.") as tmp:
            out = os.path.join(tmp, "page.png")
            p = subprocess.run([script, "--kvbench", ARGS.kvbench, "--num", "0", "--out", out],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual((p.returncode, os.path.exists(out)), (2, False), p.stderr)
            self.assertIn("--num wants a positive count", p.stderr)
            engines = subprocess.run([ARGS.kvbench, "--list-engines"], capture_output=True,
                                     text=True, check=True).stdout
            lacking = {"rocksdb", "wiredtiger", "lmdb"} - set(re.findall(r"^(\w+)\t", engines, re.M))
            if lacking:
                self.skipTest(f"this kvbench lacks {sorted(lacking)}: the picture has all three")
            if not (shutil.which("chromium") or shutil.which("chromium-browser")):
                self.skipTest("chromium is not installed (scripts/install-deps.sh installs it)")
            if kvbtest.emulator():
                self.skipTest(f"headless Chromium cannot run under {kvbtest.emulator()}")
            p = subprocess.run([script, "--kvbench", ARGS.kvbench, "--num", "5000", "--out", out],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                head = f.read(24)
            self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
            self.assertEqual(struct.unpack(">II", head[16:24]), (1280, 1800))
            self.assertLess(os.path.getsize(out), 300 * 1024)
            self.assertEqual(os.listdir(tmp), ["page.png"])


if __name__ == "__main__":
    kvbtest.main("kvbench")
