"""kvb: tools around kvbench results. Every command is two modules: its parser (commands/parsers/,
with register(subparsers)) and its run module; their errors reach main() as UsageError (exit 2)
or RunError (exit 1), printed once, here.

Only the parser of the command asked for is imported, and its run module only when the command
runs: every module at once made `kvb --version` 557 ms against the interpreter's 138, bisect's
alone 0.36 s; bisect's run module still took `kvb bisect --help` from 0.085 s to 0.19 s of CPU
(issue 38, docs/kvbtools.md "kvb's start"). COMMANDS names each command's two modules and its
line in `kvb --help`; importlib imports the chosen ones by those names, the one dynamic import
of kvb's own modules (tests/kvbtools_layers_test.py holds the table's modules to the layers;
tests/scripts_test.py holds each line equal to its parser's docstring)."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Callable, Sequence

from kvbtools.commands import command
from kvbtools.core.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_USAGE, \
    RunError, UsageError
from kvbtools.core.version import ROOT, tool_version

# In `kvb --help` order: (command, its parser module, its run module, its line in `kvb --help`:
# command.help_line of the parser module's docstring). The parser sets `func`, the name of the run
# module's function that runs the command (command.add).
COMMANDS = (
    ("report", "kvbtools.commands.parsers.report", "kvbtools.commands.report",
     "one summary table over kvbench runs: a line per engine, benchmark and role"),
    ("validate", "kvbtools.commands.parsers.validate", "kvbtools.commands.validate",
     "check kvbench run documents against the whole schema of docs/json.md"),
    ("compare", "kvbtools.commands.parsers.compare", "kvbtools.commands.compare",
     "values of two or more sides and their ratios to the first, with verdicts"),
    ("matrix", "kvbtools.commands.parsers.matrix", "kvbtools.commands.matrix",
     "the same benchmarks across presets, engines, thread counts or configurations"),
    ("versions", "kvbtools.commands.parsers.versions", "kvbtools.commands.versions",
     "kvbench built against several versions of one library, interleaved, compared"),
    ("bisect", "kvbtools.commands.parsers.bisect", "kvbtools.commands.bisect",
     "the commit of a library that made a benchmark slower (or faster), noise and all"),
    ("crashtest", "kvbtools.commands.parsers.crashtest", "kvbtools.commands.crashtest",
     "kill fills with SIGKILL and check that every acknowledged write survived"),
    ("micro", "kvbtools.commands.parsers.micro", "kvbtools.commands.micro",
     "kvbench_micro on one block size with a short minimum time, GB/s per function"),
    ("dbbench", "kvbtools.commands.parsers.dbbench", "kvbtools.commands.dbbench",
     "kvbench's rocksdb engine against RocksDB's db_bench on the same librocksdb"),
    ("selfcheck", "kvbtools.commands.parsers.selfcheck", "kvbtools.commands.selfcheck",
     "kvbench's own cost per op and its memory against --num, measured in one run"),
    ("store", "kvbtools.commands.parsers.store", "kvbtools.commands.store",
     "keep every kvbench and kvbench_micro result in one place (docs/history.md)"),
    ("history", "kvbtools.commands.parsers.history", "kvbtools.commands.history",
     "the series in the results store and their points (docs/history.md)"),
    ("trend", "kvbtools.commands.parsers.trend", "kvbtools.commands.trend",
     "where each series in the results store changed, and what to bisect (docs/history.md)"),
    ("export", "kvbtools.commands.parsers.export", "kvbtools.commands.export",
     "the store's series for the tools people already run (docs/history.md)"),
    ("worker", "kvbtools.commands.parsers.worker", "kvbtools.commands.worker",
     "one job of kvb's Slurm executor, run by Slurm, not by hand (docs/fleet.md)"),
)

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
live there): started as a program, its first lines (sh) start /usr/bin/python3 directly;
started by another python3, it re-executes itself once under /usr/bin/python3.
KVB_PYTHON_CHOSEN=1 in the environment keeps the interpreter it was started with (as a
program: python3 from PATH)."""


class _Version(argparse.Action):
    """--version, its text made when asked for (it runs git): not at every start."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default,
                         help=help or "show kvb's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"kvb {tool_version()}: kvbench tools in {ROOT}, Python "
              f"{sys.version.split()[0]} at {sys.executable}")
        parser.exit()


def chosen(argv: Sequence[str]) -> str | None:
    """The command of a kvb command line: its first word that is not an option (kvb itself takes
    no option with a value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def parser(name: str | None, every: bool = False) -> argparse.ArgumentParser:
    """kvb's parser, with the full parser of command `name` (its parser module imported) and, for
    the others, their line in `kvb --help` alone; every: each command in full (tests)."""
    p = command.Parser(prog="kvb", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command_name, module, _, line in COMMANDS:
        if every or command_name == name:
            importlib.import_module(module).register(sub)
        else:
            sub.add_parser(command_name, help=line)
    return p


def innermost(p: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command that args were parsed by: kvb store add's for
    `kvb store add ...`, so an unknown argument is said with that command's usage."""
    while True:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        chosen_name = getattr(args, subs[0].dest, None) if subs else None
        if chosen_name is None or chosen_name not in subs[0].choices:
            return p
        p = subs[0].choices[chosen_name]


def parse(argv: list[str]) -> argparse.Namespace:
    p = parser(chosen(argv))
    args, extra = p.parse_known_args(argv)
    if extra:
        innermost(p, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    """The function that runs the parsed command: `args.func` of its run module, imported now."""
    run_module = next(run for name, _, run, _ in COMMANDS if name == args.command)
    return getattr(importlib.import_module(run_module), args.func)


def _error(e: Exception) -> None:
    for line in str(e).splitlines() or [type(e).__name__]:
        print(f"kvb: error: {line}", file=sys.stderr)


def main(argv: list[str]) -> int:
    try:
        args = parse(argv)
        # A command may say that its failures exit otherwise (bisect --step: git bisect run reads
        # 1..127 as "this commit is bad", so a failure of kvb itself must exit 128).
        failure = getattr(args, "failure_exit", None)
        try:
            rc = handler(args)(args)
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
