"""kvb selfcheck: kvbench's own cost per op and its memory against --num, measured in one run.

1. Harness cost per op: readrandom on the `null` engine, 1 thread (ns/op = 1e9 / ops/s), beside
   the `memory` engine's readrandom at the same --num, measured right after: the share of a
   cheap in-memory lookup that is the harness itself. Then the same null readrandom's CPU time
   per op of its own thread (which other processes on a loaded machine do not inflate, as they
   do wall time) three ways in a row: every op timed (the default), --latency_sample=16, and
   untimed (--latency_sample=1000000); the difference between the first and the last is what
   timing an op costs (one clock read and a histogram update; docs/metrics.md).
2. Harness memory against --num: fillrandom on `null` at --small and at --large keys; peak RSS
   must not grow with --num (no key vectors: the fill order is a computed permutation).

A benchmark, not a test: it prints the figures (and writes them with --json), and fails (exit 1)
only on gross breakage: null readrandom slower than --max-ns-per-op (default 1000 ns, some 30x
what a healthy build measures), or peak RSS growing by more than --max-rss-growth-mib (default 4)
plus --max-rss-bytes-per-key (default 1) per key added (a vector of 8-byte keys costs 8).
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "selfcheck", __doc__, "main")
    p.add_argument("--kvbench", help="default: build/<host gcc native preset>/src/kvbench")
    p.add_argument("--reads", type=int, default=20_000_000, help="null readrandom ops "
                   "(default 20000000; the memory engine reads at most 5000000)")
    p.add_argument("--small", type=int, default=1_000_000, help="--num of the small fill and "
                   "of the reads (default 1000000)")
    p.add_argument("--large", type=int, default=100_000_000,
                   help="--num of the large fill (default 100000000)")
    p.add_argument("--max-ns-per-op", type=float, default=1000.0,
                   help="fail above this null readrandom cost (default 1000)")
    p.add_argument("--max-rss-growth-mib", type=float, default=4.0,
                   help="peak RSS growth allowed whatever --num (default 4)")
    p.add_argument("--max-rss-bytes-per-key", type=float, default=1.0,
                   help="peak RSS growth allowed per key of --large beyond --small (default 1)")
    p.add_argument("--json", metavar="OUT", help="also write the figures here")
