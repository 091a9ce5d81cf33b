"""`kvb history --html` (docs/history.md): one figure per series of the results store, on the
page and figure layer every kvb page uses (htmlpage.py, figures.py). A series of an engine is
drawn in the engine's colour; points from runs kvbench called noisy are ringed, listed at the top
of the page and under their figure.
"""
from __future__ import annotations

from typing import Any, Sequence

from kvbtools.core.changes import Params
from kvbtools.pages import figures, htmlpage, noise
from kvbtools.pages.figures import ALERT, ENGINE_COLOURS, Figure
from kvbtools.pages.run_figures import short

POINT = "#1f5fa8"    # a series of no engine (kvbench_micro)


def series_figure(name: str, times: Sequence[str], medians: Sequence[float],
                  lows: Sequence[float], highs: Sequence[float], *, title: str, unit: str,
                  changes: Sequence[tuple[int, str]] = (),
                  segments: Sequence[tuple[int, int, float]] = (),
                  drift: tuple[float, float] | None = None, colour: str = POINT,
                  noisy: Sequence[int] = ()) -> Figure:
    """One series: a point per run at its median with its interval, change points as vertical
    lines between the points before and after (labelled), each segment's mean, a drift line;
    the points of `noisy` (0-based) ringed."""
    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 3.2)
        xs = list(range(1, len(medians) + 1))
        ax.errorbar(xs, medians, yerr=[[m - lo for m, lo in zip(medians, lows)],
                                       [hi - m for m, hi in zip(medians, highs)]],
                    fmt="o", markersize=4, color=colour, ecolor=colour, elinewidth=0.8,
                    capsize=2, label="median, interval")
        if noisy:
            ax.scatter([xs[i] for i in noisy], [medians[i] for i in noisy], s=70,
                       facecolors="none", edgecolors=ALERT, linewidths=1.2, zorder=3,
                       label="a run kvbench called noisy")
        for a, b, mean in segments:
            ax.hlines(mean, a + 1 - 0.4, b + 0.4, colors="#555555", linewidth=1,
                      linestyles="solid")
        if drift is not None:
            ax.plot([xs[0], xs[-1]], list(drift), color="#d07000", linewidth=1.2, label="drift")
        for index, text in changes:
            ax.axvline(index + 0.5, color=ALERT, linestyle="--", linewidth=1.2)
            ax.annotate(text, (index + 0.5, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(3, -10), textcoords="offset points", color=ALERT, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(unit)
        _value_axis(ax, lows, highs)
        step = max(1, len(xs) // 8)
        ticks = xs[::step]
        labels, day = [], ""
        for i in ticks:  # the point's number, its time, and its date where the date changes
            t = times[i - 1]
            labels.append(f"{i}\n{t[11:16]}" + (f"\n{t[:10]}" if t[:10] != day else ""))
            day = t[:10]
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_xlim(0.5, len(xs) + 0.5)
        ax.grid(axis="x", visible=False)
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, borderaxespad=0.2)
        return fig

    caption = ("One point per run: its median and 95% interval; dashed red lines are change "
               "points, grey lines each segment's mean, orange a drift; the axis starts at 0, "
               "so a step's height is its share of the value"
               + ("; red rings mark runs kvbench called noisy." if noisy else "."))
    return Figure(name, caption, draw)


def _value_axis(ax: Any, lows: Sequence[float], highs: Sequence[float]) -> None:
    """The value axis from 0 (when no value is below it) to a little above the highest: fitted
    to the points, a 7% step filled the axis and read as a cliff. Ticks as 1.2M, 350k, never
    with an offset or a multiplier above the axis."""
    import matplotlib.ticker as ticker  # matplotlib loads only when a figure is drawn
    top = max(highs, default=0.0)
    if min(lows, default=0.0) >= 0:
        ax.set_ylim(0, top * 1.12 if top > 0 else 1)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: short(v)))


def write_history_html(path: str, series: Sequence[Any], analyses: Sequence[Any],
                       where: str) -> None:
    """`kvb history --html`: one figure per series (core/series.Series, core/changes.Analysis)."""
    figures.pyplot("--html")  # fail before any work when matplotlib is missing
    page = htmlpage.Page("kvbench history")
    page.para(f"{len(series)} series from {where}. Each point is one run: its median and 95% "
              "interval (min..max below 6 repeats); dashed red lines are change points "
              "(E-divisive means, Hunter's t-test), grey lines each segment's mean.", "muted")
    for s, a in zip(series, analyses):
        m = s.info
        meds = [p.median * m.scale for p in s.points]
        ivs = [p.interval for p in s.points]
        lows = [lo * m.scale if p.n > 1 else p.median * m.scale for p, (lo, _, _) in
                zip(s.points, ivs)]
        highs = [hi * m.scale if p.n > 1 else p.median * m.scale for p, (_, hi, _) in
                 zip(s.points, ivs)]
        bounds = [0, *[c.index for c in a.changes], len(meds)]
        segments = [(x, y, sum(meds[x:y]) / (y - x)) for x, y in zip(bounds, bounds[1:])]
        changes = [(c.index, f"{(c.ratio - 1) * 100:+.1f}%") for c in a.changes]
        drift = None
        if a.drift is not None:
            drift = (a.drift.start_value * m.scale, a.drift.end_value * m.scale)
        key = " ".join(f"{k}={v}" for k, v in s.key.items())
        better = "higher" if m.higher_is_better else "lower"
        short = len(s.points) < 2 * Params.min_size  # kvb trend's rule: undecided
        found = ("too short to test for change points (fewer than "
                 f"{2 * Params.min_size} points): undecided" if short else
                 f"{len(a.changes)} change point(s)" + ("; a drift" if a.drift is not None
                                                        else ""))
        text = (f"fingerprint {s.fingerprint[:12]}: {key}\n{len(s.points)} points; {better} is "
                f"better; {found}")
        page.heading(2, f"{s.label} [{m.shown_unit}]")
        page.html(f"<pre>{htmlpage.esc(text)}</pre>")
        why = [noise.point_reason(p.attributes) for p in s.points]
        fig = series_figure(
            figures.safe_name(f"history-{s.label}-{s.fingerprint[:8]}"),
            [p.time for p in s.points], meds, lows, highs, title=s.label, unit=m.shown_unit,
            changes=changes, segments=segments, drift=drift,
            colour=ENGINE_COLOURS.get(figures.engine_of(s.row), POINT),
            noisy=[i for i, w in enumerate(why) if w])
        fig.noisy = {f"point {i + 1}": w for i, w in enumerate(why) if w}
        page.figure(fig)
    _noisy_box(page, series)
    page.write(path, figures.Output())


def _noisy_box(page: htmlpage.Page, series: Sequence[Any]) -> None:
    """At the top of the page (after its first paragraph): the series with noisy points, then
    each noisy run (a stored document) once with kvbench's reason: the runs of one night are
    points of many series."""
    counts, runs = [], {}
    for s in series:
        noisy = [p for p in s.points if noise.point_reason(p.attributes)]
        if noisy:
            counts.append(f"{s.label} {len(noisy)} of {len(s.points)}")
            runs.update({p.document: (p.time, noise.point_reason(p.attributes)) for p in noisy})
    if counts:
        lines = ["point(s) from runs kvbench called noisy: " + "; ".join(counts)]
        lines += [f"the run of {time}: {why}" for time, why in runs.values()]
        page.blocks.insert(1, htmlpage.noise_box(lines))
