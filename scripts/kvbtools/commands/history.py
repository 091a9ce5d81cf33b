"""kvb history, run: what the command does with its arguments. Its command line and
--help: commands/parsers/history.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from kvbtools.commands.arguments import Selection, store_input
from kvbtools.core import output
from kvbtools.core.changes import Params, analyse
from kvbtools.core.series import Series, changed
from kvbtools.core.table import fmt_value as fmt
from kvbtools.pages import history_figures


# ---- text ---------------------------------------------------------------------------------------

def describe_key(key: dict[str, str], common: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in key.items() if common.get(k) != v)


def common_items(dicts: list[dict[str, str]]) -> dict[str, str]:
    if not dicts:
        return {}
    first = dicts[0]
    return {k: v for k, v in first.items() if all(d.get(k) == v for d in dicts[1:])}


def format_series(s: Series, common_key: dict[str, str], number: int) -> list[str]:
    m = s.info
    scale = m.scale
    lines = [f"[{number}] {s.label} [{m.shown_unit}], {'higher' if m.higher_is_better else 'lower'} "
             f"is better; fingerprint {s.fingerprint[:12]}"]
    own = describe_key(s.key, common_key)
    if own:
        lines.append(f"    key: {own}")
    rows = [["#", "time", "run", "commit", "median", "95% interval", "n", "changed"]]
    prev = None
    narrow = False
    for i, p in enumerate(s.points, 1):
        lo, hi, cov = p.interval
        if p.n < 2:
            iv = "-"
        else:
            iv = f"{fmt(lo * scale)}..{fmt(hi * scale)}" + ("" if cov >= 0.95 else "*")
            narrow = narrow or cov < 0.95
        diff = changed(prev, p)
        rows.append([str(i), p.time, p.hash[:12], p.commit or "-", fmt(p.median * scale), iv,
                     str(p.n),
                     ", ".join(f"{k} {a or '-'} -> {b or '-'}" for k, (a, b) in diff.items())])
        prev = p
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        cells = [r[c].rjust(widths[c]) if c in (0, 4, 6) else r[c].ljust(widths[c])
                 for c in range(len(r))]
        lines.append("    " + "  ".join(cells).rstrip())
    if narrow:
        lines.append("    * min..max: with fewer than 6 repeats no order-statistics interval "
                     "reaches 95% (coverage 1 - 2^(1-n): 75% at n=3, 94% at n=5)")
    return lines


def format_history(series: list[Series], where: str) -> str:
    npoints = sum(len(s.points) for s in series)
    lines = [f"store: {where}: {len(series)} series, {npoints} points"]
    common: dict[str, dict[str, str]] = {}
    for kind in sorted({s.kind for s in series}):
        common[kind] = common_items([s.key for s in series if s.kind == kind])
        lines.append(f"key fields of every {kind} series below: "
                     + " ".join(f"{k}={v}" for k, v in common[kind].items()))
    for i, s in enumerate(series, 1):
        lines.append("")
        lines.extend(format_series(s, common[s.kind], i))
    return "\n".join(lines)


# ---- the command --------------------------------------------------------------------------------

@dataclass(frozen=True)
class HistoryRequest:
    """kvb history's arguments as values."""
    selection: Selection
    html: str | None

    @staticmethod
    def of(args: argparse.Namespace) -> "HistoryRequest":
        return HistoryRequest(Selection.of(args), args.html)


def cmd(req: HistoryRequest) -> int:
    output.check_outputs([("--html", req.html)],  # exit 2 before any work (docs/cli.md)
                         [store_input(req.selection.store)])
    where, series = req.selection.series()
    if req.html:
        analyses = [analyse(s, Params()) for s in series]
        history_figures.write_history_html(req.html, series, analyses, where)
        print(f"wrote {req.html}: {len(series)} series", file=sys.stderr)
    else:
        print(format_history(series, where))
    return 0


def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return cmd(HistoryRequest.of(args))
