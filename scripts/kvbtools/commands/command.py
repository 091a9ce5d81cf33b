"""How a kvb command registers itself: every command's parser module (commands/parsers/) has

    def register(subparsers) -> None:
        p = command.add(subparsers, "name", __doc__, "main")
        p.add_argument(...)

and its run module (commands/name.py) has main(args), which turns the arguments into a typed
request (a frozen dataclass) before anything else and raises kvbtools.core.errors.UsageError or
RunError; scripts/kvb (kvbtools.commands.cli) imports the run module only then, and catches the
errors. Argument groups that several commands share are in commands/parsers/groups.py, the
values they become in commands/arguments.py. Nothing below commands/ sees argparse
(tests/kvbtools_layers_test.py).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, NoReturn, TypeVar

T = TypeVar("T")


class Parser(argparse.ArgumentParser):
    """argparse's parser with kvb's one error line: the usage, then `kvb: error: COMMAND:
    message` on stderr and exit 2 (docs/cli.md), as for every other bad input. Subcommands'
    parsers are of the same class (add_subparsers makes its parsers of its parser's type)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.split(" ", 1)[1] + ": " if " " in self.prog else ""
        self.exit(2, f"kvb: error: {command}{message}\n")


class Once(argparse.Action):
    """An option that may be given once: a second one is an error naming it (exit 2), where
    argparse's own store would keep the last silently (kvb compare --base A --base B compared
    B alone)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            shown = " ".join(values) if isinstance(values, list) else str(values)
            parser.error(f"{option_string} given twice (again with {shown}): give it once; "
                         f"{option_string} A B takes several values")
        setattr(namespace, self.dest, values)


def help_line(doc: str) -> str:
    """A command's line in `kvb --help`: its docstring's first line after "kvb name: "."""
    return doc.strip().splitlines()[0].split(": ", 1)[-1].rstrip(".;,:")


def add(subparsers: Any, name: str, doc: str | None,
        func: str | None) -> argparse.ArgumentParser:
    """The parser of command `name`: its --help is the module docstring `doc`, whose first line
    ("kvb name: what it does") gives the one-line help of `kvb --help`. `func` names the function
    of the command's run module (cli.COMMANDS) that runs it, given the parsed arguments (None for
    a group of subcommands, each with its own)."""
    text = (doc or name).strip()
    p = subparsers.add_parser(name, help=help_line(text), description=text,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    if func is not None:
        p.set_defaults(func=func)
    return p


def checked(text: str, convert: Callable[[str], T], invalid: str, in_range: Callable[[T], bool],
            out_of_range: str) -> T:
    """For an argument's type=: `convert(text)`, or argparse's error `invalid` when it raises
    ValueError and `out_of_range` when `in_range` refuses the value."""
    try:
        v = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(invalid) from None
    if not in_range(v):
        raise argparse.ArgumentTypeError(out_of_range)
    return v
