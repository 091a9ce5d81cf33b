"""Instruction counts from valgrind's callgrind: the one mechanism behind --instructions of kvb
matrix, versions and bisect, and kvb dbbench instructions (its files read: core/callgrind_out).
Instructions are not time (cache misses, mispredictions, vector width; callgrind's CPU is
simulated, 20-100x slower), but they are deterministic: the same binary and input give the same
count whatever the machine does. valgrind 3.19 cannot execute AVX-512 instructions: a native
build on an AVX-512 host is refused up front (exit 2, naming the portable presets), and SIGILL
is recognised should it happen anyway.
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
from typing import Any, Sequence

from kvbtools.core import results
from kvbtools.core.callgrind_out import (KV_METRICS, annotate_kv, block_bytes, kv_windows,
                                         micro_dumps, per_iteration)
from kvbtools.core.errors import RunError, UsageError
from kvbtools.core import host
from kvbtools.core.host import host_arch
from kvbtools.core import presets

CAVEAT = ("instructions are not time: equal counts can run at different speeds, and the counts "
          "come from callgrind's simulated CPU; they are deterministic, so intervals are "
          "zero-width")


def require_valgrind() -> None:
    if shutil.which("valgrind") is None:
        raise UsageError("valgrind not found: scripts/install-deps.sh installs it "
                         "(apt-get install valgrind)")


def host_has_avx512() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return re.search(r"^flags\s*:.*\bavx512f\b", f.read(), re.MULTILINE) is not None
    except OSError:
        return False


def portable_presets() -> list[str]:
    """The visible portable configure presets of this host's architecture."""
    return [n for n, p in presets.load_presets().items()
            if n.endswith("-portable") and p.arch == host_arch()]


def default_preset(instructions: bool) -> str:
    """The preset of a build that gives none: this host's gcc native one, or with
    `instructions` on an AVX-512 host its portable one, which valgrind can run."""
    native = host.native_preset()
    return native.replace("-native", "-portable") if instructions and host_has_avx512() \
        else native


def refusal(what: str) -> str:
    return (f"{what}: valgrind 3.19 cannot execute AVX-512 instructions, and a -march=native "
            "build on this AVX-512 host contains them (it dies with SIGILL under callgrind); "
            f"use a portable preset for --instructions: {', '.join(portable_presets())}")


def check_presets(presets: list[tuple[str, dict[str, str]]], avx512: bool | None = None) -> None:
    """Refuses (UsageError) a preset whose arch flags say native when the host has AVX-512.
    `presets`: (name, cache variables) pairs."""
    if not (host_has_avx512() if avx512 is None else avx512):
        return
    for name, cache in presets:
        flags = cache.get("KVBENCH_ARCH_FLAGS", "") + " " + cache.get("CMAKE_CXX_FLAGS", "")
        if "native" in flags or name.endswith("-native"):
            raise UsageError(refusal(f"preset {name}"))


def run(cmd: list[str], out_file: str, what: str, *, marked_only: bool = False,
        options: Sequence[str] = (), **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Runs `cmd` under callgrind writing `out_file` (and, with client-request dumps,
    `out_file`.1, .2, ...). `marked_only`: count only inside the program's marked regions
    (--collect-atstart=no); `options`: more of callgrind's. Raises UsageError on SIGILL
    (AVX-512), RunError on another failure."""
    argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *options]
    if marked_only:
        argv.append("--collect-atstart=no")
    p = subprocess.run([*argv, *cmd], capture_output=True, text=True, **kwargs)
    if p.returncode == -signal.SIGILL or "Illegal opcode" in p.stderr:
        raise UsageError(refusal(what))
    if p.returncode != 0:
        raise RunError(f"{what} failed under callgrind ({p.returncode}): "
                       f"{p.stderr.strip()[-400:]}")
    return p


def without_debug_info(binary: str, copy: str) -> str:
    """A copy of `binary` without its debug sections, or `binary` when objcopy is missing.
    valgrind 3.19 gives up on the DWARF 5 that clang 14 writes ("possibly corrupted debuginfo");
    the instructions executed do not depend on it."""
    if shutil.which("objcopy") is None:
        return binary
    p = subprocess.run(["objcopy", "--strip-debug", binary, copy], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RunError(f"objcopy --strip-debug {binary} failed: {p.stderr.strip()[-300:]}")
    return copy


def micro_instructions(cmd: list[str], out_json: str, label: str) -> None:
    """Runs kvbench_micro (`cmd`, writing Google Benchmark JSON to `out_json`) under callgrind
    and adds instructions_per_iteration and instructions_per_byte to each benchmark row."""
    cg = out_json + ".callgrind"
    try:
        run([without_debug_info(cmd[0], cg + ".bin"), *cmd[1:]], cg, label, marked_only=True)
        with open(out_json, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("context", {}).get("kvbench_callgrind_marks", "no") != "yes":
            raise UsageError(f"{label}: this kvbench_micro does not mark its measured loops for "
                             "callgrind (" + str(doc.get("context", {}).get(
                                 "kvbench_callgrind_marks", "a build from before the marks"))
                             + "); reconfigure it with valgrind installed")
        rows = [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"
                and not b.get("error_occurred")]
        counts = per_iteration(micro_dumps(cg), [(b["name"], int(b["iterations"])) for b in rows])
        for b in rows:
            b["instructions_per_iteration"] = round(counts[b["name"]], 2)
            size = block_bytes(str(b.get("run_name", b["name"])))
            if size:
                b["instructions_per_byte"] = round(counts[b["name"]] / size, 6)
        doc["context"]["kvbench_instructions"] = "callgrind, measured loops only; " + CAVEAT
        results.write_json(out_json, doc)
    finally:
        for path in glob.glob(glob.escape(cg) + "*"):
            os.remove(path)


# ---- kvbench's KV workloads (their marks: core/callgrind_out.py) -------------------------------

KV_NUM = 20000   # kvbench --num of a KV instruction run unless the command line gives one
KV_VALGRIND = ["--instr-atstart=no", "--separate-threads=yes", "--vgdb=yes"]
# What an instruction run adds to kvbench's command line: counters of the simulated CPU would
# count valgrind's own work, and there is nothing to sample.
KV_FLAGS = ["--perf_counters=off", "--report_interval_seconds=0"]
# kvbench's benchmarks that write a database from empty: a KV instruction run whose first
# benchmark is none of them gets a fillseq first, so that it reads or overwrites --num keys and
# not an empty database (kvbench empties --db at start).
KV_FILLS = ("fillseq", "fillrandom", "insertbench", "l.i0")
KV_COUNTED = ("callgrind, each workload thread's measured loop (a paced writer's waits left out) "
              "per op of its role, and the engine's background threads (every thread kvbench "
              "did not start for a role) over the same benchmark run, per op of all its roles; ")
def kv_benchmarks(workloads: str) -> str:
    """kvbench --benchmarks of an instruction run of `workloads`: a fillseq first unless they
    start with a fill (KV_FILLS), and a settle after every benchmark but the last, so that each
    starts from the same state in every run: the engine's flushes and compactions done, not
    somewhere in the middle when callgrind's slow threads happen to switch."""
    names = [n for n in workloads.split(",") if n]
    if not names or names[0] not in KV_FILLS:
        names.insert(0, "fillseq")
    out: list[str] = []
    for n in names:
        if out and out[-1] != "settle" and n != "settle":
            out.append("settle")
        out.append(n)
    return ",".join(out)


def default_metrics(micro: bool) -> list[str]:
    """What --instructions compares unless --metric says otherwise."""
    return ["instructions_per_byte"] if micro else \
        [m.rsplit(".", 1)[1] for m in KV_METRICS]  # the names kvb compare and studies know


def kv_instructions(cmd: list[str], out_json: str, label: str) -> None:
    """Runs kvbench (`cmd`, writing its JSON to `out_json`) under callgrind and adds the
    instruction counts of every benchmark run to that JSON (annotate_kv), its context saying
    what was counted (context.kvbench_instructions)."""
    cg = out_json + ".callgrind"
    try:
        binary = without_debug_info(cmd[0], cg + ".bin")
        args = [f"--benchmarks={kv_benchmarks(a.split('=', 1)[1])}"
                if a.startswith("--benchmarks=") else a for a in cmd[1:]]
        run([binary, *args, *KV_FLAGS], cg, label, options=KV_VALGRIND)
        with open(out_json, encoding="utf-8") as f:
            doc = json.load(f)
        marks = doc.get("context", {}).get("build", {}).get("callgrind_marks",
                                                             "a build from before the marks")
        if marks != "yes":
            raise UsageError(f"{label}: this kvbench does not mark its measured loops for "
                             f"callgrind ({marks}); reconfigure it with valgrind installed")
        annotate_kv(doc, kv_windows(cg))
        doc["context"]["kvbench_instructions"] = KV_COUNTED + CAVEAT
        results.write_json(out_json, doc)
    finally:
        for path in glob.glob(glob.escape(cg) + "*"):
            os.remove(path)
