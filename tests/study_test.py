#!/usr/bin/env python3
"""kvb matrix's study axes (--engines, --threads, --configs, no --presets) on the real kvbench
with the memory reference engine: the tables relative to the base, QPS@N, and config files that
are rejected before any run. Run by ctest with --kvbench."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(os.path.dirname(HERE), "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)
sys.path.insert(0, HERE)

from kvbtools.core import host, study_tables  # noqa: E402
from kvbtools.core.errors import RunError  # noqa: E402
from kvbtools.measure import sources  # noqa: E402
import kvbtest  # noqa: E402
from kvbtest import ARGS  # noqa: E402


def kvb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, KVB, *args], capture_output=True, text=True,
                          timeout=600)


class StudyTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        self.results = os.path.join(self.tmp, "results")

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def configs(self, text: str) -> str:
        path = os.path.join(self.tmp, "configs.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def matrix(self, *args: str) -> subprocess.CompletedProcess[str]:
        return kvb("matrix", "--kvbench", ARGS.kvbench, "--engines", "memory", "--num", "2000",
                   "--repeats", "1", "--results-dir", self.results, "--no-store", *args)

    def test_unknown_flag_in_a_config_is_rejected_before_any_run(self) -> None:
        path = self.configs("base: --cache_size=1048576\n# a comment\nbad: --cache_sise=1\n")
        p = self.matrix("--configs", path)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"--configs {path}:3: '--cache_sise=1' is not a kvbench flag", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertFalse(os.path.exists(self.results), "nothing may run")

    def test_a_config_may_not_set_an_axis(self) -> None:
        p = self.matrix("--configs", self.configs("a: --threads=4\n"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(":1: '--threads=4' is set by kvb matrix itself", p.stderr)

    def test_malformed_config_line_names_the_line(self) -> None:
        p = self.matrix("--configs", self.configs("a: --cache_size=1\nno colon here\n"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(":2: expected 'name: --flag=value ...'", p.stderr)

    def test_presets_and_configs_run_every_configuration_on_every_preset(self) -> None:
        # With --presets (built, not prebuilt) the configurations were checked for their form
        # and then dropped: every series ran without its flags while the JSON listed them.
        path = self.configs("small: --cache_size=1048576\nbig: --cache_size=67108864\n")
        # Presets of this host's architecture: another's is skipped (no cross builds).
        a = {"x86_64": "x86", "aarch64": "arm"}.get(host.host_arch(), "x86")
        p = kvb("matrix", "--presets", f"{a}-gcc-native,{a}-clang-native", "--engines", "memory",
                "--workloads", "fillseq", "--configs", path, "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        first = [line.split(":", 1) for line in p.stdout.splitlines() if line.startswith("  1 ")]
        self.assertEqual([(series.strip(), flags.split()[-1]) for series, flags in first],
                         [(f"1 {a}-gcc-native small", "--cache_size=1048576"),
                          (f"1 {a}-gcc-native big", "--cache_size=67108864"),
                          (f"1 {a}-clang-native small", "--cache_size=1048576"),
                          (f"1 {a}-clang-native big", "--cache_size=67108864"),
                          ("1 control", "--cache_size=1048576")])

    def test_threads_and_configs_give_relative_tables_and_qps_at_n(self) -> None:
        path = self.configs("small: --cache_size=1048576\nbig: --cache_size=67108864 --verify\n")
        p = self.matrix("--threads", "1,2", "--configs", path, "--workloads", "readrandom")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        self.assertIn("fillseq added before readrandom", out)
        self.assertIn("ops_per_sec (ops/s, higher is better): small t=1 in absolute values", out)
        for row in ("small t=1 (base)", "small t=2", "big t=1", "big t=2", "control"):
            self.assertRegex(out, rf"\n{re.escape(row)} +")
        self.assertRegex(out, r"readrandom: ops/s at each thread count.*\n"
                              r"group +QPS@1 +QPS@2 +KBr/q@2 +cs/q@2")
        self.assertRegex(out, r"\nsmall +[\d,]+ +[\d,]+ ")
        [run_dir] = os.listdir(self.results)
        with open(os.path.join(self.results, run_dir, "study.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual([s["label"] for s in doc["series"]],
                         ["small t=1", "small t=2", "big t=1", "big t=2", "control"])
        self.assertEqual(doc["base"], "small t=1")
        self.assertEqual(doc["series"][3]["threads"], 2)
        self.assertEqual(doc["series"][3]["config"], "big")
        # report.html: a relative-to-base bar figure per metric, inline, nothing fetched.
        self.assertIn("report: ", out)
        with open(os.path.join(self.results, run_dir, "report.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn('<figure id="fig-study-ops_per_sec">', page)
        self.assertIn("ops_per_sec [ops/s]: relative to small t=1", page.replace("\n", " "))
        self.assertGreaterEqual(page.count("<svg"), 3)
        self.assertNotRegex(page, r'(src|href)="(https?:|//)')
        self.assertIn("<td>--cache_size=67108864 --verify</td>", page)

    def test_a_study_stores_its_runs_unless_no_store(self) -> None:
        db = os.path.join(self.tmp, "store.sqlite")
        p = kvb("matrix", "--kvbench", ARGS.kvbench, "--engines", "memory", "--num", "2000",
                "--repeats", "1", "--results-dir", self.results, "--threads", "1,2",
                "--workloads", "fillseq", "--store", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        # 1 round of 3 series (t=1, t=2, the control), one run file each.
        self.assertRegex(p.stdout, r"stored 3 run\(s\) \(0 already there\)")
        self.assertTrue(os.path.exists(db))

    def test_until_resolved_is_refused_in_a_study(self) -> None:
        p = self.matrix("--threads", "1,2", "--until-resolved")
        self.assertEqual(p.returncode, 2, p.stderr)


class PresetSourcesTest(unittest.TestCase):
    """A --micro comparison of presets compiles the libraries its rows run (lz4, zstd, xxhash)
    in every preset, from Debian's source of the installed version, unless --system-libs; the
    plan says so (--dry-run: nothing fetched, built or run)."""

    # Presets of this host's architecture: another's is skipped (no cross builds).
    ARCH = {"x86_64": "x86", "aarch64": "arm"}.get(host.host_arch(), "x86")

    def configures(self, *extra: str) -> list[str]:
        a = self.ARCH
        with tempfile.TemporaryDirectory() as tmp:
            p = kvb("matrix", "--presets", f"{a}-gcc-native,{a}-gcc-portable", "--micro",
                    "--dry-run", "--no-store", "--results-dir", tmp, *extra)
            self.assertEqual(os.listdir(tmp), [], "a dry run writes nothing")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [x for x in p.stdout.splitlines() if ": cmake --preset " in x]
        self.assertEqual(len(lines), 2, p.stdout)
        return lines

    def test_each_preset_builds_lz4_zstd_and_xxhash_unless_system_libs(self) -> None:
        for line in self.configures():
            for dep in ("lz4", "zstd", "xxhash"):
                self.assertRegex(line, rf" -DKVBENCH_{dep.upper()}_SOURCE_DIR=\S+/build/kvb/"
                                       rf"sources/{dep}-\d+\.\d+\.\d+( |$)")
            self.assertRegex(line, r" -B \S+-lz4-[\d.]+-zstd-[\d.]+-xxhash-[\d.]+ ")
        for line in self.configures("--system-libs"):
            self.assertNotIn("_SOURCE_DIR", line)
        # --from-source names its own tree; the others stay the default.
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, "lib"))
            with open(os.path.join(tree, "lib", "lz4.h"), "w") as f:
                f.write("#define LZ4_VERSION_MAJOR 1\n#define LZ4_VERSION_MINOR 9\n"
                        "#define LZ4_VERSION_RELEASE 3\n")
            for line in self.configures("--from-source", "lz4", "--source", f"lz4={tree}"):
                self.assertIn(f" -DKVBENCH_LZ4_SOURCE_DIR={tree} ", line + " ")
                self.assertIn(" -DKVBENCH_ZSTD_SOURCE_DIR=", line)

    def test_bad_input_is_refused_before_any_source_is_fetched(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            p = kvb("matrix", "--presets", f"{self.ARCH}-gcc-native", "--micro", "--cpu",
                    "4096", "--no-store", "--results-dir", tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--cpu 4096: not a CPU this process may run on", p.stderr)
        self.assertNotIn("fetching", p.stderr)
        self.assertNotIn("each preset compiles", p.stderr)

    def test_a_source_that_cannot_be_fetched_names_it_and_system_libs(self) -> None:
        def fail(dep: str, version: str) -> str:
            raise RunError(f"scripts/get-sources.sh {dep} {version} failed (1):\n"
                           "E: Failed to fetch: network unreachable")
        saved = sources.fetch
        sources.fetch = fail  # type: ignore[assignment]
        try:
            with self.assertRaises(RunError) as e:
                sources.debian_trees(["lz4", "zstd"])
        finally:
            sources.fetch = saved  # type: ignore[assignment]
        self.assertRegex(str(e.exception), r"^cannot get the source of lz4 \d+\.\d+\.\d+ to "
                                           r"build it with each preset")
        self.assertIn("network unreachable", str(e.exception))
        self.assertIn("--system-libs compares the builds on the installed libraries",
                      str(e.exception))


class CompareByEngineTest(unittest.TestCase):
    """kvb compare of two engines' runs: rows keyed on benchmark, sides named by engine."""

    @classmethod
    def setUpClass(cls) -> None:
        cls._tmp = tempfile.TemporaryDirectory()
        cls.files = []
        for engine in ("memory", "null"):
            out = os.path.join(cls._tmp.name, f"{engine}.json")
            subprocess.run([ARGS.kvbench, f"--engine={engine}", "--num=2000",
                            f"--db={cls._tmp.name}/{engine}", "--report_interval_seconds=0",
                            "--benchmarks=fillseq,readrandom", f"--json={out}"],
                           check=True, capture_output=True, timeout=300)
            cls.files.append(out)

    @classmethod
    def tearDownClass(cls) -> None:
        cls._tmp.cleanup()

    def test_engines_differ_so_rows_key_on_benchmark(self) -> None:
        p = kvb("compare", *self.files, "--metric", "ops_per_sec")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("absent", p.stdout)
        self.assertRegex(p.stdout, r"\n +memory +null\n")
        self.assertRegex(p.stdout, r"\nreadrandom +[\d,.]+ +[\d,.]+\n")

    def test_by_a_field_the_files_lack_is_a_usage_error(self) -> None:
        p = kvb("compare", *self.files, "--by", "no.such.field")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--by no.such.field: side(s)", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


class TablesTest(unittest.TestCase):
    def test_rows_are_ratios_to_the_base_and_the_base_is_absolute(self) -> None:
        sides = {"a": {("readrandom", "ops_per_sec"): [100.0, 110.0, 90.0]},
                 "b": {("readrandom", "ops_per_sec"): [150.0]},
                 "c": {}}
        lines = study_tables.metric_tables(["a", "b", "c"], sides, ["readrandom"], ["ops_per_sec"])
        self.assertRegex(lines[3], r"^a \(base\) +100\.0$")   # the median of the base's runs
        self.assertRegex(lines[4], r"^b +1\.50$")
        self.assertRegex(lines[5], r"^c +-$")                  # not measured: a dash, never 0

    def test_a_small_ratio_is_not_printed_as_zero(self) -> None:
        sides = {"a": {("x", "ops_per_sec"): [1000.0]}, "b": {("x", "ops_per_sec"): [3.1]},
                 "c": {("x", "ops_per_sec"): [0.0]}}
        lines = study_tables.metric_tables(["a", "b", "c"], sides, ["x"], ["ops_per_sec"])
        self.assertRegex(lines[4], r"^b +0\.0031$")
        self.assertRegex(lines[5], r"^c +0$")

    def test_a_metric_zero_everywhere_says_so_instead_of_a_table_of_ratios(self) -> None:
        sides = {"a": {("x", "storage_read_kb_per_op"): [0.0]},
                 "b": {("x", "storage_read_kb_per_op"): [0.0]}}
        lines = study_tables.metric_tables(["a", "b"], sides, ["x"], ["storage_read_kb_per_op"])
        self.assertEqual(lines[0], "storage_read_kb_per_op (KB/op): 0 in every run")


if __name__ == "__main__":
    kvbtest.main("kvbench")
