#!/usr/bin/env python3
"""Side-by-side: kvbench's rocksdb engine against db_bench on the same librocksdb.

Runs the same sequence (fillseq, readrandom, overwrite, and fwdrange = db_bench seekrandom with
--seek_nexts=10, settling flushes and compactions between them) in both tools with matched options, alternating which tool goes first, and
prints the median ops/s of each, their ratio, and each tool's run-to-run spread. The flag mapping
is documented in docs/dbbench-parity.md.

  scripts/compare_dbbench.py [--num 1000000] [--runs 5] [--kvbench PATH] [--db_bench PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# kvbench benchmark -> db_bench benchmark
BENCHMARKS = {"fillseq": "fillseq", "readrandom": "readrandom", "overwrite": "overwrite",
              "fwdrange": "seekrandom"}
# Between phases both tools flush and wait for compactions, so each phase starts from the same
# LSM shape instead of whatever compaction happened to be running (the largest source of spread).
SETTLE = {"kvbench": ["settle"], "db_bench": ["flush", "waitforcompaction"]}


def sequence(tool: str, benchmarks: list[str]) -> str:
    names: list[str] = []
    for i, b in enumerate(benchmarks):
        if i > 0:
            names += SETTLE[tool]
        names.append(b if tool == "kvbench" else BENCHMARKS[b])
    return ",".join(names)

DB_BENCH_LINE = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op\s+(\d+) ops/sec")


def common_settings(num: int, cache: int) -> dict[str, str]:
    return {"num": str(num), "key_size": "16", "value_size": "100", "compression_ratio": "0.5",
            "threads": "1", "seek_nexts": "10", "cache_size": str(cache)}


def db_bench_args(binary: str, db: str, num: int, cache: int, benchmarks: list[str]) -> list[str]:
    s = common_settings(num, cache)
    args = [binary, f"--db={db}", "--benchmarks=" + sequence("db_bench", benchmarks),
            "--compression_type=none",
            # db_bench's defaults that differ from RocksDB's (kvbench uses RocksDB's):
            "--enable_pipelined_write=false", "--table_cache_numshardbits=6",
            "--cache_high_pri_pool_ratio=0.5", "--index_shortening_mode=1",
            "--pin_top_level_index_and_filter=true", "--delayed_write_rate=16777216",
            "--hard_pending_compaction_bytes_limit=274877906944", "--dump_malloc_stats=false",
            "--reverse_iterator=false",
            "--use_existing_db=false", "--histogram=false", "--statistics=false"]
    return args + [f"--{k}={v}" for k, v in s.items()]


def kvbench_args(binary: str, db: str, num: int, cache: int, benchmarks: list[str],
                 json_path: str) -> list[str]:
    s = common_settings(num, cache)
    return [binary, "--engine=rocksdb", f"--db={db}", "--benchmarks=" + sequence("kvbench", benchmarks),
            "--compression=none", "--report_interval_seconds=0", f"--json={json_path}"] + \
        [f"--{k}={v}" for k, v in s.items()]


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
        raise RuntimeError(f"db_bench failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    by_name = parse_db_bench(p.stdout)
    missing = [b for b in benchmarks if BENCHMARKS[b] not in by_name]
    if missing:
        raise RuntimeError(f"db_bench printed no result for {missing}")
    return {b: by_name[BENCHMARKS[b]] for b in benchmarks}


def run_kvbench(args: list[str], json_path: str, benchmarks: list[str]) -> dict[str, float]:
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"kvbench failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    return {r["benchmark"]: r["roles"][0]["ops_per_sec"] for r in doc["results"]
            if r["benchmark"] in benchmarks}


def default_kvbench() -> str:
    """build/<the host's native gcc preset>/src/kvbench, as scripts/test.sh builds it."""
    here = os.path.dirname(os.path.abspath(__file__))
    preset = subprocess.run([os.path.join(here, "host-preset.sh"), "gcc"], capture_output=True,
                            text=True, check=True).stdout.strip()
    return os.path.join(os.path.dirname(here), "build", preset, "src", "kvbench")


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


def summarize(db: list[float], kv: list[float]) -> dict[str, float]:
    """One benchmark's figures: each tool's median and CV, the ratio of the medians (the parity
    criterion) with a bootstrap 95% interval, and the per-round paired ratios kv[i]/db[i] (runs
    made back to back)."""
    paired = [k / d for k, d in zip(kv, db)]
    low, high = ratio_interval(db, kv)
    return {"db_median": statistics.median(db), "db_cv": cv(db),
            "kv_median": statistics.median(kv), "kv_cv": cv(kv),
            "ratio": statistics.median(kv) / statistics.median(db), "ci_low": low, "ci_high": high,
            "paired_median": statistics.median(paired), "paired_min": min(paired),
            "paired_max": max(paired)}


def ratio_interval(db: list[float], kv: list[float], rounds: int = 4000) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of median(kv)/median(db), resampling each tool's runs
    independently; seeded, so the same runs always give the same interval."""
    rng = random.Random(0)
    ratios = sorted(statistics.median(rng.choices(kv, k=len(kv))) /
                    statistics.median(rng.choices(db, k=len(db))) for _ in range(rounds))
    return ratios[int(0.025 * rounds)], ratios[int(0.975 * rounds) - 1]


def verdict(row: dict[str, float], target: float) -> str:
    """Whether the runs show kvbench at >= target x db_bench, show it below, or cannot tell."""
    if row["ci_low"] >= target:
        return "meets"
    if row["ci_high"] < target:
        return "below"
    return "unresolved"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num", type=int, default=1000000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cache_size", type=int, default=256 << 20)
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    parser.add_argument("--kvbench", default=None, help="default: build/<host gcc preset>/src/kvbench")
    parser.add_argument("--db_bench", default=shutil.which("db_bench") or "db_bench")
    parser.add_argument("--workdir", default=None, help="where the databases go (default: a temp dir)")
    parser.add_argument("--target", type=float, default=0.97,
                        help="the ratio each verdict is judged against (default 0.97)")
    parser.add_argument("--min_ratio", type=float, default=0.0,
                        help="exit 1 if any kvbench/db_bench median ratio is below this")
    args = parser.parse_args()

    if args.kvbench is None:
        args.kvbench = default_kvbench()
    benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [b for b in benchmarks if b not in BENCHMARKS]
    if unknown or args.runs < 1 or args.num < 1:
        parser.error(f"unknown benchmarks {unknown}" if unknown else "--runs and --num must be >= 1")
    for tool in (args.kvbench, args.db_bench):
        if not shutil.which(tool) and not os.access(tool, os.X_OK):
            print(f"compare_dbbench: {tool} not found (build kvbench; apt-get install rocksdb-tools)",
                  file=sys.stderr)
            return 2

    work = args.workdir or tempfile.mkdtemp(prefix="kvbench-vs-dbbench-")
    os.makedirs(work, exist_ok=True)
    results: dict[str, dict[str, list[float]]] = {"db_bench": {b: [] for b in benchmarks},
                                                 "kvbench": {b: [] for b in benchmarks}}
    print(f"compare_dbbench: {args.runs} alternating runs of {','.join(benchmarks)} at "
          f"--num={args.num}, cache {args.cache_size} B, compression none; databases in {work}")
    print("db_bench: " + " ".join(db_bench_args(args.db_bench, "DB", args.num, args.cache_size,
                                                benchmarks)[1:]))
    print("kvbench:  " + " ".join(kvbench_args(args.kvbench, "DB", args.num, args.cache_size,
                                               benchmarks, "OUT.json")[1:]))
    try:
        for i in range(args.runs):
            order = ["db_bench", "kvbench"] if i % 2 == 0 else ["kvbench", "db_bench"]
            for tool in order:
                db = os.path.join(work, tool)
                shutil.rmtree(db, ignore_errors=True)
                start = time.monotonic()
                if tool == "db_bench":
                    got = run_db_bench(db_bench_args(args.db_bench, db, args.num, args.cache_size,
                                                     benchmarks), benchmarks)
                else:
                    out = os.path.join(work, f"kvbench-{i}.json")
                    got = run_kvbench(kvbench_args(args.kvbench, db, args.num, args.cache_size,
                                                   benchmarks, out), out, benchmarks)
                for b in benchmarks:
                    results[tool][b].append(got[b])
                print(f"  run {i + 1} {tool:8s} ({time.monotonic() - start:5.1f}s): " +
                      "  ".join(f"{b} {got[b]:,.0f}" for b in benchmarks), flush=True)
                shutil.rmtree(db, ignore_errors=True)
    except RuntimeError as e:
        print(f"compare_dbbench: {e}", file=sys.stderr)
        return 1
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"{'benchmark':12s} {'db_bench ops/s':>15s} {'cv':>6s} {'kvbench ops/s':>15s} "
          f"{'cv':>6s} {'ratio':>7s} {'95% interval':>15s} {'vs ' + str(args.target):>11s}  "
          "paired: median [min, max]")
    worst = float("inf")
    for b in benchmarks:
        row = summarize(results["db_bench"][b], results["kvbench"][b])
        worst = min(worst, row["ratio"])
        interval = f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        print(f"{b:12s} {row['db_median']:15,.0f} {row['db_cv']:6.1%} {row['kv_median']:15,.0f} "
              f"{row['kv_cv']:6.1%} {row['ratio']:7.3f} {interval:>15s} "
              f"{verdict(row, args.target):>11s}  {row['paired_median']:.3f} "
              f"[{row['paired_min']:.3f}, {row['paired_max']:.3f}]")
    print(f"(ratio = kvbench median / db_bench median over {args.runs} runs; cv = run-to-run "
          "coefficient of variation;\n 95% interval = bootstrap of that ratio; 'meets' or 'below' "
          "only when the whole interval is on one side of the target, else 'unresolved';\n "
          "paired = kvbench/db_bench of the two runs made back to back in each round, which "
          "cancels drift slower than one round)")
    if worst < args.min_ratio:
        print(f"compare_dbbench: a ratio is below --min_ratio={args.min_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
