"""The report.html of a kvb matrix study (--engines, --threads, --configs; docs/studies.md): per
metric, the seeds' relative-to-base picture, a bar per series and benchmark at its median divided
by the base's, with the base's absolute median on the axis, and the table the console printed.
"""
from __future__ import annotations

import os
from typing import Any

from kvbtools.core import environment, profiles, results
from kvbtools.pages import figures, flame_figures, htmlpage
from kvbtools.pages.compare_figures import CONTROL
from kvbtools.core.errors import UsageError
from kvbtools.pages.figures import ALERT, MUTED, Colours, Figure
from kvbtools.pages.htmlpage import Page
from kvbtools.core.study_tables import STUDY_METRICS, relative_rows
from kvbtools.core.table import fmt_value


def _medians(doc: dict[str, Any]) -> tuple[list[str], dict[str, dict[tuple[str, str], float]]]:
    """The series labels in order and each one's medians by (column, metric)."""
    labels: list[str] = []
    medians: dict[str, dict[tuple[str, str], float]] = {}
    for s in doc.get("series", []):
        if not isinstance(s, dict) or not isinstance(s.get("label"), str):
            raise UsageError("study.json: a series without a label")
        labels.append(s["label"])
        medians[s["label"]] = {tuple(k.rsplit("|", 1)): v  # type: ignore[misc]
                               for k, v in s.get("medians", {}).items()
                               if isinstance(v, (int, float)) and "|" in k}
    if not labels:
        raise UsageError("study.json: no series")
    return labels, medians


def bars_figure(metric: str, unit: str, higher: bool, base: str, others: list[str],
                columns: list[str], medians: dict[str, dict[tuple[str, str], float]],
                colours: Colours) -> Figure:
    """One metric: a row per benchmark column, a bar per non-base series from 1.0 to its ratio
    to the base (the control in grey); the base's absolute median under each name."""
    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 1.6 + 0.28 * len(columns) * max(1, len(others)) ** 0.6)
        step = 0.8 / max(1, len(others))
        drawn: list[float] = []
        zeros: list[tuple[float, str, Any]] = []
        for i, col in enumerate(columns):
            y = len(columns) - 1 - i
            b = medians[base].get((col, metric))
            for j, side in enumerate(others):
                v = medians[side].get((col, metric))
                if v is None or not b:
                    continue
                r = v / b
                drawn.append(r)
                colour = MUTED if side == CONTROL else colours[side]
                yy = y + (len(others) - 1) / 2 * step - j * step
                # From 1.0: better or worse than the base.
                bars = ax.barh(yy, r - 1.0, left=1.0, height=step * 0.9, color=colour)
                text = "0" if r == 0 else f"{r:.2g}" if r < 0.01 else f"{r:.2f}"
                label = ax.text(r, yy, f" {text} " if r >= 1 else f"{text} ", va="center",
                                ha="left" if r >= 1 else "right", fontsize=6.5)
                if r == 0:
                    zeros.append((yy, colour, [*bars, label]))
        # Ratios spanning more than 20x (an engine writing 400x the bytes of another) would
        # squash the rest to nothing on a linear axis.
        positive = [r for r in drawn if r > 0]
        log = bool(positive) and max(positive + [1.0]) / min(positive + [1.0]) > 20
        if log:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(  # ratios, as 0.1, 1, 10: not 10^0
                plt.matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
            if zeros:  # a ratio of 0 has no place on a log axis: a triangle at its left end
                left = min(positive + [1.0]) / 4
                ax.set_xlim(left=left)
                for yy, colour, drawn_at_0 in zeros:
                    for artist in drawn_at_0:  # at x = 0: nowhere on a log axis
                        artist.remove()
                    ax.plot([left], [yy], "<", color=colour, ms=6, clip_on=False)
                    ax.text(left, yy, "   0 (off the log axis)", va="center", ha="left",
                            fontsize=6.5, color=ALERT)
        ax.axvline(1.0, color="#333333", lw=0.9)
        ax.set_yticks(range(len(columns)))
        ax.set_yticklabels(list(reversed([
            f"{c}\n{base}: " + ("-" if medians[base].get((c, metric)) is None
                                else fmt_value(medians[base][(c, metric)])) for c in columns])),
            fontsize=7)
        ax.set_ylim(-0.6, len(columns) - 0.4)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(f"median relative to {base} (1.0 = the base"
                      + ("; log scale" if log else "")
                      + f"); {'higher' if higher else 'lower'} is better")
        ax.set_title(f"{metric} [{unit}]: relative to {base}")
        if others:
            patch = plt.matplotlib.patches.Patch
            ax.legend([patch(color=MUTED if s == CONTROL else colours[s]) for s in others],
                      others, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        return fig

    caption = (f"Each bar runs from 1.0 to a series' median {metric} over the rounds divided by "
               f"{base}'s (the "
               f"base, whose own median in {unit} is under each benchmark's name). "
               + ("The grey bar is the control, the base measured again in the same rounds: "
                  "how far it is from 1.0 is the noise. " if CONTROL in others else "")
               + "A benchmark the base has no value for (or a value of 0) has no bars.")
    return Figure(f"study-{figures.safe_name(metric)}", caption, draw)


def noisy_series(directory: str, doc: dict[str, Any]) -> dict[str, str]:
    """label -> "k of n runs noisy, e.g. REASON" for the series with runs kvbench called noisy,
    read from the run files study.json names (where they are, or beside it)."""
    out = {}
    for s in doc.get("series", []):
        reasons, n = [], 0
        for f in s.get("files", []) if isinstance(s, dict) else []:
            path = f if os.path.exists(f) else os.path.join(directory, os.path.basename(f))
            try:
                run = results.read_json(path)
            except UsageError:
                continue  # a file gone or cut: the study's medians stand without its verdict
            if isinstance(run, dict) and isinstance(run.get("context"), dict):
                n += 1
                reasons += [r for r in [environment.noisy_reason(run["context"])] if r]
        if reasons:
            out[s["label"]] = f"{len(reasons)} of {n} run(s) noisy, e.g. {reasons[0]}"
    return out


def study_page(directory: str) -> Page:
    doc = results.read_json(os.path.join(directory, "study.json"))
    if not isinstance(doc, dict) or doc.get("schema") != "kvb-study":
        raise UsageError(f"{directory}/study.json: not a kvb study results document")
    labels, medians = _medians(doc)
    base = doc.get("base") if doc.get("base") in labels else labels[0]
    labels = [base] + [s for s in labels if s != base]
    others = labels[1:]
    columns: list[str] = []
    for s in labels:
        for c, _ in medians[s]:
            if c not in columns:
                columns.append(c)
    page = Page(f"kvb matrix study: {', '.join(labels[:6])}"
                + (" ..." if len(labels) > 6 else ""))
    page.para(f"results directory {directory}; {doc.get('repeats', '?')} round(s), interleaved; "
              f"workloads {doc.get('workloads', '?')}, --num {doc.get('num', '?')}; base: {base}",
              "muted")
    noisy = noisy_series(directory, doc)
    if noisy:
        page.html(htmlpage.noise_box([f"{k}: {v}" for k, v in noisy.items()]))
    configs = doc.get("configs") or []
    if configs:
        page.html(htmlpage.table([[c.get("name", ""), " ".join(c.get("args", []))]
                                  for c in configs if isinstance(c, dict)],
                                 header=["configuration", "kvbench flags"]))
    colours = Colours(s for s in others if s != CONTROL)
    for metric, unit, higher, _ in STUDY_METRICS:
        cols = [c for c in columns if any((c, metric) in medians[s] for s in labels)]
        if not cols:
            continue
        page.heading(2, f"{metric} ({unit})", f"m-{figures.safe_name(metric)}")
        if all(medians[s].get((c, metric), 0) == 0 for s in labels for c in cols):
            page.para(f"{metric}: 0 in every run", "muted")
            continue
        fig = bars_figure(metric, unit, higher, base, others, cols, medians, colours)
        fig.noisy = noisy
        page.figure(fig)
        rows = relative_rows(labels, cols, lambda s, c: medians[s].get((c, metric)))
        page.html(htmlpage.table(rows, header=["series"] + cols,
                                 numeric=range(1, len(cols) + 1)))
    _profile_sections(page, directory, doc, labels)
    return page


def _profile_sections(page: Page, directory: str, doc: dict[str, Any], labels: list[str]) -> None:
    """kvbench --profile runs (kvb matrix --profile): each series' differential flame graph
    against the base, from the run files study.json names."""
    files = {s["label"]: [f if os.path.exists(f) else os.path.join(directory, os.path.basename(f))
                          for f in s.get("files", [])]
             for s in doc.get("series", []) if isinstance(s, dict) and "label" in s}
    shown = [x for x in labels if files.get(x) and all(os.path.exists(f) for f in files[x])]
    if len(shown) < 2 or shown[0] != labels[0]:
        return
    flame_figures.add_diff_sections(
        page, [profiles.of_documents(results.load_all(files[x])) for x in shown], shown)

