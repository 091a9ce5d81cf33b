"""kvb: tools around kvbench results. Every command is a module with register(subparsers); its
errors reach main() as UsageError (exit 2) or RunError (exit 1), printed once, here."""
from __future__ import annotations

import argparse
import os
import sys

from kvbtools.commands import (bisect, compare, crashtest, dbbench, export, history, matrix, micro,
                               report, selfcheck, store, trend, validate, versions)
from kvbtools.commands import command
from kvbtools.core.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_USAGE, \
    RunError, UsageError
from kvbtools.core.host import ROOT, tool_version

# In `kvb --help` order.
COMMANDS = (report, validate, compare, matrix, versions, bisect, crashtest, micro, dbbench,
            selfcheck, store, history, trend, export)

DESCRIPTION = """kvb: tools around kvbench results.

See docs/compare.md, docs/json.md, docs/micro.md, docs/dbbench-parity.md, docs/history.md
(store, history, trend, export) and docs/workloads.md (crash consistency).

Exit status, the same for every command (docs/cli.md, "kvb: exit status"):
  0    done
  1    runtime failure: the input was fine, running it failed (a build, a run, a write)
  2    bad input: nothing was run or written (a flag, a file that is not a usable result,
       an output path that cannot be written, an unknown engine, a damaged store)
  3    a gate (--fail-on-regression, --fail-on-change) found a change
  4    a gate could not decide, and found no change
  130  interrupted; 141 the reader of the output went away

kvb runs under /usr/bin/python3 when that exists (Debian's packages, e.g. python3-matplotlib,
live there): started by another python3, it re-executes itself once under /usr/bin/python3.
KVB_PYTHON_CHOSEN=1 in the environment keeps the interpreter it was started with."""


def parser() -> argparse.ArgumentParser:
    p = command.Parser(prog="kvb", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"kvb {tool_version()}: kvbench tools in {ROOT}, Python "
                           f"{sys.version.split()[0]} at {sys.executable}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return p


def _error(e: Exception) -> None:
    for line in str(e).splitlines() or [type(e).__name__]:
        print(f"kvb: error: {line}", file=sys.stderr)


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
        # A command may say that its failures exit otherwise (bisect --step: git bisect run reads
        # 1..127 as "this commit is bad", so a failure of kvb itself must exit 128).
        failure = getattr(args, "failure_exit", None)
        try:
            rc = args.func(args)
            sys.stdout.flush()
            return rc
        except (UsageError, RunError) as e:
            _error(e)
            return failure or getattr(e, "exit_status",
                                      EXIT_USAGE if isinstance(e, UsageError) else EXIT_FAILURE)
        except Exception as e:  # noqa: BLE001 - only where the command asked for it
            if failure is None:
                raise
            print(f"kvb: internal error: {type(e).__name__}: {e}", file=sys.stderr)
            return failure
    except KeyboardInterrupt:
        print("kvb: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (kvb report ... | head): nothing more to say to it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
