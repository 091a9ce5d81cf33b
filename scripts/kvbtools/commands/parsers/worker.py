"""kvb worker: one job of kvb's Slurm executor, run by Slurm, not by hand (docs/fleet.md).

  kvb worker block SPEC.json   on a measurement node: the rounds SPEC names, run with the plan's
                               Runner pinned with its canary on this node, every run's document
                               marked with the node; the result written to the file SPEC names
                               after every round
  kvb worker exec --dir DIR --name NAME --sbatch OPTIONS -- COMMAND...
                               where kvb runs: COMMAND (a build) submitted as a batch job with
                               OPTIONS, followed to its end; its output copied to standard
                               output; a job lost with its node submitted again (twice at most)

Exit status: 0 done; 1 the rounds' Runner failed (block: said in the result) or the job failed
(exec: its own exit status, or 1 when it was lost three times); 2 bad input, nothing run.
"""
from __future__ import annotations

import argparse
from typing import Any

from kvbtools.commands import command


def register(sub: Any) -> None:
    p = command.add(sub, "worker", __doc__, None)
    inner = p.add_subparsers(dest="worker_command", required=True, metavar="COMMAND")
    block = inner.add_parser("block", help="rounds of a plan on this node",
                             description="kvb worker block SPEC.json: the rounds of a plan on "
                                         "this node (kvb worker --help)")
    block.add_argument("spec", metavar="SPEC.json")
    block.set_defaults(func="block")
    ex = inner.add_parser("exec", help="a command as a Slurm job, followed to its end",
                          description="kvb worker exec: a command as a Slurm batch job, "
                                      "followed to its end (kvb worker --help)")
    ex.add_argument("--dir", required=True, help="where the job's output is kept until copied")
    ex.add_argument("--name", required=True, help="the job's name (kvb-NAME)")
    ex.add_argument("--sbatch", default="", metavar="OPTIONS",
                    help="sbatch options, one shell-quoted string")
    ex.add_argument("--poll", type=float, default=2.0, help="seconds between two looks")
    ex.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    ex.set_defaults(func="exec_command")
