"""Figures of comparisons (docs/report.md): the ratio of every side to the base per benchmark
with its 95% interval, the control series' interval drawn behind as the noise floor (kvb
compare, matrix, versions); and the measured value per tested commit of kvb bisect.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from kvbtools.core import stats
from kvbtools.pages import figures
from kvbtools.core.comparison import Cell, Comparison
from kvbtools.pages.figures import ALERT, BAND, GOOD, MUTED, Colours, Figure

CONTROL = "control"


def interval(cell: Cell) -> tuple[float, float] | None:
    """The 95% bootstrap interval of median(other)/median(base); None without repeats."""
    if len(cell.base) < 2 or len(cell.other) < 2:
        return None
    lo, hi = stats.bootstrap_ratio_ci(cell.base, cell.other)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None


def ratio_figure(c: Comparison, mkey: str, colours: Colours) -> Figure:
    """One metric: a row per benchmark, a point per side at its ratio to the base with its 95%
    interval (filled: a significant change), the control's interval as a grey band behind."""
    metric = c.metrics[mkey]
    names = c.benches[mkey]
    base = c.sides[0].label
    others = [s.label for s in c.sides[1:] if s.label != CONTROL]
    has_control = any(s.label == CONTROL for s in c.sides)
    cells = {(x.bench, x.side): x for x in c.cells if x.metric.key == mkey}

    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 1.0 + 0.32 * len(names) * max(1, len(others)) ** 0.5)
        step = 0.6 / max(1, len(others))
        for i, bench in enumerate(names):
            y = len(names) - 1 - i
            ctl = cells.get((bench, CONTROL))
            if ctl is not None:
                _control(ax, ctl, y)
            for j, side in enumerate(others):
                cell = cells.get((bench, side))
                if cell is not None:
                    _point(ax, cell, y + (len(others) - 1) / 2 * step - j * step,
                           colours[side], side if i == 0 else None)
        ax.axvline(1.0, color="#333333", lw=0.9)
        for t in (1 - c.threshold, 1 + c.threshold):
            ax.axvline(t, color=MUTED, lw=0.7, ls=":")
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(list(reversed(names)), fontsize=7.5)
        ax.set_ylim(-0.6, len(names) - 0.4)
        ax.grid(axis="y", visible=False)
        better = "right" if metric.higher_is_better else "left"
        ax.set_xlabel(f"ratio of the median to {base}'s; {metric.better} {metric.path} is "
                      f"better ({better} of 1.0); dotted: the {c.threshold * 100:g}% threshold")
        ax.set_title(f"{metric.path} [{metric.shown_unit}]: ratio to {base}"
                     + (", control in grey" if has_control else ""))
        if others:
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(others),
                      borderaxespad=0.2)
        return fig

    caption = (f"Each point is a side's median {metric.path} divided by {base}'s, with its 95% "
               "bootstrap interval; a filled point is a significant change (Mann-Whitney U and "
               "the threshold), a hollow one is not. "
               + ("The grey band is the control (the base measured again): a point inside it "
                  "is within the noise." if has_control else
                  "Without a control series there is no band: rerun kvb matrix without "
                  "--no-control for the noise floor."))
    return Figure(f"ratio-{figures.safe_name(mkey)}", caption, draw)


def _control(ax: Any, cell: Cell, y: float) -> None:
    iv = interval(cell)
    if iv is not None:
        ax.fill_betweenx([y - 0.42, y + 0.42], iv[0], iv[1], color=BAND, lw=0, zorder=0)
    if math.isfinite(cell.verdict.ratio):
        ax.plot([cell.verdict.ratio] * 2, [y - 0.42, y + 0.42], color=MUTED, lw=1, zorder=1)


def _point(ax: Any, cell: Cell, y: float, colour: str, label: str | None) -> None:
    r = cell.verdict.ratio
    if not math.isfinite(r):
        return
    iv = interval(cell)
    if iv is not None:
        ax.plot([iv[0], iv[1]], [y, y], color=colour, lw=1.6, zorder=2)
    significant = cell.verdict.better is not None
    ax.plot([r], [y], "o", ms=6, color=colour, mfc=colour if significant else "white",
            mew=1.5, zorder=3, label=label)
    word = cell.verdict.word if significant else ""
    ax.annotate(f"{r:.3f} {word}".strip(), (iv[1] if iv else r, y), xytext=(5, 0),
                textcoords="offset points", va="center", fontsize=7,
                color=ALERT if cell.verdict.regression else "#333333")


# ---- bisect ----------------------------------------------------------------------------------

LIKE_OLD, LIKE_NEW, UNCERTAIN, SKIPPED = "old", "new", "uncertain", "skip"
VERDICT_COLOURS = {LIKE_OLD: GOOD, LIKE_NEW: ALERT, UNCERTAIN: "#e08a00", SKIPPED: MUTED}


@dataclass
class Tested:
    """A commit as the bisect judged it: like old, like new, uncertain or skipped; its values
    (every series it was measured in); `how`: measured, same sources (no build, no run: it
    compiles what a judged commit compiles), does not build, ..."""
    commit: str
    verdict: str
    values: list[float]
    how: str = "measured"
    same_as: str = ""         # how == "same sources": the judged commit it compiles like


def _floats(v: Any) -> list[float]:
    return [float(x) for x in v if isinstance(x, (int, float))] if isinstance(v, list) else []


def tested_commits(doc: dict[str, Any], records: list[dict[str, Any]]) -> list[Tested]:
    """What bisect wrote (bisect.json, or steps.jsonl while it runs), read tolerantly: records of
    kind endpoints/step/confirm (kvb bisect 2), or the older good/bad/step entries."""
    old, new = str(doc.get("old") or doc.get("good") or ""), str(doc.get("new") or
                                                                  doc.get("bad") or "")
    values: dict[str, list[float]] = {}
    out: dict[str, Tested] = {}

    def add(sha: Any, vals: Any) -> None:
        if isinstance(sha, str) and sha:
            values.setdefault(sha, []).extend(_floats(vals))

    for r in records:
        kind = r.get("kind")
        vals = r.get("values")
        if kind is None:  # kvb bisect 1: {"commit", "role": good|bad|step, "values": [...]}
            role = str(r.get("role", "step"))
            verdict = {"good": LIKE_OLD, "bad": LIKE_NEW}.get(role) or (
                SKIPPED if not _floats(vals) else LIKE_NEW if r.get("regression") else LIKE_OLD)
            add(r.get("commit"), vals)
            out[str(r.get("commit", ""))] = Tested(str(r.get("commit", "")), verdict, [],
                                                   "measured" if _floats(vals) else "skipped")
            continue
        if isinstance(vals, dict):
            who = {"old": r.get("old", old), "new": r.get("new", new), "this": r.get("commit"),
                   "parent": r.get("parent"), "blamed": r.get("blamed")}
            for role, v in vals.items():
                add(who.get(role) or role, v)
        if kind == "step" and r.get("commit"):
            how = str(r.get("how", "measured"))
            out[r["commit"]] = Tested(r["commit"], str(r.get("verdict", UNCERTAIN)), [], how,
                                      str(r.get("same_as") or ""))
    for sha, verdict in ((old, LIKE_OLD), (new, LIKE_NEW)):
        if sha and sha in values:
            out.setdefault(sha, Tested(sha, verdict, [], "old and new, in every series"))
    for t in out.values():
        t.values = values.get(t.commit, [])
    return list(out.values())


def bisect_figure(tested: list[Tested], order: list[str], first_new: str, confirmed: bool,
                  metric: str, unit_scale: float, unit: str) -> Figure:
    """The values of every commit the bisect judged, in history order, coloured by verdict;
    old's and new's ranges as bands; the first new commit marked."""
    pos = {c: i for i, c in enumerate(order)}
    shown = sorted((t for t in tested if t.commit in pos), key=lambda t: pos[t.commit])
    by_commit = {t.commit: t for t in shown}

    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 3.8)
        scaled = {t.commit: [v * unit_scale for v in t.values] for t in shown}
        for end, colour, label in ((order[0], GOOD, "old's range"),
                                   (order[-1], ALERT, "new's range")):
            vals = scaled.get(end)
            if vals:
                ax.axhspan(min(vals), max(vals), color=colour, alpha=0.08, lw=0, zorder=0,
                           label=label)
        every = [v for vals in scaled.values() for v in vals]
        low = min(every) if every else 0.0
        for t in shown:
            x, colour = pos[t.commit], VERDICT_COLOURS.get(t.verdict, MUTED)
            vals = scaled[t.commit]
            if t.verdict == SKIPPED or not vals:
                like = scaled.get(t.same_as) or []  # not run: drawn at what it compiles like
                y = statistics.median(like) if like and t.verdict != SKIPPED else low
                ax.plot([x], [y], "x" if t.verdict == SKIPPED else "o", color=colour, ms=8,
                        mew=1.5, mfc="white", zorder=3)
                continue
            ax.plot([x] * len(vals), vals, "o", ms=2.5, color=colour, alpha=0.4)
            ax.plot([x], [statistics.median(vals)], "o", ms=8, color=colour, zorder=3)
        if first_new in pos:
            ax.axvline(pos[first_new], color=ALERT, ls="--", lw=1.1)
            ax.annotate(f"first new: {first_new[:10]}"
                        + (" (confirmed)" if confirmed else " (not confirmed)"),
                        (pos[first_new], 1.0), xycoords=("data", "axes fraction"),
                        xytext=(4, -12), textcoords="offset points", color=ALERT, fontsize=8)
        for verdict, label, marker in ((LIKE_OLD, "like old", "o"), (LIKE_NEW, "like new", "o"),
                                       (UNCERTAIN, "uncertain", "o"),
                                       (SKIPPED, "did not build or run", "x")):
            if any(t.verdict == verdict for t in shown):
                ax.plot([], [], marker, color=VERDICT_COLOURS[verdict], label=label, ls="")
        if any(not t.values and t.verdict != SKIPPED for t in shown):
            ax.plot([], [], "o", color=MUTED, mfc="white", ls="",
                    label="not run: compiles the same sources as a judged commit")
        ax.set_xticks([pos[c] for c in by_commit])
        ax.set_xticklabels([c[:8] for c in by_commit], rotation=40, ha="right", fontsize=7)
        ax.set_xlim(-0.7, max(len(order) - 1, 1) + 0.7)
        ax.set_xlabel("commits in history order, old (left) to new (right); ticks at the ones "
                      "the bisect judged")
        ax.set_ylabel(f"{metric} [{unit}]")
        ax.set_title("kvb bisect: every value measured, per commit")
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.06), ncol=4, borderaxespad=0.2)
        return fig

    caption = ("Every commit the bisect judged, in history order: small dots are its values "
               "(old and new are measured again in every series), the large dot their median; "
               "blue is like old, red like new, orange uncertain, a grey cross did not build or "
               "run, a hollow dot took a judged commit's verdict without a run. The bands are "
               "old's and new's ranges; the dashed line is the first new commit.")
    return Figure("bisect-commits", caption, draw)
