"""The errors every kvb command raises, and the exit statuses of kvb; scripts/kvb catches the
errors once, at the top (kvbtools.commands.cli).

UsageError: the user's input is wrong (a flag, a file that is not a usable result, a range,
sides that are not comparable, a damaged store): exit 2 with the message, before anything is
written. RunError: the input was fine but running failed (a build, a benchmark, a store that
cannot be written): exit 1 with the message. No command prints a traceback for either, and none
catches them itself only to print and exit.

The exit statuses are one table for every subcommand (docs/cli.md, tests/exit_codes_test.py):
"""
from __future__ import annotations

# kvb's exit statuses; docs/cli.md's table lists them with examples.
EXIT_OK = 0          # done; a gate (--fail-on-regression, --fail-on-change) found no change
EXIT_FAILURE = 1     # runtime failure: the input was fine, running it failed
EXIT_USAGE = 2       # bad input: nothing was run or written
EXIT_CHANGED = 3     # a gate found a change (a significant regression, a change point)
EXIT_UNDECIDED = 4   # a gate could not decide: too few runs, or an interval that spans both
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class UsageError(Exception):
    """Bad input from the user: kvb prints `kvb: error: <message>` and exits 2."""


class RunError(Exception):
    """A failure while running: kvb prints `kvb: error: <message>` and exits 1."""


def failure_reason(stderr: str, program: str) -> str:
    """Why a program failed, from its stderr, to lead kvb's error: its error lines without the
    program's own prefix ("PATH: error: " / "kvbench_micro: error: "), else its last line; its
    warnings ("WARNING: load average ...") are not a reason."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() and "warning:" not in ln.lower()]
    chosen = errors or [ln for ln in lines if "warning:" not in ln.lower()][-1:] or lines[-1:]
    out = []
    for ln in chosen:
        head, sep, rest = ln.partition(": error: ")
        out.append(rest if sep and (head.endswith(program) or " " not in head) else ln)
    return "; ".join(out) or "no message"
