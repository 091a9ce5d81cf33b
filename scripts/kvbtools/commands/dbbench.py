"""kvb dbbench, run: what the command does with its arguments. Its command line and
--help: commands/parsers/dbbench.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

from kvbtools.commands import dbbench_instructions, dbbench_parity


# The subcommands as commands/parsers/dbbench_*.py name them.
parity = dbbench_parity.main
instructions = dbbench_instructions.main
