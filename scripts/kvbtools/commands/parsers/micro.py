"""kvb micro: kvbench_micro on one block size with a short minimum time, GB/s per function.

  kvb micro [--binary build/<preset>/bench/kvbench_micro] [-- --cache_cold]
      runs it (the quick start's micro summary) and prints GB/s, the fraction of the ceiling
      (memory/read of the same block size: "of read") and compression ratio
  kvb micro --compare gcc.json clang.json ...
      JSON that kvbench_micro wrote (--benchmark_out=FILE), e.g. two presets: the context
      entries that differ, then GB/s per benchmark side by side with the ratio to the first
      file (the median of the repetitions when the run had --benchmark_repetitions)

GB/s here is 10^9 bytes per second of uncompressed input (Google Benchmark's console prints
GiB/s). For careful numbers run kvbench_micro itself with --benchmark_repetitions, and compare
with `kvb compare` (verdicts with a significance test); docs/micro.md.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "micro", __doc__, "main")
    p.add_argument("--binary", help="kvbench_micro (default: the host's gcc native build)")
    p.add_argument("--compare", nargs="+", metavar="JSON",
                   help="compare kvbench_micro JSON files instead of running the binary")
    p.add_argument("--block-size", type=int, default=4096, help="bytes (default 4096)")
    p.add_argument("--min-time", type=float, default=0.05,
                   help="--benchmark_min_time per benchmark, seconds (default 0.05)")
    p.add_argument("--json", metavar="OUT", help="also keep kvbench_micro's JSON here")
    p.add_argument("extra", nargs="*",
                   help="after --: more kvbench_micro flags, e.g. -- --cache_cold")
