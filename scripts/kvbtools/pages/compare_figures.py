"""Figures of comparisons (docs/report.md): the ratio of every side to the base per benchmark
with its 95% interval and both medians, the control series' interval drawn behind as the noise
floor (kvb compare, matrix, versions). kvb bisect's figure: bisect_figures.py.

A verdict is drawn by what it decided, not by its word: a significant change filled (red words
for a regression), "no change" hollow, and any other word (undecided, n=1: noise
unknown, or one a later kvb adds) grey with its word beside it and its reason under the figure.
"""
from __future__ import annotations

import math
import statistics
from typing import Any

from kvbtools.core import environment, stats
from kvbtools.core.table import fmt_value
from kvbtools.pages import figures
from kvbtools.core.comparison import Cell, Comparison, ratio_meaning, unit_text
from kvbtools.pages.figures import ALERT, BAND, MUTED, Colours, Figure

CONTROL = "control"
UNDECIDED_FACE = "#d9d9d9"


def interval(cell: Cell) -> tuple[float, float] | None:
    """The interval the verdict was judged on (core/levels.py: the Hodges-Lehmann interval of the
    U test on unpaired units; Yuen's trimmed t interval on rounds or link pairs paired by round,
    as kvb matrix and versions measure); None when it has none (one value a side) or an
    unbounded one (too few values: the verdict's reason says so)."""
    iv = cell.verdict.interval
    if iv is None or not iv.finite:
        return None
    return iv.lo, iv.hi


def decided(cell: Cell) -> str:
    """"change" (a significant change), "none" (no change: decided) or "other" (any other
    verdict word: undecided, noise unknown, ...): how the cell is drawn."""
    if cell.verdict.better is not None:
        return "change"
    return "none" if cell.verdict.word == stats.NO_CHANGE else "other"


def medians(cell: Cell) -> tuple[float, float]:
    return statistics.median(cell.base), statistics.median(cell.other)


def value_text(v: float) -> str:
    """A median as shown beside its ratio: 0 only when it is 0 (fmt_value would print 0.00007
    as 0.000)."""
    if v == 0:
        return "0"
    return f"{v:.3g}" if abs(v) < 1 else fmt_value(v)


def ratio_text(cell: Cell) -> str:
    """The ratio as drawn beside its point; a 0 stays 0 and two zeros are not a 1.00."""
    b, o = medians(cell)
    r = cell.verdict.ratio
    if b == 0:
        return "both 0" if o == 0 else "base 0"
    if r == 0 or not math.isfinite(r):
        return "0" if r == 0 else "-"
    if round(r, 3) < 0.01:  # as printed: 0.00999... is 0.010, not 0.01
        return f"{r:.2g}"
    return f"{r:.0f}" if r >= 100 else f"{r:.3f}"


def log_scaled(cells: list[Cell]) -> bool:
    """True when the positive ratios and interval ends, with 1.0, span more than LOG_SPAN."""
    xs = [1.0]
    for cell in cells:
        xs += [x for x in (cell.verdict.ratio, *(interval(cell) or ()))
               if math.isfinite(x) and x > 0]
    return max(xs) / min(xs) > figures.LOG_SPAN


def ratio_figure(c: Comparison, mkey: str, colours: Colours, measured: bool = False) -> Figure:
    """One metric: a row per benchmark, a point per side at its ratio to the base with its 95%
    interval, the medians on the right, the control's interval as a grey band behind. measured:
    kvb matrix or versions measured the sides (and could have measured a control)."""
    metric = c.metrics[mkey]
    names = c.benches[mkey]
    others = [s.label for s in c.sides[1:] if s.label != CONTROL]
    has_control = any(s.label == CONTROL for s in c.sides)
    cells = {(x.bench, x.side): x for x in c.cells if x.metric.key == mkey}
    log = log_scaled(list(cells.values()))

    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 1.2 + 0.32 * len(names) * max(1, len(others)) ** 0.5)
        lo, hi = _limits(list(cells.values()), log, c.threshold)
        step = 0.6 / max(1, len(others))
        for i, bench in enumerate(names):
            y = len(names) - 1 - i
            ctl = cells.get((bench, CONTROL))
            if ctl is not None:
                _control(ax, ctl, y)
            for j, side in enumerate(others):
                cell = cells.get((bench, side))
                if cell is not None:
                    yy = y + (len(others) - 1) / 2 * step - j * step
                    _point(ax, cell, yy, colours[side], (lo, hi), log)
                    _medians(ax, cell, yy, metric.scale)
        _ratio_axes(ax, c, mkey, names, log, (lo, hi))
        _ratio_legend(ax, [(s, colours[s]) for s in others], list(cells.values()), has_control)
        return fig

    return Figure(f"ratio-{figures.safe_name(mkey)}",
                  _ratio_caption(c, mkey, list(cells.values()), has_control, log, measured),
                  draw, noisy=_noisy_sides(c), notes=_undecided_notes(list(cells.values())))


def _limits(cells: list[Cell], log: bool, threshold: float) -> tuple[float, float]:
    """The x range: every ratio and interval, and the threshold's lines, with room for the
    words beside them; a 0 or a ratio over a base of 0 is drawn at an end of it."""
    xs = [1.0 - threshold, 1.0 + threshold]
    for cell in cells:
        xs += [x for x in (cell.verdict.ratio, *(interval(cell) or ())) if math.isfinite(x)]
    if log:
        pos = [x for x in xs if x > 0]
        return min(pos) / 2.0, max(pos) * 2.5
    lo, hi = min(xs + [0.0 if any(x == 0 for x in xs) else min(xs)]), max(xs)
    pad = (hi - lo) * 0.08 or 0.05
    return lo - pad, hi + (hi - lo) * 0.25 + pad


def _ratio_axes(ax: Any, c: Comparison, mkey: str, names: list[str], log: bool,
                lims: tuple[float, float]) -> None:
    metric = c.metrics[mkey]
    base = c.sides[0].label
    ax.axvline(1.0, color="#333333", lw=0.9)
    for t in (1 - c.threshold, 1 + c.threshold):
        ax.axvline(t, color=MUTED, lw=0.7, ls=":")
    if log:
        import matplotlib.ticker as ticker  # matplotlib loads only when a figure is drawn
        ax.set_xscale("log")
        # 1, 2, 5 in each power of ten while they fit; powers of ten alone over a wider span.
        decades = math.log10(lims[1] / lims[0])
        ax.xaxis.set_major_locator(ticker.LogLocator(
            base=10, subs=(1.0, 2.0, 5.0) if decades <= 3 else (1.0,)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlim(*lims)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(list(reversed(names)), fontsize=7.5)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.grid(axis="y", visible=False)
    better = "right" if metric.higher_is_better else "left"
    cells = [x for x in c.cells if x.metric.key == mkey]
    ax.set_xlabel(f"ratio to {base} ({ratio_meaning(cells, short=True)})"
                  + (" (log scale)" if log else "")
                  + f"; {metric.better} {metric.path} is better ({better} of 1.0); dotted: the "
                  f"{c.threshold * 100:g}% threshold")
    # The title on its own line above the legend's, which may take two.
    ax.figure.suptitle(f"{metric.path} [{metric.shown_unit}]: ratio to {base}"
                       + (", control in grey" if any(s.label == CONTROL for s in c.sides)
                          else ""), x=0.01, ha="left", fontsize=10)
    ax.annotate(f"median: {base} → side [{metric.shown_unit}]", (1.0, 1.0),
                xycoords="axes fraction", xytext=(8, 2), textcoords="offset points",
                ha="left", va="bottom", fontsize=7, color="#555555")


def _ratio_legend(ax: Any, sides: list[tuple[str, str]], cells: list[Cell],
                  control: bool) -> None:
    """The sides' colours and what a marker means, on the title's line."""
    for side, colour in sides:
        ax.plot([], [], "o", color=colour, label=side)
    kinds = {decided(x) for x in cells}
    for kind, label, face in (("change", "filled: a significant change", "#555555"),
                              ("none", "hollow: no change", "white"),
                              ("other", "grey: no verdict (its word beside it)",
                               UNDECIDED_FACE)):
        if kind in kinds:
            ax.plot([], [], "D" if kind == "other" else "o", color="#555555", mfc=face,
                    mew=1.2, label=label)
    if control:
        ax.fill_between([], [], [], color=BAND, label="control: the noise floor")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, loc="lower right", bbox_to_anchor=(1.0, 1.0),
              ncol=min(len(labels), 5), borderaxespad=0.3, fontsize=7)


def _ratio_caption(c: Comparison, mkey: str, cells: list[Cell], control: bool, log: bool,
                   measured: bool = False) -> str:
    metric = c.metrics[mkey]
    base = c.sides[0].label
    return (f"Each point is a side's {metric.path} relative to {base}'s ("
            f"{ratio_meaning(cells)}), with the {stats.pct(1 - c.alpha)} interval its verdict "
            "was judged on (none drawn when too few runs give no finite one); on the right, "
            f"both medians in {metric.shown_unit}. A filled point is a significant change (p "
            "below alpha after the family's adjustment, and the threshold; on the unit its "
            "verdict rested on: "
            f"{unit_text(c)}), a hollow one is no change (its interval within the threshold), a grey "
            "diamond is undecided (its word beside it, its reason below). A ratio of 0 or over "
            "a base of 0 is drawn at the axis's end with its words. "
            + ("The axis is logarithmic: the ratios span more than 10x. " if log else "")
            + ("The grey band is the control (the base measured again): a point inside it "
               "is within the noise." if control else
               "Without a control series there is no band: rerun without --no-control for the "
               "noise floor." if measured else ""))


def _noisy_sides(c: Comparison) -> dict[str, str]:
    why = {s.label: environment.side_reason(s) for s in c.sides}
    return {label: w for label, w in why.items() if w}


def _undecided_notes(cells: list[Cell]) -> list[str]:
    """Why each grey point has no verdict (its note), one line per distinct reason."""
    out: dict[str, list[str]] = {}
    for cell in cells:
        if decided(cell) == "other":
            why = f"{cell.verdict.word}" + (f": {cell.verdict.note}" if cell.verdict.note
                                            else "")
            out.setdefault(why, []).append(f"{cell.side} {cell.bench}")
    return [f"{why} ({', '.join(who[:4])}{' ...' if len(who) > 4 else ''})"
            for why, who in out.items()]


def _control(ax: Any, cell: Cell, y: float) -> None:
    iv = interval(cell)
    if iv is not None:
        ax.fill_betweenx([y - 0.42, y + 0.42], iv[0], iv[1], color=BAND, lw=0, zorder=0)
    if math.isfinite(cell.verdict.ratio) and cell.verdict.ratio > 0:
        ax.plot([cell.verdict.ratio] * 2, [y - 0.42, y + 0.42], color=MUTED, lw=1, zorder=1)


# Where a label's words may reach: the axes' width in points (a 10-inch figure less the names
# on the left and the medians' column on the right, at least), and a character's width in
# points at the labels' 7 pt.
AXES_POINTS = 480.0
CHAR_POINTS = 4.0


def _fraction(x: float, lims: tuple[float, float], log: bool) -> float:
    """Where x is across the axes, 0 (left) to 1 (right)."""
    lo, hi = lims
    if log:
        return (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo)) if x > 0 else 0.0
    return (x - lo) / (hi - lo) if hi > lo else 0.0


def _label_side(text: str, left: float, right: float, lims: tuple[float, float],
                log: bool) -> tuple[float, int, str]:
    """Where a point's words go: after its interval (x, offset, alignment), or before it when
    they would run past the axes into the medians' column and fit there."""
    need = (5 + CHAR_POINTS * len(text)) / AXES_POINTS
    if _fraction(right, lims, log) + need <= 1.0 or _fraction(left, lims, log) - need < 0.0:
        return right, 5, "left"
    return left, -5, "right"


def _point(ax: Any, cell: Cell, y: float, colour: str, lims: tuple[float, float],
           log: bool = False) -> None:
    """The side's ratio with its interval and its words; 0 and a ratio over a base of 0 at the
    ends of the axis, pointing out of it. The words stay inside the axes (before the point when
    after it they would run into the medians), on a white ground so no line strikes them."""
    r = cell.verdict.ratio
    at, marker = r, "D" if decided(cell) == "other" else "o"
    if not math.isfinite(r):  # over a base of 0
        at, marker = lims[1], ">"
    elif r <= lims[0]:
        at, marker = lims[0], "<"
    iv = interval(cell)
    if iv is not None:
        ax.plot([max(iv[0], lims[0]), min(iv[1], lims[1])], [y, y], color=colour, lw=1.6,
                zorder=2, ls="-" if decided(cell) != "other" else "--")
    kind = decided(cell)
    face = {"change": colour, "none": "white", "other": UNDECIDED_FACE}[kind]
    ax.plot([at], [y], marker, ms=6, color=colour, mfc=face, mew=1.5, zorder=3,
            clip_on=marker in "oD")
    word = "" if kind == "none" else cell.verdict.word
    colour_text = ALERT if cell.verdict.regression else "#333333" if kind == "change" else MUTED
    text = f"{ratio_text(cell)} {word}".strip()
    if marker == ">":
        x, dx, ha = at, -7, "right"
    else:
        right = min(iv[1], lims[1]) if iv and marker in "oD" else at
        left = max(iv[0], lims[0]) if iv and marker in "oD" else at
        x, dx, ha = _label_side(text, left, right, lims, log)
    ax.annotate(text, (x, y), xytext=(dx, 0), textcoords="offset points", va="center",
                fontsize=7, ha=ha, color=colour_text, style="italic" if kind == "other"
                else "normal", zorder=4, bbox=dict(boxstyle="square,pad=0.1", fc="white",
                                                   ec="none", alpha=0.85))


def _medians(ax: Any, cell: Cell, y: float, scale: float) -> None:
    """Both medians, in the metric's shown unit, in the column right of the axes."""
    b, o = medians(cell)
    ax.annotate(f"{value_text(b * scale)} → {value_text(o * scale)}", (1.0, y),
                xycoords=("axes fraction", "data"), xytext=(8, 0), textcoords="offset points",
                va="center", ha="left", fontsize=7, color="#333333")
