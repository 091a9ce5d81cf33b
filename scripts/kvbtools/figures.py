"""Figures as inline SVG in one self-contained HTML page (matplotlib, Debian's python3-matplotlib).

Deterministic output: the same input gives the same bytes (a fixed svg.hashsalt for the ids
matplotlib generates, no date in the metadata), so pages can be diffed and kept in git. Shared
by `kvb history --html` and meant for `kvb report --html`: `svg(fig)` turns any figure into
inline SVG, `page(...)` wraps sections into the HTML document, `series_figure(...)` draws one
series over time. Importing this module does not import matplotlib; `pyplot()` does, and raises
UsageError naming the Debian package when it is missing.
"""
from __future__ import annotations

import html
import io
from typing import Any, Sequence

from kvbtools.io_util import import_debian, write_text


def pyplot() -> Any:
    matplotlib = import_debian("matplotlib", "python3-matplotlib", "--html")
    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "kvbench"
    matplotlib.rcParams["font.size"] = 9
    import matplotlib.pyplot as plt
    return plt


def svg(fig: Any) -> str:
    """The figure as an <svg> element (no XML prolog), deterministic."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def series_figure(times: Sequence[str], medians: Sequence[float], lows: Sequence[float],
                  highs: Sequence[float], *, title: str, unit: str,
                  changes: Sequence[tuple[int, str]] = (),
                  segments: Sequence[tuple[int, int, float]] = (),
                  drift: tuple[float, float] | None = None) -> str:
    """One series: a point per run at its median with its interval, change points as vertical
    lines between the points before and after (labelled), each segment's mean, a drift line."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 3.2))
    xs = list(range(1, len(medians) + 1))
    ax.errorbar(xs, medians, yerr=[[m - lo for m, lo in zip(medians, lows)],
                                   [hi - m for m, hi in zip(medians, highs)]],
                fmt="o", markersize=4, color="#1f5fa8", ecolor="#8fb0d8", capsize=2,
                label="median, interval")
    for a, b, mean in segments:
        ax.hlines(mean, a + 1 - 0.4, b + 0.4, colors="#555555", linewidth=1,
                  linestyles="solid")
    if drift is not None:
        ax.plot([xs[0], xs[-1]], list(drift), color="#d07000", linewidth=1.2, label="drift")
    for index, text in changes:
        ax.axvline(index + 0.5, color="#c0282d", linestyle="--", linewidth=1.2)
        ax.annotate(text, (index + 0.5, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -10), textcoords="offset points", color="#c0282d", fontsize=8)
    ax.set_title(title, fontsize=9, loc="left")
    ax.set_ylabel(unit)
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
    ax.grid(axis="y", color="#e4e4e4", linewidth=0.6)
    out = svg(fig)
    plt.close(fig)
    return out


STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:70em;color:#222}
h1{font-size:1.3em}h2{font-size:1.05em;margin-top:1.8em}
pre{background:#f6f6f6;padding:.5em;font-size:.8em;white-space:pre-wrap}
.note{color:#555;font-size:.85em}"""


def page(title: str, intro: str, sections: Sequence[tuple[str, str, str]]) -> str:
    """An HTML document: a title, an intro paragraph, then (heading, preformatted text, svg)."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>", f'<p class="note">{html.escape(intro)}</p>']
    for heading, text, figure in sections:
        out.append(f"<h2>{html.escape(heading)}</h2>")
        if text:
            out.append(f"<pre>{html.escape(text)}</pre>")
        out.append(figure)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_history_html(path: str, series: Sequence[Any], analyses: Sequence[Any],
                       where: str) -> None:
    """`kvb history --html`: one figure per series (history.Series, trend.Analysis)."""
    pyplot()  # fail before any work when matplotlib is missing
    sections = []
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
        text = (f"fingerprint {s.fingerprint[:12]}: {key}\n{len(s.points)} points; {better} is "
                f"better; {len(a.changes)} change point(s)"
                + ("; a drift" if a.drift is not None else ""))
        sections.append((f"{s.label} [{m.shown_unit}]", text, series_figure(
            [p.time for p in s.points], meds, lows, highs, title=s.label, unit=m.shown_unit,
            changes=changes, segments=segments, drift=drift)))
    doc = page("kvbench history", f"{len(series)} series from {where}. Each point is one run: "
               "its median and 95% interval (min..max below 6 repeats); dashed red lines are "
               "change points (E-divisive means, Hunter's t-test), grey lines each segment's "
               "mean.", sections)
    write_text(path, doc)
