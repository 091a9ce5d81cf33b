"""How a kvb command registers itself: every command module has

    def register(subparsers) -> None:
        p = command.add(subparsers, "name", __doc__, run)
        p.add_argument(...)

and raises kvbtools.errors.UsageError or RunError; scripts/kvb (kvbtools.cli) catches them.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

Handler = Callable[[argparse.Namespace], int]


def add(subparsers: Any, name: str, doc: str | None,
        func: Handler | None) -> argparse.ArgumentParser:
    """The parser of command `name`: its --help is the module docstring `doc`, whose first line
    ("kvb name: what it does") gives the one-line help of `kvb --help`. `func` runs it (None for a
    group of subcommands, each with its own)."""
    text = (doc or name).strip()
    first = text.splitlines()[0]
    p = subparsers.add_parser(name, help=first.split(": ", 1)[-1].rstrip("."), description=text,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    if func is not None:
        p.set_defaults(func=func)
    return p
