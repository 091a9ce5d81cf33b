#!/usr/bin/env python3
"""kvbench_micro's command line: usage errors exit 2 with a message, as kvbench's do (its flags are
a table parsed by src/cli/flags.h); Google Benchmark's own flags pass through."""
from __future__ import annotations

import argparse
import json
import os
import tempfile
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
                             (["--seed"], "flag --seed needs a value"),
                             (["--perf_counters=bogus"], "unknown event 'bogus'"),
                             (["--cpu_affinity=0,1"], "give one CPU"),
                             (["--cpu_affinity=1-0"], "expected CPU numbers and ranges"),
                             ([f"--cpu_affinity={max(os.sched_getaffinity(0)) + 1}"],
                              "is not one this process may run on")):
            with self.subTest(flags=flags):
                p = run(*flags)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)

    def test_a_filter_that_matches_nothing_exits_2_and_leaves_the_out_file(self) -> None:
        """Google Benchmark opens --benchmark_out before it matches: a filter that matched nothing
        exited 0 and left an empty file (or emptied the one there)."""
        with tempfile.TemporaryDirectory() as tmp:
            old, new = os.path.join(tmp, "old.json"), os.path.join(tmp, "new.json")
            with open(old, "w") as f:
                f.write('{"kept": true}\n')
            os.symlink("old.json", os.path.join(tmp, "link.json"))
            for out in (new, old, os.path.join(tmp, "link.json")):
                for extra in ([], ["--benchmark_list_tests=true"]):
                    with self.subTest(out=os.path.basename(out), extra=extra):
                        p = run("--benchmark_filter=^no/such/benchmark$", f"--benchmark_out={out}",
                                "--benchmark_out_format=json", *extra)
                        self.assertEqual(p.returncode, 2, p.stderr)
                        self.assertIn("--benchmark_filter=^no/such/benchmark$ matches no "
                                      "benchmark: nothing was run", p.stderr)
                        self.assertEqual(sorted(os.listdir(tmp)), ["link.json", "old.json"])
                        with open(old) as f:
                            self.assertEqual(f.read(), '{"kept": true}\n')
            # A listing that matches writes no results either; a run replaces the file whole.
            p = run("--benchmark_filter=^crc32c/table/256$", "--benchmark_list_tests=true",
                    f"--benchmark_out={old}")
            self.assertEqual((p.returncode, p.stdout), (0, "crc32c/table/256\n"), p.stderr)
            with open(old) as f:
                self.assertEqual(f.read(), '{"kept": true}\n')
            p = run("--block_sizes=256", "--benchmark_filter=^crc32c/table/256$",
                    "--benchmark_min_time=0.001", f"--benchmark_out={tmp}/link.json",
                    "--benchmark_out_format=json")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(old) as f:
                self.assertEqual(json.load(f)["benchmarks"][0]["name"], "crc32c/table/256")
            self.assertTrue(os.path.islink(os.path.join(tmp, "link.json")))
            self.assertEqual(sorted(os.listdir(tmp)), ["link.json", "old.json"])

    def test_canary_prints_one_json_object_and_runs_nothing(self) -> None:
        """kvbench_micro --canary: kvbench's CPU speed canary from this binary (kvb matrix --micro
        takes it from the build it measures). Its figures are positive; their size is a
        benchmark's, not a test's."""
        allowed = sorted(os.sched_getaffinity(0))
        for flags, cpus in (([f"--cpu_affinity={allowed[-1]}"], {allowed[-1]}),
                            ([], set(allowed)),
                            (["--benchmark_filter=crc32c", "--block_sizes=4096"], set(allowed))):
            with self.subTest(flags=flags):
                p = run("--canary", *flags)
                self.assertEqual(p.returncode, 0, p.stderr)
                lines = p.stdout.splitlines()
                self.assertEqual(len(lines), 1, p.stdout)  # no benchmark ran
                c = json.loads(lines[0])
                self.assertEqual(c["canary"], "kvbench reference loop")
                self.assertIn(c["cpu"], cpus)
                self.assertGreater(c["ns_per_loop"], 0)
                self.assertGreaterEqual(c["wall_ns_per_loop"], c["ns_per_loop"])
                self.assertGreater(c["cpu_share"], 0)
                self.assertLessEqual(c["cpu_share"], 1)
        bad = [([f"--cpu_affinity={max(allowed) + 1}"], "is not one this process may run on"),
               (["--benchmark_nonsense=1"], "benchmark_nonsense"),
               (["--perf_counters=bogus"], "unknown event 'bogus'")]
        if len(allowed) > 1:
            bad.append(([f"--cpu_affinity={allowed[0]},{allowed[1]}"], "--canary measures one CPU"))
        for flags, words in bad:
            with self.subTest(flags=flags):
                p = run("--canary", *flags)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(words, p.stderr)
                self.assertEqual(p.stdout, "")
        self.assertIn("--canary [--cpu_affinity=N]", run("--help").stdout)

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

    def test_counters_per_iteration_and_pinning_in_the_json(self) -> None:
        cpu = max(os.sched_getaffinity(0))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.json")
            p = run("--block_sizes=4096", "--benchmark_filter=crc32c/table/4096$",
                    "--benchmark_min_time=0.01", f"--cpu_affinity={cpu}",
                    "--benchmark_repetitions=2",  # the _cv rows of counters that counted 0
                    f"--benchmark_out={out}", "--benchmark_out_format=json")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f, parse_constant=lambda c: self.fail(f"{c} in the JSON"))
        ctx, bench = doc["context"], doc["benchmarks"][0]
        self.assertEqual(ctx["cpu_affinity"], str(cpu))
        if ctx.get("kvbench_emulator"):
            self.skipTest(f"the CPU is emulated ({ctx['kvbench_emulator']}): qemu-user implements "
                          "no perf_event_open (ENOSYS, which the context reports as the reason)")
        self.assertIn("task-clock", ctx["perf_counters"])
        # One 4 KiB table crc32c takes more than 100 ns and far less than a millisecond of CPU.
        self.assertGreater(bench["task_clock_ns_per_op"], 100, bench)
        self.assertLess(bench["task_clock_ns_per_op"], 1e6, bench)
        if "perf_counters_unavailable" in ctx:  # no PMU here: said, and no number made up
            self.assertNotIn("instructions_per_op", bench)
        else:
            self.assertGreater(bench["instructions_per_op"], 1000, bench)
            self.assertGreater(bench["ipc"], 0, bench)

    def test_perf_counters_off_adds_no_counters(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.json")
            p = run("--block_sizes=256", "--benchmark_filter=crc32c/table/256$",
                    "--benchmark_min_time=0.001", "--perf_counters=off",
                    f"--benchmark_out={out}", "--benchmark_out_format=json")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
        self.assertNotIn("task_clock_ns_per_op", doc["benchmarks"][0])
        self.assertNotIn("perf_counters_unavailable", doc["context"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--micro", required=True)
    args, rest = parser.parse_known_args()
    MICRO = args.micro
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
