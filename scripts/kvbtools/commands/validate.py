"""kvb validate, run: what the command does with its arguments. Its command line and
--help: commands/parsers/validate.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse

from kvbtools.core import results
from kvbtools.core.errors import UsageError


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(tuple(args.files))


def run(files: tuple[str, ...]) -> int:
    """Every file checked; UsageError listing every problem of every file that has one."""
    lines: list[str] = []
    bad = 0
    for path in files:
        try:
            found = [f"{path}: {p}" for p in
                     results.problems(results.open_document(path), full=True)]
        except UsageError as e:
            found = [str(e)]
        if found:
            bad += 1
            lines.extend(found)
        else:
            print(f"{path}: OK")
    if bad:
        lines.append(f"{bad} of {len(files)} file(s) do not conform to docs/json.md")
        raise UsageError("\n".join(lines))
    return 0
