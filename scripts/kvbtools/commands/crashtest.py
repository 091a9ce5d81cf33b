"""kvb crashtest, run: what the command does with its arguments. Its command line and
--help: commands/parsers/crashtest.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass

from kvbtools.core import manifest, output, results, table
from kvbtools.core.errors import UsageError
from kvbtools.measure.crash_trials import Tally, TrialConfig, run_trials


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(CrashRequest.of(args))


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


@dataclass(frozen=True)
class CrashRequest:
    """kvb crashtest's arguments as values."""
    kvbench: str
    engines: str | None          # comma-separated; None: every storage engine of --kvbench
    trials: int
    sync: bool
    threads: int
    num: int
    benchmark: str
    kill_after: str              # MIN,MAX seconds, as given
    seed: int
    json: str | None
    dir: str | None
    keep: bool
    quiet: bool

    @staticmethod
    def of(args: argparse.Namespace) -> "CrashRequest":
        return CrashRequest(args.kvbench, args.engines, args.trials, args.sync, args.threads,
                            args.num, args.benchmark, args.kill_after, args.seed, args.json,
                            args.dir, args.keep, args.quiet)


def checked_flags(req: CrashRequest) -> tuple[list[str], float, float]:
    """The engines to test (--engines, or every storage engine of the binary) and the range of
    --kill-after; refuses bad flags before any trial."""
    if req.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {req.trials}")
    if req.threads < 1 or req.threads > 1024:
        raise UsageError(f"--threads must be 1..1024, got {req.threads}")
    if req.num < 1:
        raise UsageError(f"--num must be positive, got {req.num}")
    low, high = parse_kill_after(req.kill_after)
    if not (os.path.isfile(req.kvbench) and os.access(req.kvbench, os.X_OK)):
        raise UsageError(f"--kvbench {req.kvbench} is not an executable file")
    available = manifest.engines_of(req.kvbench)
    storage = [e for e, kind in available.items() if kind == "storage"]
    if req.engines is None and not storage:
        raise UsageError(f"{req.kvbench} has no storage engine compiled in; name engines "
                         "with --engines")
    engines = req.engines.split(",") if req.engines is not None else storage
    for e in engines:
        if e not in available:
            raise UsageError(f"engine '{e}' is not compiled into {req.kvbench} "
                             f"(it has: {', '.join(available)})")
    if len(set(engines)) != len(engines):
        raise UsageError(f"--engines '{req.engines}' names an engine twice")
    if req.dir and os.path.isdir(req.dir) and os.listdir(req.dir):
        raise UsageError(f"--dir {req.dir} is not empty; give a new or empty directory")
    return engines, low, high


def run(req: CrashRequest) -> int:
    output.check_outputs(  # exit 2 before any trial (docs/cli.md)
        [("--json", req.json), ("--dir", req.dir, ("*-[0-9]*",))], [("--kvbench", req.kvbench)])
    engines, low, high = checked_flags(req)
    trials, tallies = run_trials(TrialConfig(
        req.kvbench, req.benchmark, req.num, req.threads, req.sync, req.seed, req.trials,
        (low, high), req.dir, req.keep, req.quiet), engines)
    failed = any(a.failed(req.sync) for a in tallies)
    print(f"crashtest: {req.benchmark}, {'--sync' if req.sync else 'no --sync'}, "
          f"--threads={req.threads}, --num={req.num}, SIGKILL {low:g}..{high:g} s after the "
          f"first acknowledged write, --seed={req.seed}")
    print(tally_table(tallies, req.sync))
    for a in tallies:
        for m in a.messages:
            print(f"  {a.engine} {m}")
    if any(not t.killed for t in trials):
        print("  note: some fills ended before their kill; raise --num so that every trial "
              "kills a running fill")
    rc = 1 if failed else 0
    if req.json:
        results.write_json(req.json, {
            "schema": "kvbench-crashtest", "schema_version": 1, "kvbench": req.kvbench,
            "benchmark": req.benchmark, "sync": req.sync, "threads": req.threads,
            "num": req.num, "kill_after": [low, high], "seed": req.seed, "exit": rc,
            "engines": [asdict(a) for a in tallies], "trials": [asdict(t) for t in trials]})
    return rc
