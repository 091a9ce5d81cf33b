"""kvb dbbench's runs of both tools on the flags of core/dbbench_args.py: timed in
alternating rounds (`kvb dbbench parity`: timed_rounds, summarize) and under callgrind at two op
counts (`kvb dbbench instructions`: counted, per_op). The commands (commands/dbbench_parity.py,
dbbench_instructions.py) check their requests, print the tables and judge."""
from __future__ import annotations

import concurrent.futures
import os
import re
import resource
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from kvbtools.core import callgrind_out, results, stats
from kvbtools.core.errors import RunError
from kvbtools.measure import callgrind
from kvbtools.core.dbbench_args import BENCHMARKS, db_bench_args, kvbench_args

DB_BENCH_LINE = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op\s+(\d+) ops/sec")


@dataclass(frozen=True)
class Tools:
    """Both tools and the workload they share."""
    kvbench: str
    db_bench: str
    num: int
    cache_size: int
    benchmarks: tuple[str, ...]


# ---- timed (parity) -----------------------------------------------------------------------------

def pinned(args: list[str], cpus: str | None) -> list[str]:
    """A tool's command line, under taskset when --cpus is given: the same for both tools."""
    return ["taskset", "-c", cpus] + args if cpus else args


def parse_db_bench(out: str) -> dict[str, float]:
    found = {}
    for line in out.splitlines():
        m = DB_BENCH_LINE.match(line)
        if m:
            found[m.group(1)] = float(m.group(3))
    return found


def run_db_bench(args: list[str], benchmarks: list[str]) -> dict[str, float]:
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RunError(f"db_bench failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    by_name = parse_db_bench(p.stdout)
    missing = [b for b in benchmarks if BENCHMARKS[b] not in by_name]
    if missing:
        raise RunError(f"db_bench printed no result for {', '.join(missing)}")
    return {b: by_name[BENCHMARKS[b]] for b in benchmarks}


def run_kvbench(args: list[str], json_path: str, benchmarks: list[str]) -> dict[str, float]:
    """ops/s per benchmark, and under phase_cpu(benchmark) the process CPU seconds of that phase
    (from the JSON: RocksDB's flushes and compactions during it included)."""
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RunError(f"kvbench failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    doc = results.load_written(json_path, results.KVBENCH, "kvbench").doc
    got = {}
    for r in doc["results"]:
        if r["benchmark"] in benchmarks:
            got[r["benchmark"]] = r["roles"][0]["ops_per_sec"]
            got[phase_cpu(r["benchmark"])] = r["cpu_seconds"]
    return got


def phase_cpu(benchmark: str) -> str:
    return benchmark + " cpu"


CPU = "cpu seconds per run"


def children_cpu_seconds() -> float:
    """User + system CPU of the finished child processes so far: with wall time, how much of a
    run was the tool's own work and how much waiting for a CPU others held."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def summarize(db: list[float], kv: list[float]) -> dict[str, float]:
    """One benchmark's figures: each tool's median and CV, the ratio of the medians (the parity
    criterion) with a bootstrap 95% interval, and the per-round paired ratios kv[i]/db[i] (runs
    made back to back)."""
    paired = [k / d for k, d in zip(kv, db)]
    low, high = stats.bootstrap_ratio_ci(db, kv, seed=0, resamples=4000)
    return {"db_median": statistics.median(db), "db_cv": stats.cv(db),
            "kv_median": statistics.median(kv), "kv_cv": stats.cv(kv),
            "ratio": statistics.median(kv) / statistics.median(db), "ci_low": low, "ci_high": high,
            "paired_median": statistics.median(paired), "paired_min": min(paired),
            "paired_max": max(paired)}


def timed_rounds(tools: Tools, runs: int, cpus: str | None, work: str
                 ) -> dict[str, dict[str, list[float]]]:
    """`runs` rounds of both tools (under taskset -c `cpus` when given), alternating which goes
    first; ops/s per tool and benchmark, and under the key CPU each tool's process CPU seconds
    per run (the whole sequence)."""
    benchmarks = list(tools.benchmarks)
    kvbench = tools.kvbench
    got_all: dict[str, dict[str, list[float]]] = {t: {b: [] for b in benchmarks + [CPU]}
                                                  for t in ("db_bench", "kvbench")}
    for i in range(runs):
        for tool in ["db_bench", "kvbench"] if i % 2 == 0 else ["kvbench", "db_bench"]:
            db = os.path.join(work, tool)
            shutil.rmtree(db, ignore_errors=True)
            load = os.getloadavg()[0]
            cpu0 = children_cpu_seconds()
            start = time.monotonic()
            if tool == "db_bench":
                got = run_db_bench(pinned(db_bench_args(tools.db_bench, db, tools.num,
                                                        tools.cache_size, benchmarks), cpus),
                                   benchmarks)
            else:
                out = os.path.join(work, f"kvbench-{i}.json")
                got = run_kvbench(pinned(kvbench_args(kvbench, db, tools.num, tools.cache_size,
                                                      benchmarks, out), cpus),
                                  out, benchmarks)
            for b in benchmarks:
                got_all[tool][b].append(got[b])
                if tool == "kvbench":
                    got_all[tool].setdefault(phase_cpu(b), []).append(got[phase_cpu(b)])
            wall = time.monotonic() - start
            cpu = children_cpu_seconds() - cpu0
            got_all[tool][CPU].append(cpu)
            print(f"  run {i + 1} {tool:8s} ({wall:5.1f}s, cpu {cpu:5.1f}s, load {load:4.1f}): " +
                  "  ".join(f"{b} {got[b]:,.0f}" for b in benchmarks), flush=True)
            shutil.rmtree(db, ignore_errors=True)
    return got_all



# ---- counted (instructions) ---------------------------------------------------------------------

def without(args: list[str], names: tuple[str, ...]) -> list[str]:
    """`args` minus every --name=... flag in `names`."""
    return [a for a in args if not any(a.startswith(f"--{n}=") for n in names)]


def tool_args(tool: str, binary: str, db: str, num: int, cache: int, benchmark: str, ops: int,
              seed: int, json_path: str) -> list[str]:
    """One benchmark of `ops` operations with `seed`, on an existing database except fillseq,
    which starts empty with --num=ops."""
    fill = benchmark == "fillseq"
    key_space = ops if fill else num
    if tool == "db_bench":
        base = without(db_bench_args(binary, db, key_space, cache, [benchmark]),
                       ("use_existing_db",))
        name = BENCHMARKS[benchmark]
    else:
        base = kvbench_args(binary, db, key_space, cache, [benchmark], json_path)
        name = benchmark
    extra = [f"--benchmarks={name}", f"--seed={seed}"]
    if not fill:
        extra += ["--use_existing_db=true", f"--reads={ops}", f"--writes={ops}"]
    elif tool == "db_bench":
        extra += ["--use_existing_db=false"]
    return without(base, ("benchmarks",)) + extra


def per_op(total1: int, total2: int, ops1: int, ops2: int) -> float:
    return (total2 - total1) / (ops2 - ops1)


def run_one(job: dict[str, Any]) -> int:
    """Copies the base database (unless fillseq), runs the tool under callgrind, returns the
    instruction total."""
    db = job["db"]
    shutil.rmtree(db, ignore_errors=True)
    if job["benchmark"] != "fillseq":
        shutil.copytree(job["base"], db)
        lock = os.path.join(db, "LOCK")
        if os.path.exists(lock):
            os.remove(lock)
    out = db + ".callgrind"
    try:
        callgrind.run(job["args"], out, f"{job['tool']} {job['benchmark']}")
        return callgrind_out.totals(out)
    finally:
        shutil.rmtree(db, ignore_errors=True)
        for f in (out, db + ".json"):
            if os.path.exists(f):
                os.remove(f)


def make_base(tools: Tools, base: str, work: str) -> None:
    """The --num-key database the read and overwrite runs copy: kvbench fillseq, settled."""
    shutil.rmtree(base, ignore_errors=True)
    fill = kvbench_args(tools.kvbench, base, tools.num, tools.cache_size, ["fillseq"],
                        os.path.join(work, "base.json"))
    p = subprocess.run(without(fill, ("benchmarks",)) + ["--benchmarks=fillseq,settle"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RunError(f"building the base database failed: {p.stderr.strip()[-400:]}")


def counted(tools: Tools, ops: list[int], seeds: list[int], jobs: int, work: str
            ) -> dict[tuple[str, str, int, int], int]:
    """Both tools under callgrind, each benchmark at both op counts with each seed, `jobs` at a
    time: the instruction total by (tool, benchmark, seed, ops)."""
    benchmarks = list(tools.benchmarks)
    base = os.path.join(work, "base")
    if any(b != "fillseq" for b in benchmarks):
        make_base(tools, base, work)
    todo = []
    for b in benchmarks:
        for tool, binary in (("db_bench", tools.db_bench), ("kvbench", tools.kvbench)):
            for seed in seeds:
                for n in ops:
                    db = os.path.join(work, f"{tool}-{b}-{seed}-{n}")
                    todo.append({"tool": tool, "benchmark": b, "seed": seed, "ops": n,
                                 "db": db, "base": base,
                                 "args": tool_args(tool, binary, db, tools.num, tools.cache_size,
                                                   b, n, seed, db + ".json")})
    print(f"kvb dbbench instructions: {len(todo)} callgrind runs ({jobs} at a time), "
          f"--num={tools.num}, ops {ops[0]} and {ops[1]}, seeds {seeds}", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        totals = list(pool.map(run_one, todo))
    return {(j["tool"], j["benchmark"], j["seed"], j["ops"]): t for j, t in zip(todo, totals)}
