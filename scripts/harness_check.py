#!/usr/bin/env python3
"""Measures kvbench's own cost, with references taken in the same run.

1. Harness cost per op: readrandom on the `null` engine, 1 thread (ns/op = 1e9 / ops_per_sec),
   beside the `memory` engine's readrandom at the same --num: the share of a cheap in-memory
   lookup that is the harness itself.
2. Harness memory vs --num: fillrandom on `null` at a small and a large --num; peak RSS must not
   grow with --num (no key vectors: the fill order is a computed permutation).

  scripts/harness_check.py [--kvbench PATH] [--reads 20000000] [--small 1000000] [--large 100000000]
Exits 1 if a target is missed (--max_ns_per_op, --max_rss_growth_mib).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(kvbench: str, engine: str, benchmarks: str, num: int, tmp: str,
        extra: list[str]) -> dict:
    out = os.path.join(tmp, f"{engine}-{benchmarks}-{num}.json")
    subprocess.run([kvbench, f"--engine={engine}", f"--db={tmp}/{engine}", f"--num={num}",
                    f"--benchmarks={benchmarks}", "--threads=1", "--report_interval_seconds=0",
                    f"--json={out}", *extra], check=True, stdout=subprocess.DEVNULL)
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kvbench", default=None)
    p.add_argument("--reads", type=int, default=20_000_000)
    p.add_argument("--small", type=int, default=1_000_000)
    p.add_argument("--large", type=int, default=100_000_000)
    p.add_argument("--max_ns_per_op", type=float, default=60.0)
    p.add_argument("--max_rss_growth_mib", type=float, default=8.0)
    a = p.parse_args()
    if a.kvbench is None:
        preset = subprocess.run([os.path.join(here, "host-preset.sh"), "gcc"], check=True,
                                capture_output=True, text=True).stdout.strip()
        a.kvbench = os.path.join(os.path.dirname(here), "build", preset, "src", "kvbench")

    failed = False
    with tempfile.TemporaryDirectory(prefix="kvbench-harness-") as tmp:
        null = run(a.kvbench, "null", "readrandom", a.small, tmp, [f"--reads={a.reads}"])
        mem = run(a.kvbench, "memory", "fillseq,readrandom", a.small, tmp,
                  [f"--reads={min(a.reads, 5_000_000)}"])
        null_ns = 1e9 / null["results"][0]["roles"][0]["ops_per_sec"]
        mem_ns = 1e9 / mem["results"][1]["roles"][0]["ops_per_sec"]
        print(f"harness cost: null readrandom {null_ns:.1f} ns/op "
              f"(target <= {a.max_ns_per_op:.0f}); memory readrandom {mem_ns:.1f} ns/op; "
              f"harness = {null_ns / mem_ns:.2f} of the memory engine's op")
        failed |= null_ns > a.max_ns_per_op

        rss = {}
        for num in (a.small, a.large):
            doc = run(a.kvbench, "null", "fillrandom", num, tmp, [])
            rss[num] = doc["results"][0]["peak_rss_bytes"] / 1048576.0
        growth = rss[a.large] - rss[a.small]
        print(f"harness memory: null fillrandom peak RSS {rss[a.small]:.1f} MiB at --num={a.small}, "
              f"{rss[a.large]:.1f} MiB at --num={a.large}: +{growth:.2f} MiB "
              f"(target < {a.max_rss_growth_mib:.0f}); ratio {rss[a.large] / rss[a.small]:.3f}")
        failed |= growth >= a.max_rss_growth_mib
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
