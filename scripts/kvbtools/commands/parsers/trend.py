"""kvb trend: where each series in the results store changed, and what to bisect (docs/history.md).

Each series' points (the median of each run) go through E-divisive means with Hunter's changes
(scripts/kvbtools/core/edivisive.py): windowed, a Student t-test for significance, weak change
points re-tested against their neighbours. A slide along the whole series is reported as a drift
rather than as a staircase of steps. For each change: the series, the point before and the
point after (time, commit, library versions), the magnitude with its 95% interval, what the
store records as different between the two points and, when that is exactly one library's
version or commit (or kvbench's own commit), the `kvb bisect` command that finds the culprit.
--fail-on-change (for CI) exits 3 when anything is reported, else 4 when a series was too short
to test (undecided), else 0 (docs/cli.md).
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups

# core/changes.Params' defaults, which --help states: Params is behind the statistics'
# imports, too many for every `kvb trend --help`. tests/scripts_test.py holds them equal.
WINDOW = 50
PVALUE = 0.001
MIN_SIZE = 3


def _percent(text: str) -> float:
    return command.checked(text, lambda t: float(t.rstrip("%")) / 100.0,
                           f"not a percentage: {text!r}", lambda v: v >= 0, "must not be negative")


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "trend", __doc__, "main")
    groups.add_selection_arguments(p)
    p.add_argument("--window", type=int, default=WINDOW,
                   help="points per E-divisive window (default 50, as Otava)")
    p.add_argument("--pvalue", type=groups.parse_alpha, default=PVALUE,
                   help="significance of a change, t-test (default 0.001, as Otava)")
    p.add_argument("--min-magnitude", type=_percent, default=0.0, metavar="PERCENT",
                   help="ignore changes smaller than this, e.g. 2%% (default 0); a drift "
                        "counts by its change from the first point to the last")
    p.add_argument("--min-size", type=int, default=MIN_SIZE,
                   help="points needed on each side of a change (default 3)")
    p.add_argument("--last", type=int, metavar="N",
                   help="report only changes among the last N points (drifts always)")
    p.add_argument("--fail-on-change", action="store_true",
                   help="a gate for CI: exit 3 when a change or a drift is reported, else 4 "
                        "when a series is too short to test, else 0 (docs/cli.md)")
