"""kvb worker, run: the two ends of kvb's Slurm executor (measure/fleet.py). Its command line
and --help: commands/parsers/worker.py (kvb's start: docs/kvbtools.md).

`block` makes the plan's Runner again from its inputs, by the kind the spec names: the one place
that knows every portable Runner (matrix's and versions', and the bisect's).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any, Callable

from kvbtools.core import results
from kvbtools.core.errors import UsageError
from kvbtools.measure import fleet, series_run
from kvbtools.measure.bisect import series as bisect_series

# A Runner's kind (fleet.Portable.kind) -> how it is made again from its to_json.
RUNNERS: dict[str, Callable[[dict[str, Any]], fleet.Portable]] = {
    series_run.SeriesRunner.kind: series_run.SeriesRunner.from_json,
    bisect_series.CommitRunner.kind: bisect_series.CommitRunner.from_json,
}


def block(args: argparse.Namespace) -> int:
    """kvb worker block SPEC.json."""
    spec = results.read_json(args.spec)
    if not isinstance(spec, dict) or spec.get("kind") not in RUNNERS or "result" not in spec:
        raise UsageError(f"{args.spec}: not a block of kvb's Slurm executor")
    return fleet.run_block(spec, RUNNERS[spec["kind"]](spec["runner"]))


def exec_command(args: argparse.Namespace) -> int:
    """kvb worker exec ... -- COMMAND."""
    cmd = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not cmd:
        raise UsageError("worker exec: no command after --")
    if not os.path.isdir(args.dir):
        raise UsageError(f"worker exec: --dir {args.dir} is not a directory")
    return fleet.exec_job(cmd, shlex.split(args.sbatch), args.dir, args.name, args.poll,
                          lambda line: print(line, file=sys.stderr, flush=True))
