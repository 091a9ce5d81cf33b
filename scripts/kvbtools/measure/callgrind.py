"""Instruction counts from valgrind's callgrind: the one mechanism behind `--instructions` of kvb
matrix, versions and bisect, and behind kvb dbbench instructions.

Instructions are not time: two builds that execute the same number of instructions can differ in
speed (cache misses, branch mispredictions, the instructions' own cost, vector width), and
callgrind runs the code on a simulated CPU, 20-100x slower. What they are is deterministic: the
same binary, input and seed give the same count whatever else the machine is doing, so they can
resolve differences far below the noise of a shared VM where there is no hardware PMU.

valgrind 3.19 (Debian 12) cannot execute AVX-512 instructions: a -march=native build on an
AVX-512 host dies with SIGILL under it. That is refused up front (the preset's arch flags and the
host's CPU flags) and, should it happen anyway, recognised by the signal: both exit 2 naming the
portable presets.
"""
from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any, Sequence

from kvbtools.core import metrics, results
from kvbtools.core.errors import RunError, UsageError
from kvbtools.core import host
from kvbtools.core.host import host_arch
from kvbtools.measure import presets

TOTALS = re.compile(r"^(?:totals|summary):\s+(\d+)", re.MULTILINE)
DESC = re.compile(r"^desc: Trigger: Client Request: kvbench_micro iterations=(\d+)$", re.MULTILINE)
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


def totals(path: str) -> int:
    """The instruction total of one callgrind output file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        m = TOTALS.search(f.read())
    if not m:
        raise RunError(f"no totals line in {path}")
    return int(m.group(1))


def micro_dumps(out_file: str) -> list[tuple[int, int]]:
    """(iterations, instructions) of every measured loop kvbench_micro marked
    (bench/callgrind_marks.h), in the order they ran."""
    def part(path: str) -> int:
        return int(path.rsplit(".", 1)[1])
    out = []
    parts = [p for p in glob.glob(glob.escape(out_file) + ".*") if p.rsplit(".", 1)[1].isdigit()]
    for path in sorted(parts, key=part):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        d, t = DESC.search(text), TOTALS.search(text)
        if d and t:
            out.append((int(d.group(1)), int(t.group(1))))
    return out


def per_iteration(dumps: list[tuple[int, int]], names: list[tuple[str, int]]) -> dict[str, float]:
    """Instructions per iteration of each benchmark. `names`: (name, iterations) of the
    benchmarks that ran their loop, in run order (the JSON's). Google Benchmark runs each one with
    growing iteration counts, so a count that does not grow starts the next benchmark; the last
    two runs' difference cancels the loop's fixed cost. The last run of each must match the
    JSON's iterations, or the dumps are not what this reads them as (RunError)."""
    groups: list[list[tuple[int, int]]] = []
    for d in dumps:
        if not groups or d[0] <= groups[-1][-1][0]:
            groups.append([])
        groups[-1].append(d)
    if len(groups) != len(names) or any(g[-1][0] != n for g, (_, n) in zip(groups, names)):
        raise RunError(f"callgrind dumps do not line up with the benchmarks run: "
                       f"{len(groups)} measured loop(s) for {len(names)} benchmark(s)")
    out = {}
    for g, (name, _) in zip(groups, names):
        if len(g) >= 2:
            (n1, t1), (n2, t2) = g[-2], g[-1]
            out[name] = (t2 - t1) / (n2 - n1)
        else:
            out[name] = g[0][1] / g[0][0]
    return out


def block_bytes(name: str) -> int | None:
    """The bytes one iteration processes, from <algorithm>/<variant>/<block bytes>[/cold]."""
    parts = name.split("/")
    return int(parts[2]) if len(parts) >= 3 and parts[2].isdigit() else None


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


# ---- kvbench's KV workloads --------------------------------------------------------------------
#
# kvbench marks its measured loops (src/common/instruction_marks.h): run under callgrind with
# instrumentation off until a benchmark starts and one output file per thread, each workload
# thread dumps its own loop ("kvbench loop role=R thread=I ops=N") and the runner dumps every
# thread at the end of each benchmark run ("kvbench window benchmark=B run=K warmup=W"), where
# what the workload threads and the runner leave is zero: that dump is the engine's background
# threads'. Output files are <out>.<part>-<thread>, parts numbered in the order they were dumped.

KV_NUM = 20000   # kvbench --num of a KV instruction run unless the command line gives one
KV_VALGRIND = ["--instr-atstart=no", "--separate-threads=yes", "--vgdb=yes"]
# What an instruction run adds to kvbench's command line: counters of the simulated CPU would
# count valgrind's own work, and there is nothing to sample.
KV_FLAGS = ["--perf_counters=off", "--report_interval_seconds=0"]
KV_METRICS = metrics.CALLGRIND_KV
# kvbench's benchmarks that write a database from empty: a KV instruction run whose first
# benchmark is none of them gets a fillseq first, so that it reads or overwrites --num keys and
# not an empty database (kvbench empties --db at start).
KV_FILLS = ("fillseq", "fillrandom", "insertbench", "l.i0")
KV_COUNTED = ("callgrind, each workload thread's measured loop (a paced writer's waits left out) "
              "per op of its role, and the engine's background threads (every thread kvbench "
              "did not start for a role) over the same benchmark run, per op of all its roles; ")
LOOP = re.compile(r"^desc: Trigger: Client Request: kvbench loop role=(\S+) thread=(\d+) "
                  r"ops=(\d+)$", re.MULTILINE)
WINDOW = re.compile(r"^desc: Trigger: dump kvbench window benchmark=(\S+) run=(-?\d+) "
                    r"warmup=([01])$", re.MULTILINE)
# Only "totals:": after a zeroing, callgrind's "summary:" line of a thread can wrap below zero.
THREAD_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)
PART_FILE = re.compile(r"\.(\d+)-(\d+)$")


@dataclass
class KvWindow:
    """One benchmark run as callgrind saw it: its loops and its background."""
    benchmark: str
    run: int
    warmup: bool
    loops: list[tuple[str, int, int, int]] = field(default_factory=list)  # role, i, ops, count
    background: dict[int, int] = field(default_factory=dict)  # callgrind thread -> count

    def role(self, name: str) -> tuple[int, int, int]:
        """(threads, ops, instructions) of one role's loops."""
        mine = [lp for lp in self.loops if lp[0] == name]
        return len(mine), sum(lp[2] for lp in mine), sum(lp[3] for lp in mine)


def kv_windows(out_file: str) -> list[KvWindow]:
    """Every benchmark run kvbench marked, in run order, from the dumps of `out_file`. A loop
    belongs to the first window dumped after it."""
    parts: dict[int, list[tuple[int, str]]] = {}
    for path in glob.glob(glob.escape(out_file) + ".*-*"):
        m = PART_FILE.search(path)
        if m:
            with open(path, encoding="utf-8", errors="replace") as f:
                parts.setdefault(int(m.group(1)), []).append((int(m.group(2)), f.read()))
    windows: list[KvWindow] = []
    loops: list[tuple[str, int, int, int]] = []
    for part in sorted(parts):
        files = [(thread, text, THREAD_TOTALS.search(text)) for thread, text in parts[part]]
        counts = {thread: int(t.group(1)) if t else 0 for thread, _, t in files}
        window = next((m for _, text, _ in files if (m := WINDOW.search(text))), None)
        if window is not None:
            windows.append(KvWindow(window.group(1), int(window.group(2)),
                                    window.group(3) == "1", loops, counts))
            loops = []
            continue
        for thread, text, _ in files:
            if (lp := LOOP.search(text)) is not None:
                loops.append((lp.group(1), int(lp.group(2)), int(lp.group(3)), counts[thread]))
    if loops:
        raise RunError(f"callgrind: {len(loops)} measured loop(s) after the last benchmark run's "
                       "end: the run did not end as kvbench ends one")
    return windows


def annotate_kv(doc: dict[str, Any], windows: list[KvWindow]) -> None:
    """Adds callgrind.instructions_per_op to each role and callgrind.background_* to each
    result of kvbench's JSON `doc`, from the measured (not warm-up) windows, which must line up
    with the results that ran threads (RunError otherwise: the counts would be misattributed)."""
    measured = [w for w in windows if not w.warmup]
    rows = [r for r in doc["results"] if r.get("roles")]
    if [w.benchmark for w in measured] != [r["benchmark"] for r in rows]:
        raise RunError("callgrind's dumps do not line up with kvbench's results: "
                       f"{[w.benchmark for w in measured]} counted, "
                       f"{[r['benchmark'] for r in rows]} reported")
    for w, r in zip(measured, rows):
        all_ops = 0
        for role in r["roles"]:
            threads, ops, count = w.role(role["role"])
            if threads != role["threads"] or ops != role["ops"]:
                raise RunError(f"callgrind counted {threads} {role['role']} thread(s) and {ops} "
                               f"ops in {w.benchmark}; kvbench reports {role['threads']} and "
                               f"{role['ops']}")
            role["callgrind"] = {"instructions": count,
                                 "instructions_per_op": round(count / ops, 1) if ops else 0}
            all_ops += ops
        bg = sum(w.background.values())
        r["callgrind"] = {"background_instructions": bg,
                          "background_threads": sum(1 for c in w.background.values() if c),
                          "background_instructions_per_op": round(bg / all_ops, 1)
                          if all_ops else 0}
    described = {m.get("path") for m in doc.setdefault("metrics", [])}
    for path in KV_METRICS:
        if path not in described:
            doc["metrics"].append({"path": path, "unit": "instructions/op", "better": "lower"})


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
