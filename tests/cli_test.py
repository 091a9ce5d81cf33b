#!/usr/bin/env python3
"""CLI tests: run the real kvbench binary with good and bad input.

Checks exit codes (0 success, 2 usage error, 1 runtime failure), that every error message names
the problem, and that the JSON a run writes is complete and right.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import unittest
from typing import Callable, Iterator, Optional

import kvbtest  # tests/kvbtest.py, beside this file

KVBENCH = ""
ENGINES: list[str] = []
LIBRARY_ROOT = ""
STORAGE = kvbtest.storage_engines()


def emulator(kvbench: str) -> str:
    """What emulates the CPU kvbench was built for ("" on real hardware), from --version."""
    out = subprocess.run([kvbench, "--version"], capture_output=True, text=True,
                         timeout=120).stdout
    m = re.search(r", emulated by (.+)$", out, re.M)
    return m.group(1) if m else ""


def skip_if_emulated(test: unittest.TestCase) -> None:
    e = emulator(KVBENCH)
    if e:
        test.skipTest(f"the CPU is emulated ({e}): qemu-user implements no perf_event_open (ENOSYS, which kvbench reports as the reason) and loses its sysroot across a user switch")
# The asan test preset (CMakePresets.json) sets ASAN/LSAN exitcode=86 and UBSAN exitcode=87, so
# that a sanitizer report can never pass for the exit 1 of a runtime failure. (In the combined
# ASan+UBSan runtime the exit code is one shared setting: whichever options are read last win, so
# either code may come with either report.)
SANITIZER_EXIT_CODES = {86, 87}


def check_sanitizer(returncode: int, stderr: str) -> None:
    """Fails the test, with the report, when a sanitizer ended the process."""
    if returncode in SANITIZER_EXIT_CODES:
        raise AssertionError(f"sanitizer report (kvbench exit {returncode}):\n{stderr}")


def load_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def run(args: list[str], preexec: Optional[Callable[[], None]] = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([KVBENCH, "--report_interval_seconds=0", *args], capture_output=True,
                       text=True, errors="replace", timeout=timeout, preexec_fn=preexec)
    check_sanitizer(p.returncode, p.stderr)
    return p


def start(args: list[str]) -> subprocess.Popen[str]:
    """Starts kvbench in the background; stdout is a pipe the test reads line by line."""
    return subprocess.Popen([KVBENCH, "--report_interval_seconds=0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace")


def tree_state(top: str) -> dict[str, tuple[int, int, int]]:
    """Every file and directory below `top`: relative path -> (inode, size, mtime in ns)."""
    st = os.lstat(top)
    state = {".": (st.st_ino, st.st_size, st.st_mtime_ns)}
    for d, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(d, name)
            st = os.lstat(path)
            state[os.path.relpath(path, top)] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


@contextlib.contextmanager
def stopped(pid: int) -> Iterator[None]:
    """Process `pid` stopped (SIGSTOP, every thread, waited for until /proc says so) for the
    duration, continued after."""
    os.kill(pid, signal.SIGSTOP)
    try:
        while True:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("T", "t"):
                break
            time.sleep(0.01)
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def wait_for_line(p: subprocess.Popen[str], prefix: str) -> list[str]:
    """Reads p's stdout until a line starts with `prefix`; returns the lines read."""
    assert p.stdout is not None
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"kvbench ended before printing '{prefix}': {''.join(lines)}")


def write_ack_file(path: str, kind: str, num: int, counts: list[int], seed: int = 0,
                   key_size: int = 16, value_size: int = 100, ratio: float = 0.5) -> None:
    """An ack file as a fill writes it (src/workload/ack_log.h), claiming `counts`."""
    header = struct.pack("=8sIIQQIIIId8x", b"KVBACK\0\0", 1, {"fillseq": 1, "fillrandom": 2}[kind],
                         num, seed, len(counts), key_size, value_size, 0, ratio)
    with open(path, "wb") as f:
        f.write(header + b"".join(struct.pack("=Q56x", c) for c in counts))


def finish(p: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    check_sanitizer(p.returncode, err)
    return p.returncode, out, err


def hardware_pmu_error() -> str:
    """'' if this thread can open a hardware counter (instructions), else the errno's name: the
    test's own perf_event_open(2), independent of kvbench's."""
    import ctypes
    nr = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
    if nr is None:
        return "unknown syscall number"
    attr = (ctypes.c_uint32 * 32)()  # perf_event_attr, PERF_ATTR_SIZE_VER0 = 64 bytes
    attr[0], attr[1] = 0, 64  # type PERF_TYPE_HARDWARE, size
    attr[2] = 1  # config PERF_COUNT_HW_INSTRUCTIONS
    attr[10] = 1  # flags: disabled
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(nr, ctypes.byref(attr), 0, -1, -1, 0)
    if fd >= 0:
        os.close(fd)
        return ""
    import errno as errno_module
    return errno_module.errorcode.get(ctypes.get_errno(), "?")


class CliTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvbench-cli-"

    def setUp(self) -> None:
        super().setUp()
        self.db = os.path.join(self.tmp, "db")

    def run_json(self, args: list[str],
                 name: str = "r.json") -> tuple[subprocess.CompletedProcess[str], dict]:
        """Runs kvbench with `args` and --json=<self.tmp>/<name>, asserts that it succeeds, and
        returns the process and the JSON document."""
        out = os.path.join(self.tmp, name)
        p = run([*args, f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        return p, load_json(out)

    def require_engine(self, engine: str) -> None:
        """Skips the test when this build has no `engine`."""
        if engine not in ENGINES:
            self.skipTest(f"{engine} not compiled in")

    def assertUsageError(self, args: list[str], message: str) -> None:
        p = run(args)
        self.assertEqual(p.returncode, 2, msg=f"{args}: {p.stderr}")
        self.assertIn(message, p.stderr)

    def assertRuntimeError(self, args: list[str], message: str,
                           preexec: Optional[Callable[[], None]] = None) -> str:
        p = run(args, preexec)
        self.assertEqual(p.returncode, 1, msg=f"{args}: rc={p.returncode} {p.stderr}")
        self.assertIn("kvbench: error:", p.stderr)
        self.assertIn(message, p.stderr)
        return p.stderr

    # --- good input ---------------------------------------------------------------------

    def test_canary_prints_one_json_object_and_runs_nothing(self) -> None:
        """kvbench --canary: the CPU speed reference loop on one CPU, one JSON object on one
        line. Its figures are positive; their size is a benchmark's, not a test's."""
        allowed = sorted(os.sched_getaffinity(0))
        for args, cpus in (([f"--cpu_affinity={allowed[-1]}"], {allowed[-1]}), ([], set(allowed))):
            with self.subTest(args=args):
                p = run(["--canary", f"--db={self.db}", *args])
                self.assertEqual(p.returncode, 0, p.stderr)
                lines = p.stdout.splitlines()
                self.assertEqual(len(lines), 1, p.stdout)
                c = json.loads(lines[0])
                self.assertIn(c["cpu"], cpus)
                self.assertEqual(c["pinned_by"],
                                 "--cpu_affinity" if args else "the CPU it started on")
                self.assertGreater(c["ns_per_loop"], 0)
                self.assertGreaterEqual(c["median_ns_per_loop"], c["ns_per_loop"])
                self.assertGreater(c["windows"], 1)
                self.assertGreater(c["loops_per_window"], 0)
                self.assertGreater(c["seconds"], 0)
                self.assertFalse(os.path.exists(self.db))  # nothing else ran
        if len(allowed) > 1:
            self.assertUsageError(["--canary", f"--cpu_affinity={allowed[0]},{allowed[1]}"],
                                  "--canary measures one CPU")
        outside = max(allowed) + 1
        self.assertUsageError(["--canary", f"--cpu_affinity={outside}"],
                              f"CPU {outside} is not one this process may run on")
        self.assertIn("--canary [--cpu_affinity=N]", run(["--help"]).stdout)

    def test_json_records_each_allowed_cpus_speed_at_the_start_and_the_end(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=100",
                                "--benchmarks=fillseq"])
        env = doc["context"]["environment"]
        speed = env["cpu_speed"]
        allowed = sorted(os.sched_getaffinity(0))
        self.assertEqual([c["cpu"] for c in speed["cpus"]], allowed)
        for c in speed["cpus"]:
            for key in ("start_ns_per_loop", "end_ns_per_loop", "end_over_start",
                        "start_seconds", "end_seconds"):
                self.assertGreater(c[key], 0, c)
            for when in ("start", "end"):
                self.assertGreaterEqual(c[f"{when}_median_ns_per_loop"], c[f"{when}_ns_per_loop"])
                # The wall time of all the windows: never less than the best window's.
                self.assertGreaterEqual(c[f"{when}_wall_ns_per_loop"], c[f"{when}_ns_per_loop"])
                self.assertGreater(c[f"{when}_cpu_share"], 0, c)
                self.assertLessEqual(c[f"{when}_cpu_share"], 1, c)
        self.assertEqual(speed["differs_threshold"], 0.1)
        self.assertEqual(speed["low_share_threshold"], 0.8)
        if len(allowed) > 1:
            for key in ("slowest_over_fastest_start", "slowest_over_fastest_end",
                        "wall_slowest_over_fastest_start", "wall_slowest_over_fastest_end"):
                self.assertGreaterEqual(speed[key], 1, key)
        # A finding is the noise verdict's: the run is noisy and the reason names the CPU.
        if speed["finding"]:
            self.assertTrue(env["noisy"])
            self.assertIn(speed["finding"], env["noisy_reason"])
            self.assertRegex(speed["finding"], r"^CPU \d+ ")
        self.assertEqual(p.stdout.count("CPU speed:  "), 2, p.stdout)
        self.assertRegex(p.stdout, r"CPU speed:  CPU \d+ [0-9.]+ ns/loop \(wall [0-9.]+, share "
                                   r"[0-9.]+\)")

    def test_memory_engine_fills_from_its_prefaulted_arena(self) -> None:
        """Issue 38: the memory engine's first fill paid the kernel's first-touch page faults
        (5-10x slower than its repeats). Its map's memory is mapped and touched at open: the
        fill took none from the heap beyond it."""
        _, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=20000",
                                "--benchmarks=fillseq", "--repeats=2"])
        for r in doc["results"]:
            m = r["engine_metrics"]
            self.assertGreater(m["arena_prefaulted_bytes"], 0, m)
            self.assertGreater(m["arena_used_bytes"], 20000 * 116, m)
            self.assertLessEqual(m["arena_used_bytes"], m["arena_prefaulted_bytes"], m)
            self.assertEqual(m["heap_bytes_beyond_arena"], 0, m)

    def test_version_names_compiler_flags_and_preset(self) -> None:
        p = run(["--version"])
        self.assertEqual(p.returncode, 0)
        for word in ("kvbench", "compiler:", "flags:", "preset:", "-fno-omit-frame-pointer"):
            self.assertIn(word, p.stdout)

    def test_help_lists_benchmarks_engines_and_flags(self) -> None:
        p = run(["--help"])
        self.assertEqual(p.returncode, 0)
        for word in ("fillseq", "fillrandom", "overwrite", "readrandom", "readseq", "fwdrange",
                     "fwdrangewhilewriting", "readwhilewriting", "rocksdb", "wiredtiger", "lmdb",
                     "--num", "--benchmark_write_rate_limit", "totals across threads"):
            self.assertIn(word, p.stdout)

    def test_memory_run_writes_complete_json(self) -> None:
        out = os.path.join(self.tmp, "r.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=3000", "--threads=2", "--verify",
                 "--benchmarks=fillseq,readrandom,overwrite,fwdrange,readseq", f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("reference engine", p.stdout)
        doc = load_json(out)
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["schema_version"], 1)
        self.assertTrue(doc["context"]["engine"]["reference"])
        self.assertEqual([r["benchmark"] for r in doc["results"]],
                         ["fillseq", "readrandom", "overwrite", "fwdrange", "readseq"])
        fill, read = doc["results"][0]["roles"][0], doc["results"][1]["roles"][0]
        self.assertEqual(fill["ops"], 3000)
        self.assertEqual(read["found"], 3000)
        self.assertEqual(read["not_found"], 0)
        self.assertEqual(read["threads"], 2)
        self.assertGreater(read["ops_per_sec"], 0)
        self.assertEqual(read["latency_ns"]["count"], 3000)
        self.assertFalse(os.path.exists(out + ".tmp"))
        # The environment audit: facts known or unknown with a reason, the noise of the run.
        env = doc["context"]["environment"]
        for fact in ("cpu_model", "microcode", "governor", "boost", "smt", "thp", "kernel",
                     "virtualization", "memory_available_bytes", "load_average_start",
                     "db_filesystem", "db_mount_options", "db_device"):
            self.assertIn(fact, env)
            self.assertEqual(env[fact] == "unknown", fact in env["unknown"], fact)
        self.assertEqual(env["cpu_model"], doc["context"]["cpu_model"])
        self.assertNotEqual(env["db_filesystem"], "unknown")
        during = env["during"]
        self.assertTrue(during["measured"])
        self.assertGreater(during["wall_seconds"], 0)
        self.assertIsInstance(env["noisy"], bool)
        self.assertEqual(env["noisy"], bool(env["noisy_reason"]))
        self.assertIn("Host:", p.stdout)
        self.assertIn("Noise:", p.stdout)

    def test_insertbench_suite_runs_every_step_and_checks_the_indexes(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=3000",
                                "--writes=1000", "--reads=2000",
                                "--benchmarks=insertbench"], "ib.json")
        self.assertEqual([r["benchmark"] for r in doc["results"]],
                         ["l.i0", "l.x", "l.i1", "qr100", "qp100", "qr500", "qp500", "qr1000",
                          "qp1000", "ibcheck"])
        by_name = {r["benchmark"]: r for r in doc["results"]}
        self.assertEqual(by_name["l.i0"]["roles"][0]["ops"], 3000)
        self.assertEqual(by_name["l.x"]["roles"][0]["ops"], 3000)
        self.assertEqual(by_name["l.i1"]["roles"][0]["ops"], 1000)
        check = by_name["ibcheck"]["roles"][0]
        self.assertEqual(check["not_found"], 0)       # mismatches
        self.assertEqual(check["found"], 4 * 3000)    # every row and every secondary entry
        writer = by_name["qp500"]["roles"][1]
        self.assertTrue(writer["background"])
        self.assertEqual(writer["pacing"]["target_bytes_per_sec"], 500 * (9 + 100))
        self.assertIn("paced at 500 rows/s", p.stdout)

    def test_insertbench_value_too_small_for_the_columns_fails_clearly(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=100", "--value_size=16",
                 "--benchmarks=l.i0"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("--value_size >= 24", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_every_engine_runs_the_standard_workloads(self) -> None:
        for engine in [e for e in STORAGE if e in ENGINES]:
            with self.subTest(engine=engine):
                db = os.path.join(self.tmp, engine)
                p, doc = self.run_json(
                    [f"--engine={engine}", f"--db={db}", "--num=5000", "--verify",
                     "--benchmarks=fillrandom,settle,readrandom,overwrite,fwdrange,readseq"],
                    engine + ".json")
                self.assertIn("(5000 of 5000 found)", p.stdout)
                self.assertEqual(doc["context"]["engine"]["name"], engine)
                self.assertTrue(doc["context"]["engine"]["version"])
                for r in doc["results"]:
                    for role in r["roles"]:
                        self.assertGreater(role["ops"], 0, r["benchmark"])

    def test_use_existing_db_reads_what_an_earlier_run_wrote(self) -> None:
        engine = "rocksdb" if "rocksdb" in ENGINES else "memory"
        p = run([f"--engine={engine}", f"--db={self.db}", "--num=2000", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run([f"--engine={engine}", f"--db={self.db}", "--num=2000", "--use_existing_db",
                 "--benchmarks=readrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(2000 of 2000 found)", p.stdout)

    def test_whilewriting_reports_readers_and_paced_writer_separately(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=20000",
                                "--reads=200000", "--benchmarks=fillseq,readwhilewriting",
                                "--benchmark_write_rate_limit=200000"], "w.json")
        self.assertIn("readwhilewriting [reader]", p.stdout)
        self.assertIn("readwhilewriting [writer]", p.stdout)
        self.assertIn("target 0.19 MB/s", p.stdout)
        roles = doc["results"][1]["roles"]
        self.assertEqual([r["role"] for r in roles], ["reader", "writer"])
        self.assertTrue(roles[1]["background"])
        self.assertEqual(roles[1]["pacing"]["target_bytes_per_sec"], 200000)

    def test_latency_sample_times_one_op_in_n_and_says_so(self) -> None:
        """Throughput counts every op; the histogram holds about ops/N timed ones; the JSON and
        the warnings say latency was sampled. The default times every op and says nothing."""
        counts = {}
        for n in (1, 100):
            p, doc = self.run_json(["--engine=null", f"--db={self.db}", "--num=1000",
                                    "--reads=200000", "--benchmarks=readrandom",
                                    f"--latency_sample={n}"], f"sample-{n}.json")
            role = doc["results"][0]["roles"][0]
            self.assertEqual(role["ops"], 200000)
            self.assertEqual(doc["context"]["workload"]["latency_sample"], n)
            counts[n] = role["latency_ns"]["count"]
            warnings = " ".join(w["message"] for w in doc["context"]["warnings"])
            self.assertEqual("latency is sampled: one op in 100 is timed" in warnings + p.stdout,
                             n == 100, warnings)
        self.assertEqual(counts[1], 200000)
        self.assertGreater(counts[100], 1500)  # ~2000: gaps uniform in [1, 199]
        self.assertLess(counts[100], 2500)
        p = run(["--engine=null", f"--db={self.db}", "--latency_sample=0"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--latency_sample", p.stderr)

    def test_latency_runs_op_to_op_except_for_the_paced_writer(self) -> None:
        """Every op timed: an op's latency runs from the end of the previous one (db_bench's
        --histogram), so on the null engine the latencies add up to the loop's whole time, not
        to the few ns of its empty engine calls. The paced writer's wait for its pacer is not
        part of its ops: its median write on the memory engine is far below the ~5.5 ms gap
        between writes at 20 KB/s."""
        out = os.path.join(self.tmp, "chained.json")
        p = run(["--engine=null", f"--db={self.db}", "--num=1000", "--reads=2000000",
                 "--benchmarks=readrandom", f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        role = load_json(out)["results"][0]["roles"][0]
        timed = role["latency_ns"]["mean"] * role["latency_ns"]["count"] / 1e9
        self.assertGreater(timed, 0.8 * role["seconds"], role)
        self.assertLessEqual(timed, 1.01 * role["seconds"], role)
        out = os.path.join(self.tmp, "paced.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=100000000000",
                 "--benchmarks=fillseq,readwhilewriting", "--duration=2",
                 "--benchmark_write_rate_limit=20000", f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        writer = load_json(out)["results"][1]["roles"][1]
        # About 340 writes are due in 2 s; a writer starved by a loaded machine (CI beside other
        # builds) does fewer, and 20 still make a median.
        self.assertGreater(writer["ops"], 20)
        self.assertLess(writer["latency_ns"]["p50"], 2_000_000, writer["latency_ns"])

    def paced_writer(self, target: int, name: str, interval: str = "0.5",
                     engine: str = "null") -> tuple[dict, str, list[str]]:
        """A 3 s readwhilewriting with its writer paced at `target` bytes/s and the report
        interval `interval`: the writer's role, its line, and why kvbench called the run noisy
        (empty when it did not)."""
        out = os.path.join(self.tmp, f"pace-{name}.json")
        p = run([f"--engine={engine}", f"--db={self.db}", "--num=5000", "--reads=100000000000",
                 "--benchmarks=readwhilewriting", "--duration=3",
                 f"--benchmark_write_rate_limit={target}", f"--json={out}",
                 f"--report_interval_seconds={interval}"])  # later flags override run()'s 0
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load_json(out)
        role = doc["results"][0]["roles"][1]
        env = doc["context"].get("environment", {})
        noisy = [env.get("noisy_reason", "")] if env.get("noisy") else []
        self.assertEqual(role["pacing"]["target_bytes_per_sec"], target)
        self.assertGreaterEqual(role["pacing"]["cpu_wait_seconds"], 0)
        line = next(ln for ln in p.stdout.splitlines() if "[writer]" in ln)
        return role, line, noisy

    def assertVerdictFollowsTheRule(self, role: dict, line: str) -> None:
        """docs/workloads.md: from the first write, in 1 s windows: the run delivered 99% of its
        bytes or every window 95%. The same figures, whatever the report interval."""
        pacing = role["pacing"]
        self.assertEqual(pacing["window_seconds"], 1)
        self.assertEqual(pacing["windows"], max(1, int(pacing["run_seconds"])), pacing)
        self.assertLess(pacing["first_write_delay_seconds"], 1.0, pacing)
        rule = pacing["delivered_share"] >= 0.99 or pacing["slowest_window_share"] >= 0.95
        self.assertEqual(pacing["sustained"], rule, pacing)
        self.assertIn(": sustained;" if rule else ": NOT sustained;", line)
        self.assertIn(f"{100 * pacing['delivered_share']:.1f}% of the bytes due from its first "
                      "write", line)

    def test_paced_writer_verdict_reachable_and_unreachable_targets(self) -> None:
        """The verdict, not a timing: 20 KB/s is within any machine's reach; 1 TB/s is in none's.

        On the null engine, so that only the pacer and the scheduler decide (no engine lock the
        busy reader could keep taking before the writer wakes up). On a loaded machine (CI runs
        other builds beside this test) the writer can truly miss its rate when it is not
        scheduled for a while (measured at load 12 on 2 cores: 12.6 of 20 KB/s in one run of
        three), and the verdict then rightly says so, and says that it waited for a CPU. So the
        reachable target, tried up to five times until sustained, is either sustained or missed
        with the writer waiting for a CPU (which the line names), or in a run kvbench itself
        calls noisy (other processes' or the hypervisor's use of the CPUs, which the writer's
        run-queue wait does not see: a vCPU stolen while the writer runs); the unreachable one
        never is. A miss on a quiet machine without waiting fails.
        """
        for attempt in range(5):
            role, line, noisy = self.paced_writer(20_000, f"20k-{attempt}")
            self.assertVerdictFollowsTheRule(role, line)
            pacing = role["pacing"]
            if pacing["sustained"]:
                self.assertEqual(pacing["note"], "")
                break
            waited = pacing["cpu_wait_seconds"]
            if noisy and pacing["held_back_by"] != "cpu":
                continue  # the run's WARNING says why
            self.assertEqual(pacing["held_back_by"], "cpu",
                             f"20 KB/s missed without waiting for a CPU, in a run kvbench "
                             f"did not call noisy: {pacing}")
            self.assertIn(f"it waited {waited:.2f} s of ", line)
            self.assertIn(" for a CPU: the machine was busy)", line)
        role, line, _ = self.paced_writer(1_000_000_000_000, "1t")
        self.assertFalse(role["pacing"]["sustained"])
        self.assertIn("NOT sustained", line)
        self.assertVerdictFollowsTheRule(role, line)

    def test_paced_writer_verdict_does_not_depend_on_the_report_interval(self) -> None:
        """Issue 38: with --report_interval_seconds=0.017 the verdict was the 1st percentile of
        ~17 ms intervals of a writer doing 3 writes each, and the first held its late start:
        writers that delivered 99.5% of their bytes read "NOT sustained". The same writer at
        0.017 s and at 1 s intervals reads the same, and one that delivered 99% reads
        sustained. (Not a timing: a run starved of a CPU may miss, and says why; five tries
        for a pair that both delivered 99%.)"""
        short_sustained = False
        for attempt in range(5):
            pair = [self.paced_writer(20_000, f"{interval}-{attempt}", interval)
                    for interval in ("0.017", "1")]
            for role, line, _ in pair:
                self.assertVerdictFollowsTheRule(role, line)
            short = pair[0][0]
            # Judged by its ~17 ms report intervals, this run was "NOT sustained" whenever the
            # slowest of them fell below 90%: with 3 writes an interval, nearly always.
            self.assertGreater(short["intervals"]["count"], 50)  # 176 due; fewer when loaded
            short_sustained = short_sustained or short["pacing"]["sustained"]
            if all(role["pacing"]["delivered_share"] >= 0.99 for role, _, _ in pair):
                for role, line, _ in pair:
                    self.assertTrue(role["pacing"]["sustained"], role["pacing"])
                return
        if not short_sustained:
            self.skipTest("no run in five delivered its bytes (a starved machine; each verdict "
                          "was checked against the rule above)")

    def test_paced_writer_cpu_is_its_own_threads(self) -> None:
        """Issue 38: the writer's "cpu us/op" was the process's CPU (the reader's, flat out)
        over the writer's few writes. Its own thread's comes first, the process's apart."""
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=5000",
                                "--reads=100000000000", "--benchmarks=readwhilewriting",
                                "--duration=2", "--benchmark_write_rate_limit=200000"], "cpu.json")
        cost = doc["results"][0]["roles"][1]["cost"]
        self.assertGreater(cost["thread_cpu_us_per_op"], 0)
        # A reader spinning for 2 s over a few thousand writes: more than a write's own (6.5x
        # at load 17 on 2 CPUs, where the reader got a fraction of a CPU).
        self.assertGreater(cost["cpu_user_us_per_op"] + cost["cpu_sys_us_per_op"],
                           2 * cost["thread_cpu_us_per_op"], cost)
        lines = p.stdout.splitlines()
        writer = next(i for i, ln in enumerate(lines) if "[writer]" in ln)
        cost_line = next(ln for ln in lines[writer:] if ln.startswith("    cost/op: "))
        self.assertRegex(cost_line, r"^    cost/op: own thread [0-9.]+ us, process user [0-9.]+ "
                                    r"us, process sys [0-9.]+ us, ")

    def test_verify_catches_values_written_with_another_seed(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--seed=1",
                 "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        same = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--seed=1", "--verify",
                    "--use_existing_db", "--benchmarks=readrandom,fwdrange,readseq"])
        self.assertEqual(same.returncode, 0, same.stderr)
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--num=1000", "--seed=2",
                                 "--verify", "--use_existing_db", "--benchmarks=readrandom"],
                                "differs from what --seed=2 --value_size=100 writes")

    def test_duration_ends_a_long_benchmark(self) -> None:
        start = time.monotonic()
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=1000000000000",
                 "--benchmarks=fillseq,readrandom", "--duration=1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLess(time.monotonic() - start, 30)
        self.assertIn("ignored: runs for --duration=1", p.stdout)

    def test_progress_lines_go_to_stderr(self) -> None:
        # run()'s --report_interval_seconds=0 comes first: the later 0.5 overrides it.
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=1000000000",
                 "--duration=2", "--report_interval_seconds=0.5", "--benchmarks=fillseq,readrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("... readrandom", p.stderr)
        self.assertNotIn("... readrandom", p.stdout)

    def test_repeats_keep_every_run_and_summarise(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=2000",
                                "--benchmarks=fillseq,readrandom[X3-W1]"], "rep.json")
        self.assertIn("readrandom (warm-up 1/1)", p.stdout)
        self.assertIn("readrandom (3/3)", p.stdout)
        self.assertIn("readrandom [X3]", p.stdout)
        runs = [r for r in doc["results"] if r["benchmark"] == "readrandom"]
        self.assertEqual([r["repeat"] for r in runs], [1, 2, 3])  # the warm-up is not recorded
        summary = doc["summaries"][0]
        self.assertEqual((summary["benchmark"], summary["repeats"]), ("readrandom", 3))
        rates = sorted(r["roles"][0]["ops_per_sec"] for r in runs)
        self.assertAlmostEqual(summary["ops_per_sec"]["median"], rates[1], delta=rates[1] * 1e-6)
        self.assertLessEqual(summary["ops_per_sec"]["ci95_low"], summary["ops_per_sec"]["mean"])

    def test_repeated_fill_starts_from_an_empty_database_each_time(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=1000", "--repeats=2",
                                "--benchmarks=fillrandom,readseq", "--reads=5000"], "fill.json")
        self.assertEqual([r["benchmark"] for r in doc["results"]],
                         ["fillrandom", "fillrandom", "readseq", "readseq"])

    def test_build_audit_matches_readelf_and_warns_about_engine_assertions(self) -> None:
        self.require_engine("rocksdb")
        p, doc = self.run_json(["--engine=rocksdb", f"--db={self.db}", "--num=100",
                                "--benchmarks=fillseq"], "audit.json")
        libs = {lib["name"]: lib for lib in doc["context"]["libraries"]}
        rocks = libs["rocksdb"]
        # Under emulation the binary reports paths inside the target's sysroot.
        path = LIBRARY_ROOT + rocks["path"]
        self.assertTrue(os.path.exists(path), path)
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True,
                              text=True, check=True).stdout
        # "125: 0 0 FUNC GLOBAL DEFAULT UND __assert_fail@GLIBC_2.2.5 (5)"
        expected = any(len(f) >= 8 and f[6] == "UND" and f[7].split("@")[0] == "__assert_fail"
                       for f in (line.split() for line in syms.splitlines()))
        self.assertEqual(rocks["assertions"], expected)
        warnings = " ".join(w["message"] for w in doc["context"]["warnings"])
        self.assertEqual("built with assertions enabled" in warnings, expected)
        if expected:
            self.assertIn("WARNING:    rocksdb", p.stdout)

    def test_software_counters_per_op_in_json_and_console(self) -> None:
        skip_if_emulated(self)
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=20000",
                                "--benchmarks=fillseq,readrandom"])
        self.assertEqual(p.stdout.count("counters/op: "), 2, p.stdout)
        self.assertIn("task-clock ", p.stdout)
        self.assertEqual(doc["context"]["workload"]["perf_counters"], "auto")
        for result in doc["results"]:
            c = result["roles"][0]["counters"]
            # A memory-engine op costs well over 10 ns and far under 1 ms of CPU.
            self.assertGreater(c["task_clock_ns_per_op"], 10, c)
            self.assertLess(c["task_clock_ns_per_op"], 1e6, c)
            for key in ("context_switches_per_op", "cpu_migrations_per_op",
                        "minor_faults_per_op", "major_faults_per_op"):
                self.assertGreaterEqual(c[key], 0, key)
            self.assertFalse(c["multiplexed"])
        paths = {m["path"] for m in doc["metrics"]}
        self.assertIn("counters.task_clock_ns_per_op", paths)

    def test_hardware_counters_counted_or_unavailable_with_the_reason(self) -> None:
        skip_if_emulated(self)
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=20000",
                                "--benchmarks=fillseq,readrandom"])
        error = hardware_pmu_error()
        for result in doc["results"]:
            c = result["roles"][0]["counters"]
            if error:  # no PMU (ENOENT on these VMs), or refused: said, never faked
                self.assertNotIn("instructions_per_op", c)
                self.assertNotIn("ipc", c)
                self.assertIn(f"({error})", c["unavailable"])
            else:
                self.assertNotIn("unavailable", c)
                self.assertGreater(c["instructions_per_op"], 50, c)
                self.assertGreater(c["cycles_per_op"], 0, c)
                self.assertGreater(c["ipc"], 0, c)
        # Said once on the console, in the header.
        self.assertEqual(p.stdout.count("hardware unavailable:"), 1 if error else 0, p.stdout)
        if error == "ENOENT":
            self.assertIn("no hardware PMU (ENOENT)", p.stdout)

    def test_counters_refused_by_perf_event_paranoid_say_so(self) -> None:
        skip_if_emulated(self)
        try:
            with open("/proc/sys/kernel/perf_event_paranoid") as f:
                paranoid = int(f.read())
        except (OSError, ValueError):
            self.skipTest("no perf_event_paranoid")
        if os.geteuid() != 0 or paranoid < 2 or shutil.which("setpriv") is None:
            self.skipTest("needs root (to run as nobody), setpriv and perf_event_paranoid >= 2")
        os.chmod(self.tmp, 0o777)
        out = os.path.join(self.tmp, "r.json")
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            KVBENCH, "--engine=null", f"--db={self.db}", "--num=1000",
                            "--benchmarks=fillseq", f"--json={out}"],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0 and "Permission denied" in p.stderr:
            self.skipTest(f"nobody cannot run the build: {p.stderr.strip()}")
        self.assertEqual(p.returncode, 0, p.stderr)
        c = load_json(out)["results"][0]["roles"][0]["counters"]
        self.assertIn(f"perf_event_paranoid={paranoid} refuses it", c["software_unavailable"])
        self.assertNotIn("task_clock_ns_per_op", c)

    def test_perf_counters_off_and_lists(self) -> None:
        skip_if_emulated(self)
        out = os.path.join(self.tmp, "r.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=2000", "--benchmarks=fillseq",
                 "--perf_counters=off", f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("counters/op", p.stdout)
        self.assertNotIn("counters", load_json(out)["results"][0]["roles"][0])
        p = run(["--engine=memory", f"--db={self.db}", "--num=2000", "--benchmarks=fillseq",
                 "--perf_counters=task-clock", f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        c = load_json(out)["results"][0]["roles"][0]["counters"]
        self.assertIn("task_clock_ns_per_op", c)
        self.assertNotIn("context_switches_per_op", c)
        self.assertNotIn("unavailable", c)  # no hardware event was asked for

    def test_cpu_affinity_pins_workers_and_gives_the_writer_its_own_cpu(self) -> None:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("needs two CPUs")
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=2000",
                                "--benchmarks=fillseq,readwhilewriting",
                                f"--cpu_affinity={cpus[0]},{cpus[1]}"])
        self.assertEqual(doc["context"]["workload"]["cpu_affinity"],
                         f"{cpus[0]}-{cpus[1]}" if cpus[1] == cpus[0] + 1
                         else f"{cpus[0]},{cpus[1]}")
        reader, writer = doc["results"][1]["roles"]
        self.assertEqual((reader["role"], reader["cpus"]), ("reader", [cpus[0]]))
        self.assertEqual((writer["role"], writer["cpus"]), ("writer", [cpus[1]]))

    # --- usage errors: exit 2 ---------------------------------------------------------

    def test_bad_perf_counters(self) -> None:
        self.assertUsageError(["--perf_counters=bogus"], "unknown event 'bogus'")
        p = run(["--perf_counters=bogus"])
        for event in ("instructions", "cache-misses", "task-clock", "major-faults"):
            self.assertIn(event, p.stderr)

    def test_cpu_affinity_outside_the_allowed_set(self) -> None:
        cpu = max(os.sched_getaffinity(0)) + 1  # 99 on a 2-CPU machine
        self.assertUsageError([f"--cpu_affinity=0,{cpu}"],
                              f"CPU {cpu} is not one this process may run on")
        self.assertUsageError(["--cpu_affinity=1-0"], "expected CPU numbers and ranges")

    def test_check_flags_checks_as_a_run_does_and_runs_nothing(self) -> None:
        # kvb matrix and versions ask this before their first run (docs/cli.md).
        db, out = os.path.join(self.tmp, "never-db"), os.path.join(self.tmp, "never.json")
        p = run(["--check-flags", "--engine=memory", "--benchmarks=fillseq,readrandom",
                 f"--db={db}", f"--json={out}", "--num=1000"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "kvbench: the flags are valid (nothing was run)\n")
        self.assertFalse(os.path.exists(db) or os.path.exists(out))
        # Wherever it stands among the flags; a value out of range is the run's own usage error.
        self.assertUsageError(["--engine=memory", "--check-flags", "--threads=0"],
                              "--threads must be 1..1024, got 0")
        self.assertUsageError(["--check-flags", "--benchmarks=nosuch"], "unknown benchmark")
        self.assertUsageError(["--check-flags", "--key_size=2", "--num=70000"],
                              "2 bytes hold at most 65536 keys")

    def test_unknown_flag(self) -> None:
        self.assertUsageError(["--bogus=1"], "unknown flag --bogus")

    def test_positional_argument(self) -> None:
        self.assertUsageError(["fillseq"], "unexpected argument 'fillseq'")

    def test_unknown_benchmark(self) -> None:
        self.assertUsageError(["--benchmarks=fillseq,nosuch"], "unknown benchmark 'nosuch'")

    def test_unknown_engine(self) -> None:
        self.assertUsageError(["--engine=leveldb"], "unknown engine 'leveldb'")

    def test_engine_not_compiled_in(self) -> None:
        missing = [e for e in STORAGE if e not in ENGINES]
        if not missing:
            self.skipTest("every engine is compiled in")
        self.assertUsageError([f"--engine={missing[0]}"], "is not compiled into this kvbench")

    def test_malformed_repeat_syntax(self) -> None:
        self.assertUsageError(["--benchmarks=readrandom[X0]"], "malformed repeat syntax")
        self.assertUsageError(["--benchmarks=readrandom[Y2]"], "malformed repeat syntax")
        self.assertUsageError(["--repeats=0"], "--repeats must be 1..1000, got 0")

    def test_non_positive_num(self) -> None:
        self.assertUsageError(["--num=0"], "--num must be 1..1000000000000, got 0")
        self.assertUsageError(["--num=-5"], "--num must be 1..1000000000000, got -5")

    def test_malformed_number(self) -> None:
        self.assertUsageError(["--num=abc"], "invalid value 'abc' for --num")

    def test_key_size_too_small_for_num(self) -> None:
        self.assertUsageError(["--key_size=2", "--num=70000"], "--key_size=2 is too small")

    def test_empty_db(self) -> None:
        self.assertUsageError(["--db="], "--db is empty")

    def test_bad_compression_name(self) -> None:
        self.assertUsageError(["--compression=brotli"], "unknown --compression 'brotli'")

    # --- runtime failures: exit 1 ---------------------------------------------------------

    def test_db_path_that_cannot_be_a_directory(self) -> None:
        f = os.path.join(self.tmp, "file")
        open(f, "w").close()
        self.assertRuntimeError(["--engine=memory", f"--db={f}/sub", "--num=10"], "--db")

    def test_db_not_a_directory(self) -> None:
        f = os.path.join(self.tmp, "file")
        open(f, "w").close()
        self.assertRuntimeError(["--engine=memory", f"--db={f}", "--num=10"],
                                "is not a directory")

    def test_refuses_to_empty_a_foreign_directory(self) -> None:
        os.makedirs(self.db)
        precious = os.path.join(self.db, "thesis.tex")
        open(precious, "w").write("years of work")
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--num=10"],
                                "refusing to delete")
        self.assertTrue(os.path.exists(precious))

    def test_use_existing_db_without_database(self) -> None:
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--use_existing_db",
                                 "--benchmarks=readrandom"], "no kvbench database")

    def test_use_existing_db_of_another_engine(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=10", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRuntimeError(["--engine=null", f"--db={self.db}", "--use_existing_db",
                                 "--benchmarks=readrandom"], "written by engine 'memory'")

    def test_run_refused_before_its_first_benchmark_leaves_the_json_as_it_was(self) -> None:
        """Issue 38: a refused run replaced an older result at --json with an empty document."""
        out = os.path.join(self.tmp, "kept.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=100", "--benchmarks=fillseq",
                 f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, "rb") as f:
            before = f.read()
        foreign = os.path.join(self.tmp, "foreign")
        os.makedirs(foreign)
        open(os.path.join(foreign, "thesis.tex"), "w").write("years of work")
        for args, message in (
                ([f"--db={foreign}", "--num=10"], "refusing to delete"),  # not kvbench's
                ([f"--db={self.db}-none", "--use_existing_db", "--benchmarks=readrandom"],
                 "no kvbench database")):
            with self.subTest(refused=message):
                self.assertRuntimeError(["--engine=memory", *args, f"--json={out}"], message)
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), before)  # byte for byte
                self.assertFalse(os.path.exists(out + ".tmp"))
        absent = os.path.join(self.tmp, "absent.json")
        self.assertRuntimeError(["--engine=memory", f"--db={foreign}", "--num=10",
                                 f"--json={absent}"], "refusing to delete")
        self.assertFalse(os.path.exists(absent))  # nothing to say it in but stderr

    def test_failure_after_a_result_leaves_incomplete_json(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=100", "--seed=1",
                 "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        out = os.path.join(self.tmp, "fail.json")
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--num=100", "--seed=2",
                                 "--use_existing_db", "--verify", "--benchmarks=settle,readseq",
                                 f"--json={out}"], "differs from what --seed=2")
        doc = load_json(out)
        self.assertFalse(doc["complete"])
        self.assertIn("differs from what --seed=2", doc["error"])
        self.assertEqual([r["benchmark"] for r in doc["results"]], ["settle"])

    def test_engine_rejects_bad_engine_options_with_its_own_message(self) -> None:
        cases = {"rocksdb": ("no_such_rocksdb_option=1", "rocksdb"),
                 "wiredtiger": ("no_such_wt_key=1", "wiredtiger"),
                 "lmdb": ("no_such_lmdb_key=1", "no_such_lmdb_key")}
        for engine, (opts, message) in cases.items():
            if engine not in ENGINES:
                continue
            with self.subTest(engine=engine):
                self.assertRuntimeError([f"--engine={engine}", f"--db={self.db}", "--num=10",
                                         f"--engine_options={opts}"], message)

    def test_unsupported_compression_is_a_clear_error(self) -> None:
        self.require_engine("lmdb")
        self.assertRuntimeError(["--engine=lmdb", f"--db={self.db}", "--num=10",
                                 "--compression=zstd"], "lmdb does not compress")

    def test_full_disk_reports_the_engine_error(self) -> None:
        """A write limit (RLIMIT_FSIZE, 2 MiB) stands in for a full disk: writes fail with EFBIG."""
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))
        for engine in ["memory"] + [e for e in STORAGE if e in ENGINES]:
            with self.subTest(engine=engine):
                db = os.path.join(self.tmp, "full-" + engine)
                err = self.assertRuntimeError(
                    [f"--engine={engine}", f"--db={db}", "--num=400000", "--value_size=200",
                     "--benchmarks=fillseq,settle", "--cache_size=1048576"], "", limit)
                self.assertRegex(err, r"(?i)file too large|too large|no space|EFBIG|error")

    # --- issue 10: reliability -------------------------------------------------------------

    def test_second_run_on_a_locked_db_fails_and_leaves_it_alone(self) -> None:
        for engine in ["memory", "null"] + [e for e in STORAGE if e in ENGINES]:
            with self.subTest(engine=engine):
                db = os.path.join(self.tmp, "locked-" + engine)
                first = start([f"--engine={engine}", f"--db={db}", "--num=1000",
                               "--reads=1000000000000", "--duration=60",
                               "--benchmarks=fillseq,readrandom"])
                try:
                    wait_for_line(first, "fillseq")
                    # The lock holder keeps changing its directory (WiredTiger pre-allocates
                    # log files): stopped, every change from here on is the second run's.
                    with stopped(first.pid):
                        before = tree_state(db)
                        p = run([f"--engine={engine}", f"--db={db}", "--num=100",
                                 "--benchmarks=fillseq,readrandom"])
                        after = tree_state(db)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn(f"is in use by another kvbench (pid {first.pid})", p.stderr)
                    self.assertNotIn("fillseq", p.stdout)
                    self.assertEqual(after, before, "the refused run created, removed or "
                                     "changed files of the locked database")
                finally:
                    first.kill()
                    first.communicate()
                # The lock dies with its holder: the directory is usable again.
                p = run([f"--engine={engine}", f"--db={db}", "--num=100", "--benchmarks=fillseq"])
                self.assertEqual(p.returncode, 0, p.stderr)

    def test_default_db_is_removed_after_the_run_unless_keep_db(self) -> None:
        p, doc = self.run_json(["--engine=null", "--num=10", "--benchmarks=fillseq"])
        db = doc["context"]["workload"]["db"]
        self.assertIn("removed at the end", p.stdout)
        self.assertFalse(os.path.exists(db), f"{db} is left behind")
        try:
            p = run(["--engine=null", "--num=10", "--benchmarks=fillseq", "--keep_db"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.isdir(db), "--keep_db keeps it")
            # Reading a kept database does not remove it either.
            p = run(["--engine=null", "--num=10", "--benchmarks=readrandom", "--use_existing_db"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(os.path.isdir(db), "--use_existing_db reads it and keeps it")
        finally:
            shutil.rmtree(db, ignore_errors=True)
        p = run(["--engine=null", "--num=10", "--benchmarks=readrandom", "--use_existing_db"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("the default --db is removed after each run unless --keep_db", p.stderr)

    def test_reading_an_empty_database_warns_with_the_way_out(self) -> None:
        for bench in ("readrandom", "fwdrange", "readseq"):
            with self.subTest(benchmark=bench):
                p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=100",
                                        f"--benchmarks={bench}"], f"{bench}.json")
                self.assertIn(f"WARNING: {bench}: ", p.stdout)
                self.assertIn("the database is empty", p.stdout)
                self.assertIn(f"run fillseq first (--benchmarks=fillseq,{bench}) or pass "
                              "--use_existing_db", p.stdout)
                warnings = [w["message"] for w in doc["context"]["warnings"]]
                self.assertTrue(any("the database is empty" in w for w in warnings), warnings)
        # After a fill, or on a database that has the keys, nothing to warn about.
        p = run(["--engine=memory", f"--db={self.db}", "--num=100",
                 "--benchmarks=fillseq,readrandom"])
        self.assertNotIn("the database is empty", p.stdout)
        p = run(["--engine=memory", f"--db={self.db}", "--num=100", "--use_existing_db",
                 "--benchmarks=readrandom"])
        # (A loaded machine may add its own noise warning for readrandom: not this one.)
        self.assertNotIn("the database is empty", p.stdout)
        self.assertNotIn("found: the database at", p.stdout)
        self.assertIn("(100 of 100 found)", p.stdout)
        # Another key size looks for keys the database does not have.
        p = run(["--engine=memory", f"--db={self.db}", "--num=100", "--use_existing_db",
                 "--key_size=8", "--benchmarks=readrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("readrandom: 0 of 100 found: the database at", p.stdout)
        self.assertIn("has none of the keys 0..99 of --key_size=8", p.stdout)
        # A larger --num than the fill's finds some: that warns too, with the share found.
        for bench in ("readrandom", "fwdrange"):
            p = run(["--engine=memory", f"--db={self.db}", "--num=200", "--use_existing_db",
                     "--reads=2000", f"--benchmarks={bench}"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertRegex(p.stdout, bench + r": \d+ of 2000 found \(\d+%\): the database at "
                             r".* lacks some of the keys 0\.\.199 of --key_size=16; was it "
                             r"filled with a smaller --num\?")

    def test_named_db_is_kept(self) -> None:
        p = run(["--engine=null", f"--db={self.db}", "--num=10", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.isdir(self.db))

    def test_lock_file_does_not_make_a_directory_foreign_or_count_in_size(self) -> None:
        p, doc = self.run_json(["--engine=null", f"--db={self.db}", "--num=10",
                                "--benchmarks=fillseq"], "n.json")
        size = doc["results"][0]["db_size_bytes"]
        markers = sum(os.stat(os.path.join(self.db, f)).st_blocks * 512
                      for f in os.listdir(self.db) if not f.startswith(".kvbench.lock"))
        self.assertEqual(size, markers)
        shutil.rmtree(self.db)
        os.makedirs(self.db)
        with open(os.path.join(self.db, ".kvbench.lock"), "w") as f:
            f.write("12345\n")  # a stale lock file: nobody holds the lock
        p = run(["--engine=memory", f"--db={self.db}", "--num=10", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_paced_writer_stops_at_the_deadline_and_when_readers_finish(self) -> None:
        cases = {"duration": ["--duration=2", "--reads=1000000000000"],
                 # Enough reads that the writer is surely waiting for its second write.
                 "readers done": ["--reads=500000"]}
        for name, extra in cases.items():
            with self.subTest(case=name):
                begin = time.monotonic()
                p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--value_size=4000",
                         "--benchmarks=fillseq,readwhilewriting",
                         "--benchmark_write_rate_limit=1", *extra], timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertLess(time.monotonic() - begin, 10)  # not the 4016 s one write is due
                self.assertIn("readwhilewriting [writer]", p.stdout)

    def test_unwritable_json_path_fails_before_the_first_benchmark(self) -> None:
        out = os.path.join(self.tmp, "no", "such", "dir", "r.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=10", "--benchmarks=fillseq",
                 f"--json={out}"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"kvbench: error: cannot write {out}.tmp", p.stderr)
        self.assertNotIn("fillseq", p.stdout)  # found before the run, not after it

    def test_json_path_that_is_a_directory_is_a_usage_error(self) -> None:
        self.assertUsageError(["--engine=memory", f"--db={self.db}", f"--json={self.tmp}"],
                              "is a directory")
        self.assertFalse(os.path.exists(self.tmp + ".tmp"))
        self.assertFalse(os.path.exists(self.db))

    def test_signals_keep_finished_results_and_exit_128_plus_signal(self) -> None:
        for sig, code, name in ((signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")):
            with self.subTest(signal=name):
                out = os.path.join(self.tmp, name + ".json")
                p = start(["--engine=memory", f"--db={self.db}", "--num=1000",
                           "--reads=1000000000000", "--benchmarks=fillseq,readrandom",
                           f"--json={out}"])
                try:
                    wait_for_line(p, "fillseq")
                    time.sleep(0.3)  # into readrandom
                    p.send_signal(sig)
                    rc, _, err = finish(p, timeout=30)
                finally:
                    p.kill()
                self.assertEqual(rc, code, err)
                self.assertIn(f"interrupted by {name}", err)
                doc = load_json(out)
                self.assertFalse(doc["complete"])
                self.assertIn(f"interrupted by {name}", doc["error"])
                self.assertEqual([r["benchmark"] for r in doc["results"]], ["fillseq"])

    def test_killed_run_does_not_leave_an_older_complete_json_in_place(self) -> None:
        out = os.path.join(self.tmp, "r.json")
        p = run(["--engine=memory", f"--db={self.db}", "--num=10", "--benchmarks=fillseq",
                 f"--json={out}"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(load_json(out)["complete"])
        p2 = start(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=1000000000000",
                    "--benchmarks=fillseq,readrandom", f"--json={out}"])
        wait_for_line(p2, "fillseq")
        # Written once the run has its first result: the console's line comes just before.
        deadline = time.monotonic() + 30
        while load_json(out)["complete"] and time.monotonic() < deadline:
            time.sleep(0.05)
        p2.send_signal(signal.SIGKILL)
        p2.communicate()
        doc = load_json(out)
        self.assertFalse(doc["complete"])
        self.assertIn(f"did not finish (kvbench pid {p2.pid}", doc["error"])
        self.assertIn("--reads=1000000000000", doc["context"]["command_line"])

    def test_counts_and_intervals_out_of_range_are_usage_errors(self) -> None:
        cases = [
            (["--benchmarks=readrandom[X3000000000]"], "out of range in 'readrandom[X3000000000]'"),
            (["--benchmarks=readrandom[X4294967298]"], "out of range"),
            (["--benchmarks=fillseq[W2147483647]"], "out of range"),
            (["--benchmarks=fillseq[X1000-W1000]"], "at most 1024"),
            (["--repeats=2147483647"], "--repeats must be 1..1000"),
            (["--repeats=99999999999"], "invalid value '99999999999' for --repeats (expects int32)"),
            (["--warmups=2147483647"], "--warmups must be 0..1000"),
            (["--report_interval_seconds=1e10"], "--report_interval_seconds must be 0"),
            (["--report_interval_seconds=inf"], "--report_interval_seconds must be 0"),
            (["--report_interval_seconds=nan"], "--report_interval_seconds must be 0"),
            (["--report_interval_seconds=0.0001"], "--report_interval_seconds must be 0"),
            (["--duration=2147483647"], "--duration must be 0..2592000"),
            (["--num=10000000000000"], "--num must be 1..1000000000000"),
            (["--compression_ratio=0"], "--compression_ratio must be (0, 1], got 0"),
            (["--cache_size=0"], "--cache_size must be >= 1, got 0"),
            (["--seed=-1"], "invalid value '-1' for --seed (expects uint64)"),
            (["--reads=10000000000000000"], "--reads must be"),
            (["--writes=10000000000000000"], "--writes must be"),
            (["--num=1000000000000", "--value_size=67108864", "--key_size=8"], "too large"),
            (["--seek_nexts=2000000"], "--seek_nexts must be 0..1000000"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                # Small defaults, so that a kvbench that accepts the bad value ends soon.
                self.assertUsageError(["--engine=memory", f"--db={self.db}", "--num=10",
                                       "--benchmarks=fillseq", "--duration=5", *args], message)

    def test_invalid_utf8_in_a_path_gives_valid_json(self) -> None:
        out = os.path.join(self.tmp, "u.json")
        db = os.fsencode(self.tmp) + b"/bad\xff\xc3(db"
        p = subprocess.run([KVBENCH, "--report_interval_seconds=0", "--engine=null",
                            b"--db=" + db, "--num=10", "--benchmarks=fillseq", f"--json={out}"],
                           capture_output=True)
        check_sanitizer(p.returncode, p.stderr.decode(errors="replace"))
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load_json(out)  # strict UTF-8
        self.assertTrue(doc["context"]["workload"]["db"].endswith("/bad\ufffd\ufffd(db"),
                        doc["context"]["workload"]["db"])

    def test_readseq_stops_at_the_end_of_the_data(self) -> None:
        p, doc = self.run_json(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=5000",
                                "--benchmarks=fillseq,readseq"], "seq.json")
        self.assertIn("(1000 of 1000 found)", p.stdout)
        role = doc["results"][1]["roles"][0]
        self.assertEqual((role["ops"], role["entries"], role["found"]), (1000, 1000, 1000))

    def test_progress_shows_no_op_percentage_when_the_duration_decides(self) -> None:
        # run()'s --report_interval_seconds=0 comes first: the later 0.5 overrides it.
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--reads=10",
                 "--duration=2", "--report_interval_seconds=0.5", "--benchmarks=fillseq,readrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [line for line in p.stderr.splitlines() if line.startswith("... readrandom")]
        self.assertTrue(lines, p.stderr)
        for line in lines:
            self.assertIn("% of duration", line)
            self.assertNotIn("% of ops", line)

    def test_malformed_benchmark_lists(self) -> None:
        self.assertUsageError(["--benchmarks=fillseq,,readrandom"], "empty item in --benchmarks")
        self.assertUsageError(["--benchmarks=fillseq,"], "empty item in --benchmarks")
        self.assertUsageError(["--benchmarks=readrandom[X+2]"], "malformed repeat syntax")
        self.assertUsageError(["--benchmarks=readrandom[X 2]"], "malformed repeat syntax")

    def test_key_size_above_the_engine_limit_is_a_usage_error(self) -> None:
        self.require_engine("lmdb")
        self.assertUsageError(["--engine=lmdb", f"--db={self.db}", "--key_size=1000"],
                              "--key_size=1000 is larger than lmdb's maximum key size (511 bytes)")
        self.assertFalse(os.path.exists(self.db))

    def test_wiredtiger_rejects_a_malformed_config_string(self) -> None:
        self.require_engine("wiredtiger")
        self.assertRuntimeError(["--engine=wiredtiger", f"--db={self.db}", "--num=10",
                                 "--engine_options=)("], "--engine_options")

    def test_reference_engines_refuse_options_they_would_ignore(self) -> None:
        for engine in ("memory", "null"):
            with self.subTest(engine=engine):
                self.assertUsageError([f"--engine={engine}", "--engine_options=x=1"],
                                      f"the {engine} engine takes no --engine_options")
                self.assertUsageError([f"--engine={engine}", "--compression=zstd"],
                                      f"the {engine} engine does not compress")

    # --- crash consistency: --ack_file and verifyacked ----------------------------------------

    def test_verifyacked_finds_every_write_of_a_finished_fill(self) -> None:
        ack = os.path.join(self.tmp, "acks")
        for engine in ["memory"] + [e for e in STORAGE if e in ENGINES]:
            for fill in ("fillseq", "fillrandom"):
                with self.subTest(engine=engine, fill=fill):
                    flags = [f"--engine={engine}", f"--db={self.db}-{engine}", "--num=3000",
                             "--threads=2", "--seed=5", f"--ack_file={ack}"]
                    p = run([*flags, f"--benchmarks={fill}"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    p = run([*flags, "--use_existing_db", "--benchmarks=verifyacked"])
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn("(3000 of 3000 found)", p.stdout)
                    self.assertIn("3000 acknowledged writes total over 2 threads", p.stdout)
        # In one run: the fill's file is read back, as a later run would read it.
        p = run(["--engine=memory", f"--db={self.db}", "--num=3000", f"--ack_file={ack}",
                 "--benchmarks=fillrandom,verifyacked"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(3000 of 3000 found)", p.stdout)

    def test_verifyacked_reports_lost_writes_and_the_first_lost_key(self) -> None:
        engine = "rocksdb" if "rocksdb" in ENGINES else "memory"
        p = run([f"--engine={engine}", f"--db={self.db}", "--num=600", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        # Claims keys 0..499 (thread 0) and 500..799 (thread 1) of a 2-thread fillseq of 1000;
        # the database holds 0..599.
        ack = os.path.join(self.tmp, "acks")
        write_ack_file(ack, "fillseq", 1000, [500, 300])
        out = os.path.join(self.tmp, "v.json")
        p = run([f"--engine={engine}", f"--db={self.db}", "--num=1000", "--threads=2",
                 f"--ack_file={ack}", "--use_existing_db", "--benchmarks=verifyacked",
                 f"--json={out}"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("(600 of 800 found)", p.stdout)
        self.assertIn("kvbench: error: verifyacked: 200 of 800 acknowledged writes lost "
                      "(first lost key 600)", p.stderr)
        doc = load_json(out)
        self.assertFalse(doc["complete"])
        self.assertIn("200 of 800 acknowledged writes lost", doc["error"])
        self.assertEqual(doc["results"][0]["roles"][0]["not_found"], 200)

    def test_verifyacked_with_the_ack_file_of_another_database_loses_writes(self) -> None:
        ack = os.path.join(self.tmp, "acks")
        p = run(["--engine=memory", f"--db={self.db}-a", "--num=2000", f"--ack_file={ack}",
                 "--benchmarks=fillrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(["--engine=memory", f"--db={self.db}-b", "--num=1000", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(["--engine=memory", f"--db={self.db}-b", "--num=2000", f"--ack_file={ack}",
                 "--use_existing_db", "--benchmarks=verifyacked"])
        self.assertEqual(p.returncode, 1, p.stderr)
        # Keys 1000..1999 are not in b: every one of them is a lost write.
        self.assertIn("verifyacked: 1000 of 2000 acknowledged writes lost", p.stderr)

    def test_verifyacked_calls_a_wrong_value_corruption(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--seed=1",
                 "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        ack = os.path.join(self.tmp, "acks")
        write_ack_file(ack, "fillseq", 1000, [10], seed=2)
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--num=1000", "--seed=2",
                                 f"--ack_file={ack}", "--use_existing_db",
                                 "--benchmarks=verifyacked"],
                                "Corruption: the value of acknowledged key 0 (100 bytes) differs "
                                "from what --seed=2 --value_size=100 writes for it: corrupted")

    def test_verifyacked_needs_the_flags_of_the_fill(self) -> None:
        ack = os.path.join(self.tmp, "acks")
        p = run(["--engine=memory", f"--db={self.db}", "--num=2000", "--threads=2",
                 f"--ack_file={ack}", "--benchmarks=fillrandom"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRuntimeError(["--engine=memory", f"--db={self.db}", "--num=1000",
                                 "--value_size=50", f"--ack_file={ack}", "--use_existing_db",
                                 "--benchmarks=verifyacked"],
                                f"--ack_file {ack} was written by fillrandom with --num=2000 "
                                "(this run: 1000), --threads=2 (this run: 1), --value_size=100 "
                                "(this run: 50); run verifyacked with the flags of the fill")

    def test_verifyacked_refuses_what_is_not_an_ack_file_of_a_fill(self) -> None:
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        ack = os.path.join(self.tmp, "acks")
        verify = ["--engine=memory", f"--db={self.db}", "--num=1000", "--threads=2",
                  f"--ack_file={ack}", "--use_existing_db", "--benchmarks=verifyacked"]
        self.assertRuntimeError(verify, f"--ack_file: cannot open {ack}: No such file")
        with open(ack, "w") as f:
            f.write("{}\n")
        self.assertRuntimeError(verify, f"--ack_file {ack} is not a kvbench ack file")
        write_ack_file(ack, "fillseq", 1000, [500, 501])  # more than thread 1's 500 keys
        self.assertRuntimeError(verify, "thread 1 claims 501 acknowledged writes, more than its "
                                        "share of 500 keys")

    def test_ack_file_usage_errors(self) -> None:
        ack = os.path.join(self.tmp, "acks")
        self.assertUsageError(["--engine=memory", f"--db={self.db}", "--use_existing_db",
                               "--benchmarks=verifyacked"], "verifyacked needs --ack_file")
        self.assertUsageError(["--engine=memory", f"--db={self.db}", f"--ack_file={ack}",
                               "--benchmarks=verifyacked"],
                              "verifyacked reads what a fill wrote: add --use_existing_db")
        self.assertUsageError(["--engine=memory", f"--db={self.db}", f"--ack_file={ack}",
                               "--benchmarks=readrandom"],
                              "--ack_file is only used by fillseq, fillrandom and verifyacked")
        self.assertUsageError(["--engine=memory", f"--db={self.db}",
                               f"--ack_file={self.db}/acks", "--benchmarks=fillseq"],
                              "is inside --db=")
        self.assertUsageError(["--engine=memory", f"--db={self.db}", f"--ack_file={self.tmp}",
                               "--benchmarks=fillseq"], "is a directory")
        self.assertFalse(os.path.exists(self.db))
        p = run(["--help"])
        self.assertIn("verifyacked", p.stdout)
        self.assertIn("--ack_file", p.stdout)

    def test_files_that_name_one_file_or_lie_in_the_database_are_usage_errors(self) -> None:
        """--json, --ack_file, the .hgrm files and --db are compared by the file each names (a
        link, a hard link, ./ and d/.. count): a collision is exit 2 before anything runs, and
        the ack log of a fill is left as it was (kvbench --ack_file=F --json=F replaced it)."""
        ack = os.path.join(self.tmp, "acks")
        p = run(["--engine=memory", f"--db={self.db}", "--num=1000", f"--ack_file={ack}",
                 "--benchmarks=fillseq"])
        self.assertEqual(p.returncode, 0, p.stderr)
        os.symlink(ack, os.path.join(self.tmp, "link"))
        os.link(ack, os.path.join(self.tmp, "hard"))
        os.mkdir(os.path.join(self.tmp, "d"))
        fill = ["--engine=memory", f"--db={self.db}", "--num=1000", "--benchmarks=fillseq"]
        verify = ["--engine=memory", f"--db={self.db}", "--num=1000", "--use_existing_db",
                  "--benchmarks=verifyacked", f"--ack_file={ack}"]
        cases = [([*fill, f"--ack_file={ack}", f"--json={ack}"],
                  f"--json={ack} names the same file as --ack_file={ack}")]
        for name in ("link", "hard", "./acks", "d/../acks"):
            json_path = os.path.join(self.tmp, name)
            cases += [([*fill, f"--ack_file={ack}", f"--json={json_path}"],
                       f"--json={json_path} names the same file as --ack_file={ack}"),
                      ([*verify, f"--json={json_path}"],
                       f"--json={json_path} names the same file as --ack_file={ack}")]
        new = os.path.join(self.tmp, "new")
        cases += [
            ([*fill, f"--ack_file={new}", f"--json={self.tmp}/d/../new"],
             "names the same file as --ack_file="),
            ([*fill, f"--json={self.db}/sub/r.json"], "is inside --db="),
            (["--engine=memory", f"--db={new}", f"--json={self.tmp}/d/../new"],
             f"--json={self.tmp}/d/../new names the database, --db={new}"),
            ([*fill, f"--hgrm_prefix={self.db}/h"], f"--hgrm_prefix={self.db}/h is inside --db="),
            ([*fill, f"--hgrm_prefix={self.tmp}/h", f"--json={self.tmp}/h.fillseq.writer.hgrm"],
             f"is one of the files --hgrm_prefix={self.tmp}/h writes"),
            ([*fill, f"--hgrm_prefix={self.tmp}/h", f"--ack_file={self.tmp}/d/../h.x.hgrm"],
             f"is one of the files --hgrm_prefix={self.tmp}/h writes"),
        ]
        before = tree_state(self.tmp)
        with open(ack, "rb") as f:
            acks = f.read()
        for args, message in cases:
            with self.subTest(args=args):
                self.assertUsageError(args, message)
                self.assertEqual(tree_state(self.tmp), before)
        with open(ack, "rb") as f:
            self.assertEqual(f.read(), acks)
        self.assertEqual(run(verify).returncode, 0)  # the fill's log still verifies

    def test_a_killed_fill_leaves_its_acknowledged_counts(self) -> None:
        ack = os.path.join(self.tmp, "acks")
        write_ack_file(ack, "fillseq", 10, [10])  # an older file: replaced, never read
        p = start(["--engine=memory", f"--db={self.db}", "--num=100000000", "--threads=2",
                   f"--ack_file={ack}", "--benchmarks=fillseq"])
        try:
            deadline = time.monotonic() + 30
            counts = [0]
            while time.monotonic() < deadline and (len(counts) != 2 or min(counts) == 0):
                time.sleep(0.05)
                try:  # the run replaces the older file before it starts writing
                    with open(ack, "rb") as f:
                        data = f.read()
                except FileNotFoundError:
                    continue
                counts = [struct.unpack_from("=Q", data, 64 + 64 * t)[0]
                          for t in range((len(data) - 64) // 64)]
        finally:
            p.send_signal(signal.SIGKILL)
            p.communicate()
        with open(ack, "rb") as f:
            data = f.read()
        self.assertEqual(len(data), 64 + 2 * 64)
        after = [struct.unpack_from("=Q", data, 64 + 64 * t)[0] for t in range(2)]
        self.assertTrue(all(0 < c < 50000000 for c in after), after)
        self.assertTrue(all(a >= c for a, c in zip(after, counts)), (after, counts))


class FlagTableTest(unittest.TestCase):
    """--help prints the flag table; docs/cli.md documents the same flags with the same types,
    defaults, ranges and units."""

    HELP_LINE = re.compile(r'^  --(\w+) \((\w+), default ("[^"]*"|\S+?)'
                           r'(?:, (?:range|one of) (.+?))?(?:, in ([^,()]+))?\)$')

    def help_table(self) -> dict[str, tuple[str, str, str, str]]:
        p = run(["--help"])
        self.assertEqual(p.returncode, 0, p.stderr)
        table = {}
        for line in p.stdout.splitlines():
            m = self.HELP_LINE.match(line)
            if m:
                name, typ, default, rng, unit = m.groups()
                table[name] = (typ, default.strip('"'), rng or "", unit or "")
        return table

    @staticmethod
    def docs_table() -> dict[str, tuple[str, str, str, str]]:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "cli.md")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("## Flags"):]
        table = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 5 and re.fullmatch(r"`--\w+`", cells[0]):
                name = cells[0].strip("`")[2:]
                table[name] = (cells[1], cells[2].strip("`"), cells[3].strip("`"), cells[4])
        return table

    def test_every_flag_is_documented_with_its_range(self) -> None:
        help_table, docs = self.help_table(), self.docs_table()
        self.assertGreater(len(help_table), 20, "the --help lines no longer parse")
        self.assertEqual(sorted(help_table), sorted(docs), "flags in --help vs docs/cli.md")
        for name, row in help_table.items():
            with self.subTest(flag=name):
                self.assertEqual(row, docs[name], "(type, default, range, unit)")

    def test_each_syntax_sets_a_flag(self) -> None:
        for args in (["--num=10"], ["--num", "10"], ["-num=10"]):
            with self.subTest(args=args):
                p = run([*args, "--engine=null", "--benchmarks=fillseq", "--keep_db=false"])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("10 operations", p.stdout)
        p = run(["--engine=null", "--num=10", "--benchmarks=fillseq", "--verify", "--noverify",
                 "--histogram=yes"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("p75", p.stdout)
        self.assertUsageError_(["--verify=maybe"], "invalid value 'maybe' for --verify (expects bool)")
        self.assertUsageError_(["--num"], "flag --num needs a value")

    def assertUsageError_(self, args: list[str], message: str) -> None:
        p = run(args)
        self.assertEqual(p.returncode, 2, msg=f"{args}: {p.stderr}")
        self.assertIn(message, p.stderr)


def main() -> None:
    global KVBENCH, ENGINES, LIBRARY_ROOT
    parser = argparse.ArgumentParser()
    parser.add_argument("--kvbench", required=True)
    parser.add_argument("--engines", default="", help="engines compiled in, ;-separated")
    parser.add_argument("--library-root", default="",
                        help="where the binary's library paths are on this machine (a "
                             "cross build's sysroot when it runs under emulation)")
    args, rest = parser.parse_known_args()
    KVBENCH = args.kvbench
    LIBRARY_ROOT = args.library_root.rstrip("/")
    ENGINES = [e.lower() for e in args.engines.replace(",", ";").split(";") if e]
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
