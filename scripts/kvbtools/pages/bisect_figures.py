"""kvb bisect's figure in report.html (docs/report.md): every commit the bisect judged, drawn by
the witness that decided it.

Two panels share the x axis, the commits from old to new in history order. Time: each measured
commit's place between old (0) and new (1) as its series measured it, log(this/old) over
log(new/old) in the same rounds, with its 95% interval. Instructions (when any commit was
counted): its place by its counts, exact, between old's and new's. A commit is filled, in the
colour of its verdict, in the panel of the witness that decided it; where the other witness
measured or counted it too it is drawn there hollow and grey. A commit that took a judged
commit's verdict by its compiled sources is a diamond in that witness's panel at the place of
the commit it compiles like; one that did not build or run is a grey cross at the foot of the
time panel. The dashed line is the halfway point every verdict is judged against. Places
beyond -0.5 or 1.5 are drawn at the edge. Where the counts were found no witness of the change
(agreement.py), the instruction panel says why. Ticks name old, new, the first new commit and its
parent, and each other judged commit whose name has room beside those; the table under the
figure (judged_table) lists every one.

Records are read tolerantly: those of kvb bisect 2 and later (kinds endpoints, step, multistep,
confirm; a place from `to_old` and `change`, else from the medians of the series' values), and
kvb bisect 1's good/bad/step entries. Steps of another range (--all-steps) are in the table only:
their places are between other ends.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from kvbtools.pages import figures
from kvbtools.pages.figures import ALERT, GOOD, MUTED, Figure
from kvbtools.pages.htmlpage import table

LIKE_OLD, LIKE_NEW, UNCERTAIN, SKIPPED = "old", "new", "uncertain", "skip"
VERDICT_COLOURS = {LIKE_OLD: GOOD, LIKE_NEW: ALERT, UNCERTAIN: "#e08a00", SKIPPED: MUTED}
TIME, INSTRUCTIONS = "time", "instructions"
SAME_SOURCES = "same sources"
LOW, HIGH = -0.5, 1.5     # places drawn at the edge beyond these


@dataclass
class Judged:
    """A commit as the bisect judged it, with its places by each witness (None: not measured,
    not counted)."""
    commit: str
    verdict: str              # LIKE_OLD, LIKE_NEW, UNCERTAIN or SKIPPED
    how: str                  # measured, counted, same sources, does not build, ...
    witness: str = TIME       # what decided it ("" for old and new: both)
    step: int | None = None
    time: tuple[float, float | None, float | None] | None = None   # place, 95% low, high
    count: float | None = None
    same_as: str = ""
    other_range: str = ""     # --all-steps: "a..b" when it was judged in another range
    note: str = ""            # why the counts did not decide it (not a witness of the change)


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def _log_place(this: float | None, old: float | None, new: float | None) -> float | None:
    if this is None or old is None or new is None or min(this, old, new) <= 0 or new == old:
        return None
    return math.log(this / old) / math.log(new / old)


def _median(v: Any) -> float | None:
    got = [float(x) for x in v if isinstance(x, (int, float))] if isinstance(v, list) else []
    return statistics.median(got) if got else None


def time_place(r: dict[str, Any], role: str = "this"
               ) -> tuple[float, float | None, float | None] | None:
    """A measured commit's place by time: from its interval to old and the change in the same
    rounds, else from the medians of the values (a record of before intervals)."""
    to_old, change = r.get("to_old"), r.get("change")
    if isinstance(to_old, list) and isinstance(change, list) and to_old and change:
        d = _num(change[0])
        est = _log_place(_num(to_old[0]), 1.0, d)
        if est is not None and d is not None:
            lo, hi = (_log_place(_num(x), 1.0, d) for x in to_old[1:3]) if len(to_old) > 2 \
                else (None, None)
            return (est, min(lo, hi), max(lo, hi)) if lo is not None and hi is not None \
                else (est, None, None)
    v = r.get("values") if isinstance(r.get("values"), dict) else {}
    est = _log_place(_median(v.get(role)), _median(v.get("old")), _median(v.get("new")))
    return (est, None, None) if est is not None else None


def judged_commits(doc: dict[str, Any], records: list[dict[str, Any]]) -> list[Judged]:
    """What bisect wrote (bisect.json or state.json and steps.jsonl while it runs; `doc` has
    old, new and instruction_counts), as the commits it judged, each once (its last verdict)."""
    old, new = str(doc.get("old") or doc.get("good") or ""), str(doc.get("new") or
                                                                  doc.get("bad") or "")
    counts = {k: v for k, v in (doc.get("instruction_counts") or {}).items()
              if _num(v) is not None}
    out: dict[str, Judged] = {}
    for r in records:
        kind = r.get("kind")
        if kind is None and r.get("commit"):      # kvb bisect 1
            role = str(r.get("role", "step"))
            verdict = {"good": LIKE_OLD, "bad": LIKE_NEW}.get(role) or (
                SKIPPED if _median(r.get("values")) is None else
                LIKE_NEW if r.get("regression") else LIKE_OLD)
            out[str(r["commit"])] = Judged(str(r["commit"]), verdict, "measured")
        elif kind == "endpoints" and r.get("old") == old:
            ins = r.get("instructions") or {}
            for sha, place, role in ((old, 0.0, "old"), (new, 1.0, "new")):
                out[sha] = Judged(sha, role, "old and new, in every series", "",
                                  time=(place, None, None) if r.get("values") else None,
                                  count=place if role in ins else None)
        elif kind == "step":
            _add_step(out, r, r, old, new, counts)
        elif kind == "multistep":
            for c in r.get("candidates") or []:
                _add_step(out, dict(c, step=r.get("step"), old=r.get("old"), new=r.get("new")),
                          dict(c, change=r.get("change")), old, new, counts)
    for sha in (old, new):
        if sha in counts and sha in out and out[sha].count is None:
            out[sha].count = 0.0 if sha == old else 1.0
    return list(out.values())


def _add_step(out: dict[str, Judged], r: dict[str, Any], measured: dict[str, Any], old: str,
              new: str, counts: dict[str, float]) -> None:
    """A step's commit (or a candidate's), its places by each witness."""
    sha = r.get("commit")
    if not isinstance(sha, str) or not sha:
        return
    ends = (r.get("old") or old, r.get("new") or new)
    other = f"{ends[0][:12]}..{ends[1][:12]}" if ends != (old, new) else ""
    ins = r.get("instructions") if isinstance(r.get("instructions"), dict) else {}
    count = _log_place(_num(ins.get("this")), _num(ins.get("old")), _num(ins.get("new"))) \
        if ins else _log_place(counts.get(sha), counts.get(old), counts.get(new))
    how = str(r.get("how", "measured"))
    out[sha] = Judged(sha, str(r.get("verdict", UNCERTAIN)), how,
                      str(r.get("witness") or TIME), r.get("step"),
                      time_place(measured) if how == "measured" else None,
                      count, str(r.get("same_as") or ""), other, str(r.get("note") or ""))


def _clip(y: float) -> float:
    return min(max(y, LOW), HIGH)


def _place(j: Judged, panel: str) -> tuple[float, float | None, float | None] | None:
    if panel == TIME:
        return j.time
    return (j.count, None, None) if j.count is not None else None


def _panel(ax: Any, panel: str, shown: list[Judged], pos: dict[str, int],
           by_commit: dict[str, Judged], measured: str = TIME) -> None:
    """One witness's panel: each commit at its place, filled where this witness decided it
    (`measured`: the name of the first panel, what the series measured)."""
    ax.axhline(0, color=GOOD, lw=0.8, ls=":")
    ax.axhline(1, color=ALERT, lw=0.8, ls=":")
    ax.axhline(0.5, color=MUTED, lw=0.9, ls="--")
    for j in shown:
        x = pos[j.commit]
        colour = VERDICT_COLOURS.get(j.verdict, MUTED)
        if j.verdict == SKIPPED and j.how != SAME_SOURCES:
            if panel == TIME:
                ax.plot([x], [-0.25], "x", color=MUTED, ms=7, mew=1.5)
            continue
        if j.how == SAME_SOURCES:
            src = by_commit.get(j.same_as)
            got = _place(src, panel) if src is not None else None
            if got is not None and (j.witness or TIME) == panel:
                ax.plot([x], [_clip(got[0])], "D", ms=5, color=colour, zorder=3)
            continue
        got = _place(j, panel)
        if got is None:
            continue
        decided = j.witness in ("", panel)
        c = colour if decided else MUTED
        y, lo, hi = got
        if lo is not None and hi is not None:
            ax.plot([x, x], [_clip(lo), _clip(hi)], color=c, lw=1.3, alpha=0.7, zorder=2)
        ax.plot([x], [_clip(y)], "o", ms=7, color=c, mfc=c if decided else "white", mew=1.4,
                zorder=3)
    ys = [y for j in shown for got in [_place(j, panel)] if got is not None
          for y in got if y is not None]
    ax.set_ylim(max(LOW, min([-0.2, *ys])) - 0.12, min(HIGH, max([1.2, *ys])) + 0.12)
    note = next((j.note for j in shown if j.note), "")
    if panel == INSTRUCTIONS and note:
        ax.annotate(note[:140], (0.01, 0.97), xycoords="axes fraction", va="top", fontsize=7,
                    color="#555555")
    ax.set_yticks([0, 0.5, 1])
    ax.set_yticklabels(["old", "halfway", "new"])
    ax.set_ylabel(f"{measured if panel == TIME else INSTRUCTIONS}: place", fontsize=8)


def labelled(shown: list[Judged], pos: dict[str, int], first: list[str], n: int) -> set[str]:
    """The commits whose names the ticks print: `first` (in that order), then the others nearest
    the first new commit, each only where it keeps a tick's width from those printed (n commits
    on the axis)."""
    gap = max(1.0, n / 28)
    at = pos.get(first[0], 0) if first else 0
    rest = sorted((j.commit for j in shown if j.commit not in first),
                  key=lambda c: (abs(pos[c] - at), pos[c]))
    keep: list[str] = []
    for c in [*(x for x in first if x in pos), *rest]:
        if c not in keep and all(abs(pos[c] - pos[k]) >= gap for k in keep):
            keep.append(c)
    return set(keep)


def bisect_figure(judged: list[Judged], order: list[str], first_new: str, parent: str,
                  confirmed: bool, measured: str = TIME) -> Figure:
    """The figure (the module doc); `order`: the commits from old to new in history order;
    `measured`: what the series measured (metrics.series_word), the first panel's name."""
    pos = {c: i for i, c in enumerate(order)}
    shown = sorted((j for j in judged if j.commit in pos and not j.other_range),
                   key=lambda j: pos[j.commit])
    by_commit = {j.commit: j for j in shown}
    panels = [TIME] + ([INSTRUCTIONS] if any(j.count is not None for j in shown) else [])
    names = labelled(shown, pos, [first_new, parent, order[0], order[-1]], len(order))

    def draw(plt: Any) -> Any:
        fig, axes = figures.new(plt, 1.4 + 2.4 * len(panels), nrows=len(panels), sharex=True,
                                squeeze=False)
        axes = [a[0] for a in axes]
        for ax, panel in zip(axes, panels):
            _panel(ax, panel, shown, pos, by_commit, measured)
            if first_new in pos:
                ax.axvline(pos[first_new], color=ALERT, ls="--", lw=1.1)
        if first_new in pos:
            axes[0].annotate(f"first new: {first_new[:10]}"
                             + (" (confirmed)" if confirmed else " (not confirmed)")
                             + (f", its parent {parent[:10]}" if parent else ""),
                             (pos[first_new], 1.0), xycoords=("data", "axes fraction"),
                             xytext=(4, -12), textcoords="offset points", color=ALERT,
                             fontsize=8)
        last = axes[-1]
        last.set_xticks([pos[j.commit] for j in shown])
        last.set_xticklabels([j.commit[:8] if j.commit in names else "" for j in shown],
                             rotation=40, ha="right", fontsize=7)
        last.set_xlim(-0.7, max(len(order) - 1, 1) + 0.7)
        last.set_xlabel("commits in history order, old (left) to new (right); a tick at each "
                        "judged commit (all named in the table below)")
        _legend(axes[0], shown)
        fig.suptitle("kvb bisect: each judged commit by the witness that decided it", x=0.01,
                     ha="left", fontsize=10)
        return fig

    return Figure("bisect-commits", CAPTION, draw)


CAPTION = ("Each commit the bisect judged, in history order, at its place between old (0) and "
           "new (1): by time (the log ratio this/old over new/old in its series' rounds, with "
           "its 95% interval) and, where commits were counted, by instructions (exact). Filled "
           "in the panel of the witness that decided it: blue like old, red like new, orange "
           "uncertain; hollow grey where the other witness measured it; a diamond took a "
           "judged commit's verdict by its compiled sources; a grey cross did not build or "
           "run. The dashed line across is halfway; the dashed line down is the first new "
           "commit.")


def _legend(ax: Any, shown: list[Judged]) -> None:
    for verdict, label in ((LIKE_OLD, "like old"), (LIKE_NEW, "like new"),
                           (UNCERTAIN, "uncertain")):
        if any(j.verdict == verdict for j in shown):
            ax.plot([], [], "o", color=VERDICT_COLOURS[verdict], label=label, ls="")
    if any(j.how == SAME_SOURCES for j in shown):
        ax.plot([], [], "D", color=MUTED, ms=5, ls="", label="same sources as a judged commit")
    if any(j.verdict == SKIPPED and j.how != SAME_SOURCES for j in shown):
        ax.plot([], [], "x", color=MUTED, ls="", label="did not build or run")
    if any(j.witness == INSTRUCTIONS and j.time is not None or
           j.witness == TIME and j.count is not None for j in shown):
        ax.plot([], [], "o", color=MUTED, mfc="white", ls="",
                label="measured, decided by the other witness")
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, borderaxespad=0.3)


def _pct(x: float | None) -> str:
    return f"{round(x * 100) + 0}%" if x is not None else ""


def judged_table(judged: list[Judged], order: list[str], measured: str = TIME) -> str:
    """Every judged commit in history order: its step, verdict, what decided it and its place
    by each witness (`measured`: what the series measured, the first witness's name)."""
    pos = {c: i for i, c in enumerate(order)}
    rows = []
    for j in sorted(judged, key=lambda j: (pos.get(j.commit, len(order)), j.step or 0)):
        t = j.time
        by = (f"same sources as {j.same_as[:12]}" if j.how == SAME_SOURCES else
              j.how if j.verdict == SKIPPED else "old and new" if j.witness == "" else
              measured if j.witness == TIME else j.witness)
        rows.append([j.step if j.step is not None else "", j.commit[:12],
                     {"old": "like old", "new": "like new"}.get(j.verdict, j.verdict), by,
                     (_pct(t[0]) + (f" [{_pct(t[1])}, {_pct(t[2])}]" if t[1] is not None
                                    else "")) if t else "",
                     _pct(j.count), j.other_range])
    return table(rows, ["step", "commit", "verdict", "decided by", f"place by {measured}",
                        "by instructions", "range"], numeric=[0, 4, 5])
