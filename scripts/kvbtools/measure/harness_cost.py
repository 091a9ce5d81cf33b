"""kvb selfcheck's measurements: kvbench's own cost per op (readrandom on the null engine beside
the memory engine's, and its thread's CPU per op with every op timed, 1 in 16, and none) and its
peak RSS against --num (null fillrandom at two sizes). commands/selfcheck.py judges and prints
them."""
from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Any

from kvbtools.core import results
from kvbtools.core.errors import RunError


def measure(kvbench: str, engine: str, benchmarks: str, num: int, tmp: str,
            extra: list[str]) -> dict[str, Any]:
    """One kvbench run on one thread; its checked JSON document."""
    out = os.path.join(tmp, f"{engine}-{benchmarks}-{num}.json")
    cmd = [kvbench, f"--engine={engine}", f"--db={tmp}/{engine}", f"--num={num}",
           f"--benchmarks={benchmarks}", "--threads=1", "--report_interval_seconds=0",
           f"--json={out}", *extra]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RunError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return results.load_written(out, results.KVBENCH, kvbench).doc


def ns_per_op(doc: dict[str, Any], benchmark: str) -> float:
    rate = next(r["roles"][0]["ops_per_sec"] for r in doc["results"]
                if r["benchmark"] == benchmark)
    if rate <= 0:
        raise RunError(f"{benchmark} measured no operation")
    return 1e9 / rate


def cpu_ns_per_op(doc: dict[str, Any], benchmark: str) -> float:
    """The CPU time of the benchmark's own threads per op, in ns."""
    role = next(r["roles"][0] for r in doc["results"] if r["benchmark"] == benchmark)
    return role["cost"]["thread_cpu_us_per_op"] * 1000.0


# --latency_sample of the three CPU-time measurements: every op timed, 1 in 16, (nearly) none.
SAMPLING = {"": 1, "sampled_": 16, "untimed_": 1_000_000}


def figures(kvbench: str, reads: int, small: int, large: int) -> dict[str, Any]:
    """Every figure of kvb selfcheck (docs/metrics.md), by name: ns per op of null and memory
    readrandom (`reads` reads of `small` keys), null readrandom's CPU ns per op under each
    SAMPLING, and null fillrandom's peak RSS at `small` and `large` keys and its growth."""
    fig: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kvb-selfcheck-") as tmp:
        null = measure(kvbench, "null", "readrandom", small, tmp, [f"--reads={reads}"])
        mem = measure(kvbench, "memory", "fillseq,readrandom", small, tmp,
                      [f"--reads={min(reads, 5_000_000)}"])
        fig["null_readrandom_ns_per_op"] = ns_per_op(null, "readrandom")
        fig["memory_readrandom_ns_per_op"] = ns_per_op(mem, "readrandom")
        for prefix, n in SAMPLING.items():
            doc = null if n == 1 else measure(kvbench, "null", "readrandom", small, tmp,
                                              [f"--reads={reads}", f"--latency_sample={n}"])
            fig[f"null_readrandom_{prefix}cpu_ns_per_op"] = cpu_ns_per_op(doc, "readrandom")
        for size, num in (("small", small), ("large", large)):
            doc = measure(kvbench, "null", "fillrandom", num, tmp, [])
            fig[f"peak_rss_{size}_bytes"] = doc["results"][0]["peak_rss_bytes"]
    growth = fig["peak_rss_large_bytes"] - fig["peak_rss_small_bytes"]
    fig["rss_growth_bytes"] = growth
    fig["rss_growth_bytes_per_key"] = growth / (large - small)
    return fig
