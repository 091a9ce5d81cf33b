#!/usr/bin/env python3
"""Instructions per op, kvbench's rocksdb engine against db_bench, counted by callgrind.

Wall-clock ratios on a shared 2-core VM move by 10-20% run to run (docs/dbbench-parity.md);
instruction counts do not: callgrind gives the same total for the same binary, inputs and seed
whatever else the machine is doing. For each benchmark both tools run under callgrind at two op
counts on copies of one database, and the difference divided by the difference in ops is the
cost of one op, free of start-up, open and close:

    instructions/op = (total(ops2) - total(ops1)) / (ops2 - ops1)

fillseq starts from an empty database (--num=ops); readrandom, overwrite and fwdrange (db_bench
seekrandom --seek_nexts=10) run on copies of one --num-key database that kvbench writes and
settles first. Each (benchmark, seed) pair uses the same --seed in both tools; overwrite's cost
depends on the keys drawn (memtable skiplist shape), so use several seeds.

  scripts/dbbench_instructions.py [--num 1000000] [--ops 10000,30000] [--seeds 1,2,3]
                                  [--benchmarks fillseq,readrandom,overwrite,fwdrange] [--jobs 2]

Options are matched exactly as scripts/compare_dbbench.py matches them (same flag builders).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_dbbench  # noqa: E402

TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)


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
        base = compare_dbbench.db_bench_args(binary, db, key_space, cache, [benchmark])
        base = without(base, ("use_existing_db",))
        name = compare_dbbench.BENCHMARKS[benchmark]
    else:
        base = compare_dbbench.kvbench_args(binary, db, key_space, cache, [benchmark], json_path)
        name = benchmark
    base = without(base, ("benchmarks",))
    extra = [f"--benchmarks={name}", f"--seed={seed}"]
    if not fill:
        extra += ["--use_existing_db=true", f"--reads={ops}", f"--writes={ops}"]
    elif tool == "db_bench":
        extra += ["--use_existing_db=false"]
    return base + extra


def per_op(total1: int, total2: int, ops1: int, ops2: int) -> float:
    return (total2 - total1) / (ops2 - ops1)


def parse_totals(callgrind_out: str) -> int:
    with open(callgrind_out, encoding="utf-8", errors="replace") as f:
        m = TOTALS.search(f.read())
    if not m:
        raise RuntimeError(f"no totals line in {callgrind_out}")
    return int(m.group(1))


def run_one(job: dict) -> int:
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
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            *job["args"]], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{job['tool']} {job['benchmark']} failed ({p.returncode}): "
                               f"{p.stderr.strip()[-400:]}")
        return parse_totals(out)
    finally:
        shutil.rmtree(db, ignore_errors=True)
        for f in (out, db + ".json"):
            if os.path.exists(f):
                os.remove(f)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num", type=int, default=1000000, help="keys in the read/overwrite database")
    parser.add_argument("--ops", default="10000,30000", help="the two op counts, ascending")
    parser.add_argument("--seeds", default="1,2,3", help="--seed values; per-op figures are averaged")
    parser.add_argument("--cache_size", type=int, default=256 << 20)
    parser.add_argument("--benchmarks", default=",".join(compare_dbbench.BENCHMARKS))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--kvbench", default=None, help="default: build/<host gcc preset>/src/kvbench")
    parser.add_argument("--db_bench", default=shutil.which("db_bench") or "db_bench")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()

    try:
        ops = [int(x) for x in args.ops.split(",")]
        seeds = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        parser.error("--ops and --seeds take comma-separated integers")
    benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [b for b in benchmarks if b not in compare_dbbench.BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmarks {unknown}")
    if len(ops) != 2 or not 0 < ops[0] < ops[1] or not seeds or args.num < ops[1] or args.jobs < 1:
        parser.error("--ops needs two counts 0 < a < b <= --num, --seeds at least one, --jobs >= 1")
    if args.kvbench is None:
        args.kvbench = compare_dbbench.default_kvbench()
    for tool in (args.kvbench, args.db_bench, "valgrind"):
        if not shutil.which(tool) and not os.access(tool, os.X_OK):
            print(f"dbbench_instructions: {tool} not found (build kvbench; apt-get install "
                  "rocksdb-tools valgrind)", file=sys.stderr)
            return 2

    work = args.workdir or tempfile.mkdtemp(prefix="kvbench-instructions-")
    os.makedirs(work, exist_ok=True)
    base = os.path.join(work, "base")
    try:
        if any(b != "fillseq" for b in benchmarks):
            shutil.rmtree(base, ignore_errors=True)
            fill = compare_dbbench.kvbench_args(args.kvbench, base, args.num, args.cache_size,
                                                ["fillseq"], os.path.join(work, "base.json"))
            fill = without(fill, ("benchmarks",)) + ["--benchmarks=fillseq,settle"]
            p = subprocess.run(fill, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"dbbench_instructions: building the base database failed: "
                      f"{p.stderr.strip()[-400:]}", file=sys.stderr)
                return 1
        jobs = []
        for b in benchmarks:
            for tool, binary in (("db_bench", args.db_bench), ("kvbench", args.kvbench)):
                for seed in seeds:
                    for n in ops:
                        db = os.path.join(work, f"{tool}-{b}-{seed}-{n}")
                        jobs.append({"tool": tool, "benchmark": b, "seed": seed, "ops": n,
                                     "db": db, "base": base,
                                     "args": tool_args(tool, binary, db, args.num,
                                                       args.cache_size, b, n, seed, db + ".json")})
        print(f"dbbench_instructions: {len(jobs)} callgrind runs ({args.jobs} at a time), "
              f"--num={args.num}, ops {ops[0]} and {ops[1]}, seeds {seeds}", flush=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            totals = list(pool.map(run_one, jobs))
    except RuntimeError as e:
        print(f"dbbench_instructions: {e}", file=sys.stderr)
        return 1
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    got = {(j["tool"], j["benchmark"], j["seed"], j["ops"]): t for j, t in zip(jobs, totals)}
    print()
    print(f"{'benchmark':12s} {'db_bench instr/op':>18s} {'kvbench instr/op':>17s} "
          f"{'kvbench/db_bench':>17s}  per seed")
    for b in benchmarks:
        cost = {tool: [per_op(got[(tool, b, s, ops[0])], got[(tool, b, s, ops[1])], ops[0], ops[1])
                       for s in seeds] for tool in ("db_bench", "kvbench")}
        d, k = statistics.mean(cost["db_bench"]), statistics.mean(cost["kvbench"])
        seeds_text = " ".join(f"{kk / dd:.3f}" for dd, kk in zip(cost["db_bench"], cost["kvbench"]))
        print(f"{b:12s} {d:18,.0f} {k:17,.0f} {k / d:17.3f}  {seeds_text}")
    print("(instructions per op from callgrind totals at two op counts; mean over seeds; a ratio "
          "of 1.031 costs the same as a throughput ratio of 0.97 at equal instructions per cycle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
