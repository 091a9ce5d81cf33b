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
import os
from dataclasses import asdict
from typing import Any

from kvbtools.commands import command
from kvbtools.core import manifest, output, results, table
from kvbtools.core.errors import UsageError
from kvbtools.measure.crash_trials import Tally, run_trials


def register(sub: Any) -> None:
    p = command.add(sub, "crashtest", __doc__, run)
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


def parse_kill_after(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        low, high = (float(parts[0]), float(parts[1])) if len(parts) == 2 else (-1.0, -1.0)
    except ValueError:
        low = high = -1.0
    if not (0 <= low <= high <= 86400):
        raise UsageError(f"--kill-after '{text}': expected MIN,MAX seconds with "
                         "0 <= MIN <= MAX <= 86400")
    return low, high


def tally_table(tallies: list[Tally], sync: bool) -> str:
    head = ["engine", "trials", "killed", "acked writes checked", "lost writes",
            "trials with loss", "reopen failures", "corruptions", "errors", "verdict"]
    rows = []
    for a in tallies:
        if a.failed(sync):
            verdict = "FAIL"
        elif a.lost:
            verdict = "lost writes (no --sync: reported, not a failure)"
        else:
            verdict = "OK"
        rows.append([a.engine, str(a.trials), str(a.killed), f"{a.checked:,}", f"{a.lost:,}",
                     str(a.trials_with_loss), str(a.reopen_failures), str(a.corruptions),
                     str(a.errors), verdict])
    return "\n".join(table.render(rows, header=head, left=(0, -1), rule=True))


def checked_flags(args: argparse.Namespace) -> tuple[list[str], float, float]:
    """The engines to test (--engines, or every storage engine of the binary) and the range of
    --kill-after; refuses bad flags before any trial."""
    if args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}")
    if args.threads < 1 or args.threads > 1024:
        raise UsageError(f"--threads must be 1..1024, got {args.threads}")
    if args.num < 1:
        raise UsageError(f"--num must be positive, got {args.num}")
    low, high = parse_kill_after(args.kill_after)
    if not (os.path.isfile(args.kvbench) and os.access(args.kvbench, os.X_OK)):
        raise UsageError(f"--kvbench {args.kvbench} is not an executable file")
    available = manifest.engines_of(args.kvbench)
    storage = [e for e, kind in available.items() if kind == "storage"]
    if args.engines is None and not storage:
        raise UsageError(f"{args.kvbench} has no storage engine compiled in; name engines "
                         "with --engines")
    engines = args.engines.split(",") if args.engines is not None else storage
    for e in engines:
        if e not in available:
            raise UsageError(f"engine '{e}' is not compiled into {args.kvbench} "
                             f"(it has: {', '.join(available)})")
    if len(set(engines)) != len(engines):
        raise UsageError(f"--engines '{args.engines}' names an engine twice")
    if args.dir and os.path.isdir(args.dir) and os.listdir(args.dir):
        raise UsageError(f"--dir {args.dir} is not empty; give a new or empty directory")
    return engines, low, high


def run(args: argparse.Namespace) -> int:
    output.check_writable(args.json, "--json")  # exit 2 before any trial (docs/cli.md)
    output.check_directory(args.dir, "--dir")
    engines, low, high = checked_flags(args)
    trials, tallies = run_trials(args, engines, low, high)
    failed = any(a.failed(args.sync) for a in tallies)
    print(f"crashtest: {args.benchmark}, {'--sync' if args.sync else 'no --sync'}, "
          f"--threads={args.threads}, --num={args.num}, SIGKILL {low:g}..{high:g} s after the "
          f"first acknowledged write, --seed={args.seed}")
    print(tally_table(tallies, args.sync))
    for a in tallies:
        for m in a.messages:
            print(f"  {a.engine} {m}")
    if any(not t.killed for t in trials):
        print("  note: some fills ended before their kill; raise --num so that every trial "
              "kills a running fill")
    rc = 1 if failed else 0
    if args.json:
        results.write_json(args.json, {
            "schema": "kvbench-crashtest", "schema_version": 1, "kvbench": args.kvbench,
            "benchmark": args.benchmark, "sync": args.sync, "threads": args.threads,
            "num": args.num, "kill_after": [low, high], "seed": args.seed, "exit": rc,
            "engines": [asdict(a) for a in tallies], "trials": [asdict(t) for t in trials]})
    return rc
