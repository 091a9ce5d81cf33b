"""kvb crashtest: kill fills with SIGKILL and check that every acknowledged write survived.

In the spirit of RocksDB's db_stress crash test. Per trial: a fill (fillrandom or fillseq) runs
with --ack_file, in which each worker thread publishes how many of its writes the engine has
acknowledged; at a seeded random moment the fill gets SIGKILL; then kvbench reopens the database
with --use_existing_db --benchmarks=verifyacked, which reads back every acknowledged key and
checks its value. That also checks that the database reopens after the kill.

With --sync (the default) every acknowledged write must be there: a lost write, a failed reopen
or a wrong value fails the run (exit 1). Without --sync a lost write is reported, not a failure:
SIGKILL is not a power loss, the page cache survives it, so what is lost depends on whether the
engine had handed the write to the OS before acknowledging it (docs/workloads.md).
"""
from __future__ import annotations

import argparse
from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "crashtest", __doc__, "main")
    p.add_argument("--kvbench", required=True, help="the kvbench binary")
    p.add_argument("--engines",
                   help="comma-separated engines (default: every storage engine compiled into "
                        "--kvbench, as its --list-engines says)")
    p.add_argument("--trials", type=int, default=10, help="kills per engine (default 10)")
    p.add_argument("--sync", action=argparse.BooleanOptionalAction, default=True,
                   help="fill with --sync (default); --no-sync reports losses without failing")
    p.add_argument("--threads", type=int, default=2, help="fill threads (default 2)")
    p.add_argument("--num", type=int, default=10_000_000,
                   help="fill size; large enough that the fill is still running at the kill "
                        "(default 10000000; the kill bounds what is written)")
    p.add_argument("--benchmark", choices=["fillrandom", "fillseq"], default="fillrandom")
    p.add_argument("--kill-after", default="0.5,3", metavar="MIN,MAX",
                   help="seconds after the fill's first acknowledged write, drawn uniformly "
                        "(default 0.5,3)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the kill moments and each trial's kvbench --seed (default 0)")
    p.add_argument("--json", metavar="OUT", help="write every trial and the tallies here")
    p.add_argument("--dir", help="where the databases go (default: a new temporary directory)")
    p.add_argument("--keep", action="store_true",
                   help="keep every trial's database (failed trials' are always kept)")
    p.add_argument("--quiet", action="store_true", help="no per-trial lines on stderr")
