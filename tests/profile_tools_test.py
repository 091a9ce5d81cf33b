#!/usr/bin/env python3
"""kvbench --profile and the kvb commands that read its profiles (docs/profile.md): the acceptance
runs of issue 30 on this build's kvbench (the reader's profile names MemorySession::Get; kvb
compare of null and memory lists it among the functions that moved; kvb report --html draws a
flame graph), kvb export folded, the schema, and the model's arithmetic on synthetic stacks."""
from __future__ import annotations

import ctypes
import os
import platform
import re
import struct
import subprocess
import sys
import unittest
from typing import Any

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

from kvbtools.core import profiles, results, schema  # noqa: E402
from kvbtools.pages import flame_figures  # noqa: E402
from kvbtools.pages.htmlpage import Page  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS, load_json, write_json  # noqa: E402


def kvb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KVB, *args], capture_output=True, text=True, timeout=300)


def profiled(tmp: str, engine: str, name: str, *extra: str) -> tuple[str, str]:
    """A profiled fillseq,readrandom run: the JSON's path and the console output."""
    out = os.path.join(tmp, f"{name}.json")
    p = subprocess.run([ARGS.kvbench, f"--engine={engine}", "--benchmarks=fillseq,readrandom",
                        "--num=300000", "--profile", f"--json={out}", f"--db={tmp}/db-{name}",
                        "--report_interval_seconds=0", *extra],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(p.stdout + p.stderr)
    return out, p.stdout


PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(platform.machine())


NO_SECCOMP = 99  # the child's exit status when the filter cannot be installed (qemu-user)


def deny_perf_event_open() -> None:
    """In the child before exec: a seccomp filter that fails perf_event_open with EPERM, as a
    container's default policy does."""
    ld, jeq, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    insns = [(ld, 0, 0, 0), (jeq, 0, 1, PERF_EVENT_OPEN), (ret, 0, 0, 0x00050000 | 1),  # EPERM
             (ret, 0, 0, 0x7fff0000)]  # allow
    code = b"".join(struct.pack("HBBI", *i) for i in insns)
    buf = ctypes.create_string_buffer(code)
    prog = struct.pack("HxxxxxxQ", len(insns), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if libc.prctl(22, 2, ctypes.c_char_p(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        os._exit(NO_SECCOMP)


def synthetic(stacks: dict[str, int], ops: int, period_ns: int = 1000000) -> dict[str, Any]:
    """A minimal kvbench document with one profiled readrandom reader."""
    return {"results": [{"benchmark": "readrandom", "roles": [{"role": "reader", "ops": ops}],
                         "profile": {"event": "cpu-clock", "period_ns": period_ns,
                                     "kernel_frames": True, "samples": sum(stacks.values()),
                                     "roles": [{"role": "reader", "threads": 1,
                                                "samples": sum(stacks.values()),
                                                "lost_samples": 0,
                                                "folded": [[s, n] for s, n in stacks.items()]}]}}]}


class ModelTest(unittest.TestCase):
    def test_self_and_total_count_a_recursive_function_once_per_stack(self) -> None:
        f = profiles.functions({"main;f;f;g": 3, "main;f": 2})
        self.assertEqual(f["f"], (2, 5))
        self.assertEqual(f["g"], (3, 3))
        self.assertEqual(f["main"], (0, 5))

    def test_moved_is_in_ns_per_op_so_runs_of_any_length_compare(self) -> None:
        # A: 100 samples of 1 ms over 1000 ops; B: the same CPU per op over twice the ops, but
        # g grew: per op, f's self time is unchanged and g's doubled.
        a = profiles.of_document(synthetic({"main;f": 50, "main;g": 50}, 1000))
        b = profiles.of_document(synthetic({"main;f": 100, "main;g": 200}, 2000))
        rows = {m.name: m for m in profiles.moved(a[("readrandom", "reader")],
                                                  b[("readrandom", "reader")])}
        self.assertAlmostEqual(rows["f"].self_delta, 0.0)
        self.assertAlmostEqual(rows["g"].self_a, 50000.0)  # 50 x 1 ms / 1000 ops
        self.assertAlmostEqual(rows["g"].self_delta, 50000.0)
        self.assertAlmostEqual(rows["main"].total_delta, 50000.0)
        self.assertEqual(profiles.moved(a[("readrandom", "reader")],
                                        b[("readrandom", "reader")])[0].name, "g")

    def test_short_names_follow_the_table_the_cxx_side_follows(self) -> None:
        # tests/frame_names.txt: the cases profile_test checks against C++'s ShortFrameName, so
        # kvbench's console line and kvb's tables and flame graphs name a frame alike.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frame_names.txt")
        with open(path, encoding="utf-8") as f:
            cases = [line.rstrip("\n").split("\t") for line in f
                     if line.strip() and not line.startswith("#")]
        self.assertGreaterEqual(len(cases), 20)
        for frame, short in cases:
            self.assertEqual(profiles.short_name(frame), short, frame)
        self.assertEqual(profiles.short_name("a::b::function_name(int)", 10), "…tion_name")

    def test_folded_text_is_one_stack_per_line_most_samples_first(self) -> None:
        self.assertEqual(profiles.folded_text({"a;b": 1, "a;c": 3}), "a;c 3\na;b 1\n")

    def test_schema_checks_the_profile_when_it_is_there(self) -> None:
        doc = synthetic({"main;f": 1}, 10)
        self.assertEqual(profiles.check(doc["results"][0]["profile"], "$.p"), [])
        doc["results"][0]["profile"]["roles"][0]["folded"] = [["main;f", "one"]]
        self.assertIn("$.p.roles[0].folded", profiles.check(doc["results"][0]["profile"],
                                                            "$.p")[0])

    def test_flame_graph_is_static_svg_with_a_title_per_frame(self) -> None:
        rp = profiles.of_document(synthetic({"main;f": 3, "main;g<int>(int)": 1}, 4))[
            ("readrandom", "reader")]
        svg = flame_figures.flame(rp, "readrandom [reader]")
        self.assertTrue(svg.startswith("<svg"))
        self.assertNotIn("<script", svg)
        self.assertIn("<title>g&lt;int&gt;(int): 1 samples, 25.0%", svg)
        diff = flame_figures.differential(rp, rp, "same")
        self.assertIn("+0.0)", diff)

    def test_few_samples_are_said_and_a_role_with_none_is_named(self) -> None:
        # A flame graph of 4 samples looked as sure as one of 5000; an idle role vanished.
        doc = synthetic({"main;f": 3, "main;g": 1}, 4)
        doc["results"][0]["profile"]["roles"].append(
            {"role": "background", "threads": 1, "samples": 0, "lost_samples": 0, "folded": []})
        def html_of(name: str, d: dict) -> str:
            page = Page("t")
            flame_figures.add_profile_sections(page, [results.Document(name, results.KVBENCH, d)])
            return "\n".join(b for b in page.blocks if isinstance(b, str))
        html = html_of("few.json", doc)
        self.assertIn("readrandom [reader]: only 4 samples", html)
        self.assertIn('<span class="warn">Few samples: 4 (fewer than 200)', html)
        self.assertIn("few.json: no samples, so no flame graph, of readrandom [background]", html)
        html = html_of("many.json", synthetic({"main;f": 3000, "main;g": 1000}, 4))
        self.assertNotIn("Few samples", html)
        self.assertNotIn("no samples", html)


class ProfiledRunTest(kvbtest.TempDirTest):
    """The issue's acceptance commands, on this build's kvbench."""

    def test_reader_profile_names_memory_session_get(self) -> None:
        path, stdout = profiled(self.tmp, "memory", "memory")
        doc = load_json(path)
        if doc["context"]["workload"]["profile"].startswith("unavailable"):
            self.assertRegex(stdout, r"(?m)^Profile: +unavailable: ")
            self.skipTest(doc["context"]["workload"]["profile"])
        self.assertEqual(schema.check_kvbench(doc, full=True), [])
        result = [r for r in doc["results"] if r["benchmark"] == "readrandom"][0]
        reader = [r for r in result["profile"]["roles"] if r["role"] == "reader"][0]
        self.assertGreater(reader["samples"], 20)
        self.assertTrue(any("MemorySession::Get(" in s for s, _ in reader["folded"]))
        self.assertEqual(sum(n for _, n in reader["folded"]), reader["samples"])
        self.assertRegex(stdout, r"profile: \d+ samples/s over [\d.]+ s \(reader 1 thread \d+ "
                                 r"samples.*collector [\d.]+ ms CPU \([\d.]+% of a CPU")
        self.assertRegex(stdout, r"profile reader self: .*MemorySession::Get")
        self.assertEqual(result["profile"]["roles"][-1]["role"], "background")

        # kvb export folded: flamegraph.pl's lines.
        p = kvb("export", "folded", path, "--out", os.path.join(self.tmp, "folded"))
        self.assertEqual(p.returncode, 0, p.stderr)
        reader_file = os.path.join(self.tmp, "folded", "memory.readrandom.reader.folded")
        self.assertIn(reader_file, p.stdout.splitlines())
        with open(reader_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
        self.assertTrue(all(re.fullmatch(r"\S.* \d+", line) for line in lines), lines[:3])
        self.assertTrue(any("MemorySession::Get" in line for line in lines))

        # kvb report --html: a flame graph per profiled role.
        page = os.path.join(self.tmp, "report.html")
        p = kvb("report", "--html", page, path)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertIn('id="profiles"', html)
        self.assertIn("readrandom [reader]", html)
        self.assertIn("MemorySession::Get", html)

    def test_compare_lists_memory_session_get_among_the_functions_that_moved(self) -> None:
        null, _ = profiled(self.tmp, "null", "null")
        memory, _ = profiled(self.tmp, "memory", "memory")
        if load_json(memory)["context"]["workload"]["profile"].startswith("unavailable"):
            self.skipTest("perf_event_open unavailable")
        page = os.path.join(self.tmp, "compare.html")
        p = kvb("compare", null, memory, "--html", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        section = p.stdout[p.stdout.index("CPU profile, readrandom [reader]"):]
        self.assertIn("A = null, B = memory", section)
        top = section.split("\n\n")[0].splitlines()[3:8]  # the five that moved most
        self.assertTrue(any("MemorySession::Get" in line for line in top), section)
        with open(page, encoding="utf-8") as f:
            self.assertIn("readrandom [reader]: memory against null", f.read())

    def test_matrix_profile_shows_where_the_time_moved_in_text_and_page(self) -> None:
        # kvb matrix --profile (a study of two engines on this build's kvbench): the functions
        # that moved follow the tables, and report.html draws each series' differential flame
        # graph against the base; the same page is rebuilt from the directory.
        results_dir = os.path.join(self.tmp, "results")
        p = kvb("matrix", "--kvbench", ARGS.kvbench, "--engines", "null,memory", "--workloads",
                "fillseq,readrandom", "--num", "100000", "--repeats", "1", "--no-control",
                "--profile", "--no-store", "--results-dir", results_dir)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = [os.path.join(d, f) for d, _, fs in os.walk(results_dir) for f in fs
               if f.startswith("memory.") and f.endswith(".json")][0]
        if load_json(run)["context"]["workload"]["profile"].startswith("unavailable"):
            self.skipTest("perf_event_open unavailable")
        section = p.stdout[p.stdout.index("CPU profile, readrandom [reader]"):]
        self.assertIn("A = null, B = memory", section)
        self.assertIn("MemorySession::Get", section)
        page = os.path.join(os.path.dirname(run), "report.html")
        with open(page, encoding="utf-8") as f:
            self.assertIn("readrandom [reader]: memory against null", f.read())
        # --profile is for kvbench's runs: kvbench_micro has no profiler of its own.
        p = kvb("matrix", "--presets", "x86-gcc-native", "--micro", "--profile", "--dry-run")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--profile profiles kvbench's KV runs", p.stderr)

    def test_no_profile_is_a_usage_error_for_export(self) -> None:
        out = os.path.join(self.tmp, "plain.json")
        subprocess.run([ARGS.kvbench, "--engine=null", "--benchmarks=fillseq", "--num=1000",
                        f"--json={out}", f"--db={self.tmp}/db"], check=True, capture_output=True)
        p = kvb("export", "folded", out, "--out", self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no CPU profile", p.stderr)
        self.assertEqual(load_json(out)["context"]["workload"]["profile"], "off")
        self.assertNotIn("profile", load_json(out)["results"][0])

    @unittest.skipUnless(PERF_EVENT_OPEN, "seccomp filter written for x86_64 and aarch64 only")
    def test_refused_perf_event_open_is_one_line_and_the_run_goes_on(self) -> None:
        out = os.path.join(self.tmp, "refused.json")
        p = subprocess.run([ARGS.kvbench, "--engine=memory", "--benchmarks=fillseq,readrandom",
                            "--num=20000", "--profile", f"--json={out}", f"--db={self.tmp}/db",
                            "--report_interval_seconds=0", "--perf_counters=off"],
                           capture_output=True, text=True, timeout=120,
                           preexec_fn=deny_perf_event_open)
        if p.returncode == NO_SECCOMP and not p.stdout:
            self.skipTest("no seccomp filter here (qemu-user does not install one): "
                          "perf_event_open cannot be refused")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [line for line in p.stdout.splitlines() if "unavailable" in line]
        self.assertEqual(len(lines), 1, p.stdout)
        self.assertRegex(lines[0], r"^Profile: +unavailable: cpu-clock sampling: .*EPERM.*; "
                                   r"running unprofiled$")
        self.assertIn("readrandom", p.stdout)
        doc = load_json(out)
        self.assertEqual(schema.check_kvbench(doc, full=True), [])
        self.assertTrue(doc["context"]["workload"]["profile"].startswith("unavailable: "))
        for result in doc["results"]:
            self.assertIn("EPERM", result["profile"]["unavailable"])
            self.assertEqual(result["profile"]["roles"], [])

    def test_a_synthetic_document_with_a_profile_validates(self) -> None:
        path, _ = profiled(self.tmp, "null", "null")
        doc = load_json(path)
        doc["results"][0]["profile"]["samples"] = "many"
        p = kvb("validate", write_json(os.path.join(self.tmp, "bad.json"), doc))
        self.assertEqual(p.returncode, 2)
        self.assertIn("$.results[0].profile.samples", p.stdout + p.stderr)


if __name__ == "__main__":
    kvbtest.main("kvbench")
