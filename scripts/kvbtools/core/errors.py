"""The two errors every kvb command raises; scripts/kvb catches them once, at the top.

UsageError: the user's input is wrong (a flag, a file that is not a usable result, a range):
exit 2 with the message. RunError: the input was fine but running failed (a build, a benchmark,
a store that cannot be written): exit 1 with the message. No command prints a traceback for
either, and none catches them itself only to print and exit.
"""
from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: kvb prints `kvb: error: <message>` and exits 2."""


class RunError(Exception):
    """A failure while running: kvb prints `kvb: error: <message>` and exits 1."""
