#!/usr/bin/python3
"""Does crc32c::Extend's start-up choice hold on a busy machine? (docs/micro.md, "How Extend()
chooses")

Starts kvbench_micro STARTS times beside HOGS busy loops (`while :; do :; done`, as
`scripts/test.sh --under-load` runs them), each start measuring crc32c/extend and every kvbench
kernel (table, hw_1way, ..., fusion_512) at the block sizes, and counts the starts in which
crc32c/extend ran at >= THRESHOLD x the fastest of kvbench's own kernels at every size. Each
start calibrates afresh, so each is one sample of the choice; the kernels' rates are Google
Benchmark's steady state in the same process (the best of --repetitions, interleaved), the
reference the choice is judged against.

  scripts/crc32c-trial.py --micro build/x86-gcc-native/bench/kvbench_micro
          [--starts 10] [--hogs N] [--sizes 256,4096,65536] [--threshold 0.97] [--need 9]
          [--min-time 0.01] [--repetitions 20] [--keep DIR]

Prints one line per start and the counts: per size, extend / the fastest own kernel (the
acceptance), the kernel extend ran and its own row / the fastest (the choice, judged by the
steady state), and extend / its own kernel's row: the same code twice, so this ratio's spread is
the trial's own noise. Exit 0 when at least NEED starts passed, 1 when fewer did, 2 on bad
input. A timing trial, not a test: ctest never runs it (a benchmark's speed is not asserted by a
unit test). Each row is the best of many short repetitions (10 ms each by default), interleaved:
on a busy machine a row's rate moves by 20-30% between repetitions, and the best of few long
ones left extend and the kernel it runs 5% apart.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

# A repetition that measured fewer bytes timed a few calls and the clock's own cost, not a rate.
# Google Benchmark fixes a row's iterations in its first estimate, and it takes one iteration as
# enough when that iteration's wall time passed 5x --benchmark_min_time: at 5 ms, a preemption
# of 25 ms at the wrong moment left a row at 1 iteration (0.1 GB/s) for all its repetitions, in
# 5 of 10 starts at load 20. Such a start is run again (up to 3 times, then it counts as
# failed), and the count of re-runs is printed.
MIN_BYTES = 1 << 20
MAX_ATTEMPTS = 3
OWN = ("table", "hw_1way", "hw_3way", "fold_256", "fold_512", "fusion_512", "fold_pmull",
       "fold_eor3")


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--micro", required=True, help="the kvbench_micro binary")
    p.add_argument("--starts", type=int, default=10, help="process starts (default 10)")
    p.add_argument("--hogs", type=int, default=2 * (os.cpu_count() or 1),
                   help="busy loops beside them (default: twice the cores, as test.sh)")
    p.add_argument("--sizes", default="256,4096,65536", help="block sizes (default %(default)s)")
    p.add_argument("--threshold", type=float, default=0.97,
                   help="extend / fastest own kernel needed at every size (default 0.97)")
    p.add_argument("--need", type=int, default=9, help="starts that must pass (default 9)")
    p.add_argument("--min-time", default="0.01",
                   help="--benchmark_min_time per repetition of a row (default 0.01)")
    p.add_argument("--keep", metavar="DIR",
                   help="write each start's kvbench_micro JSON into DIR (default: not kept)")
    p.add_argument("--repetitions", type=int, default=20,
                   help="--benchmark_repetitions: each row's best is kept (default 20)")
    a = p.parse_args()
    if not os.access(a.micro, os.X_OK):
        p.error(f"--micro {a.micro}: not an executable file")
    if a.starts < 1 or a.hogs < 0 or a.repetitions < 1 or not 0 < a.threshold <= 2:
        p.error("--starts and --repetitions must be >= 1, --hogs >= 0, --threshold in (0, 2]")
    try:
        a.size_list = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes {a.sizes}: not a comma-separated list of byte counts")
    return a


Rates = dict[str, dict[int, float]]  # kernel -> block size -> best bytes/s


@dataclass
class Start:
    context: dict[str, str]
    rates: Rates
    extend_runs: dict[int, str]  # block size -> the kernel crc32c/extend's label names
    reps: dict[tuple[str, int], int] = field(default_factory=dict)  # repetitions with a rate
    ran: set[tuple[str, int]] = field(default_factory=set)  # rows Google Benchmark ran


def one_start(a: argparse.Namespace, out: str) -> Start:
    """One process start: the best bytes/s of each crc32c row by kernel and size."""
    names = "|".join(OWN + ("extend",))
    sizes = "|".join(str(s) for s in a.size_list)
    subprocess.run([a.micro, f"--block_sizes={a.sizes}", "--perf_counters=off",
                    f"--benchmark_filter=^crc32c/({names})/({sizes})$",
                    f"--benchmark_min_time={a.min_time}",
                    f"--benchmark_repetitions={a.repetitions}",
                    "--benchmark_enable_random_interleaving=true",
                    f"--benchmark_out={out}", "--benchmark_out_format=json"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    start = Start(doc["context"], {}, {})
    for b in doc["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        _, kernel, size = b["run_name"].split("/")
        start.ran.add((kernel, int(size)))
        runs = re.search(r"-> crc32c/(\w+)", b.get("label", ""))
        if kernel == "extend" and runs:
            start.extend_runs[int(size)] = runs.group(1)
        if int(b["iterations"]) * int(size) < MIN_BYTES:
            continue  # a few calls timed with the clock's own cost: no rate (see MIN_BYTES)
        best = start.rates.setdefault(kernel, {})
        best[int(size)] = max(best.get(int(size), 0.0), float(b["bytes_per_second"]))
        start.reps[(kernel, int(size))] = start.reps.get((kernel, int(size)), 0) + 1
    return start


def unmeasured(start: Start) -> list[str]:
    """The rows Google Benchmark ran without one repetition of MIN_BYTES or more."""
    return sorted(f"crc32c/{k}/{size}" for k, size in start.ran if (k, size) not in start.reps)


def judge(a: argparse.Namespace, start: Start) -> tuple[bool, bool, str]:
    """(extend >= threshold x the fastest own row at every size: the acceptance; the kernel
    extend runs, by its own row, >= threshold x the fastest: the choice itself, a comparison of
    two rows; the line). extend / its own kernel's row is the trial's noise: the same code."""
    ok, chose_well, parts = True, True, []
    for size in a.size_list:
        own = {k: r[size] for k, r in start.rates.items() if k in OWN and size in r}
        fastest = max(own, key=lambda k: own[k])
        runs = start.extend_runs.get(size, "?")
        ratio = start.rates["extend"][size] / own[fastest]
        ok = ok and ratio >= a.threshold
        chose_well = chose_well and own.get(runs, 0.0) >= a.threshold * own[fastest]
        noise = start.rates["extend"][size] / own[runs] if runs in own else float("nan")
        parts.append(f"{size} B {ratio:.2f}x of {fastest} (runs {runs}: its row "
                     f"{own.get(runs, 0.0) / own[fastest]:.2f}x, extend/its row {noise:.2f})")
    return ok, chose_well, ", ".join(parts)


def main() -> int:
    a = arguments()
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.hogs)]
    try:
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            return trial(a, a.keep)
        with tempfile.TemporaryDirectory() as tmp:
            return trial(a, tmp)
    except subprocess.CalledProcessError as e:
        print(f"crc32c-trial: {a.micro} failed (exit {e.returncode}):\n{e.stderr}",
              file=sys.stderr)
        return 1
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def trial(a: argparse.Namespace, tmp: str) -> int:
    passed = chose_well = reruns = 0
    for i in range(1, a.starts + 1):
        for attempt in range(1, MAX_ATTEMPTS + 1):
            start = one_start(a, os.path.join(tmp, f"{i}.{attempt}.json"))
            missing = unmeasured(start)
            if not missing:
                break
            print(f"start {i}: no repetition of {', '.join(missing)} measured "
                  f"{MIN_BYTES >> 20} MiB (Google Benchmark fixed it at a few iterations)"
                  + (": run again" if attempt < MAX_ATTEMPTS else f": counted as failed after "
                     f"{MAX_ATTEMPTS} attempts"), flush=True)
            reruns += 1
        if missing:
            continue
        ok, well, text = judge(a, start)
        passed += ok
        chose_well += well
        print(f"start {i}: {'pass' if ok else 'FAIL'}: extend/fastest {text}\n"
              f"  choice: {start.context.get('crc32c_extend_uses')} "
              f"({start.context.get('crc32c_extend_chosen_by')})", flush=True)
    with open("/proc/loadavg", encoding="ascii") as f:
        load = " ".join(f.read().split()[:3])
    print(f"crc32c-trial: {passed} of {a.starts} starts had crc32c/extend >= {a.threshold}x the "
          f"fastest own kernel at {a.sizes} B, beside {a.hogs} busy loops (load {load}); "
          f"needed {a.need}. In {chose_well} of {a.starts} the kernel extend ran was, by its own "
          f"row, >= {a.threshold}x the fastest at every size. {reruns} start(s) run again")
    return 0 if passed >= a.need else 1


if __name__ == "__main__":
    sys.exit(main())
