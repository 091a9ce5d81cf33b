"""The figures of kvbench runs (docs/report.md): per benchmark and role, throughput over time,
the latency percentile distribution and the cost per operation; and an overview of ops/s.

Runs are overlaid, one colour per run: its engine's (figures.ENGINE_COLOURS, the same on every
page), a shade of it when two runs share an engine. Repeats of a benchmark are drawn as more lines
of the run's colour; bars show their median. A figure that draws a run kvbench called noisy is
marked, the mark linking to the page's box that says why (figures.Figure.noisy).
"""
from __future__ import annotations

import math
import os
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from kvbtools.core import environment, hgrm, results
from kvbtools.core.metrics import value
from kvbtools.pages import figures
from kvbtools.pages.figures import ALERT, Colours, Figure
from kvbtools.core.results import Document

MB = 1048576.0
# Fewer intervals than this in an over-time figure and its caption says why (and what gives more).
MIN_POINTS = 20
# The shortest --report_interval_seconds kvbench takes (its range: src/cli/kvbench_flags.cc).
SHORTEST_INTERVAL = 0.01


@dataclass
class Run:
    label: str
    doc: Document


@dataclass
class Entry:
    """One role of one measured result of one run."""
    run: Run
    result: dict[str, Any]
    role: dict[str, Any]

    @property
    def repeat(self) -> int:
        return int(self.result.get("repeat", 1))


@dataclass
class Group:
    """One benchmark entry of --benchmarks and one role, across the runs."""
    step: str                        # "readrandom", "readrandom-2" for a second entry
    role: str
    roles_in_step: int
    entries: list[Entry] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.step if self.roles_in_step == 1 else f"{self.step} [{self.role}]"

    @property
    def name(self) -> str:
        """File name stem: readrandom, fwdrangewhilewriting-reader."""
        return figures.safe_name(self.step if self.roles_in_step == 1
                                 else f"{self.step}-{self.role}")

    def runs(self) -> list[Run]:
        out: list[Run] = []
        for e in self.entries:
            if e.run not in out:
                out.append(e.run)
        return out


def label_runs(docs: list[Document]) -> list[Run]:
    """A legend label per run: its engine; engine and preset when engines repeat; the file name
    when that is not enough."""
    engines = [d.doc["context"]["engine"]["name"] for d in docs]
    labels = list(engines)
    if len(set(labels)) < len(labels):
        presets = [d.doc["context"].get("build", {}).get("preset", "") for d in docs]
        labels = [f"{e} {p}".strip() for e, p in zip(engines, presets)]
    if len(set(labels)) < len(labels):
        labels = [f"{e} ({os.path.basename(d.path)})" for e, d in zip(engines, docs)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} #{i + 1}" for i, lab in enumerate(labels)]
    return [Run(lab, d) for lab, d in zip(labels, docs)]


def colours_for(runs: list[Run]) -> Colours:
    """The runs' colours: their engines' (figures.colour_choices), the same on every page."""
    return Colours(r.label for r in runs)


def noisy(runs: list[Run]) -> dict[str, str]:
    """label -> why kvbench called the run noisy, for the noisy ones among `runs`."""
    out = {r.label: environment.noisy_reason(r.doc.doc["context"]) for r in runs}
    return {label: why for label, why in out.items() if why}


def groups(runs: list[Run]) -> list[Group]:
    """Every (benchmark entry, role) of the runs, in the order they ran."""
    out: dict[tuple[str, str], Group] = {}
    for run in runs:
        for occ, result, role in results.occurrences(run.doc.doc):
            step = result["benchmark"] + (f"-{occ}" if occ > 1 else "")
            key = (step, role["role"])
            if key not in out:
                out[key] = Group(step, role["role"], len(result["roles"]))
            out[key].entries.append(Entry(run, result, role))
    return list(out.values())


# ---- number formatting -----------------------------------------------------------------------

def short(v: float) -> str:
    """38,745 -> 38.7k; 1,234,567 -> 1.23M; 0.135 -> 0.135."""
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.3g}{suffix}"
    if a == 0:
        return "0"
    return f"{v:.3g}"


def _formatter(fn: Callable[[float], str]) -> Any:
    import matplotlib.ticker as ticker  # matplotlib loads only when a figure is drawn
    return ticker.FuncFormatter(lambda v, _pos: fn(v))


def median_of(entries: list[Entry], get: Callable[[Entry], float | None]) -> float | None:
    vals = [v for v in (get(e) for e in entries) if v is not None]
    return statistics.median(vals) if vals else None


# ---- throughput over time --------------------------------------------------------------------

def _target(e: Entry) -> float:
    return float(e.role.get("pacing", {}).get("target_bytes_per_sec", 0) or 0)


def _interval(e: Entry) -> float:
    w = e.run.doc.doc["context"].get("workload", {})
    return float(w.get("report_interval_seconds", 0) or 0)


def throughput(g: Group, colours: Colours) -> tuple[Figure | None, list[str]]:
    """Ops/s per interval (MB/s for a paced writer, the unit of its target), stalls ringed in
    red, the writer's target rate dashed. None when no run has interval samples."""
    notes: list[str] = []
    drawn = []
    for e in g.entries:
        if e.role["intervals"]["series"]:
            drawn.append(e)
            continue
        why = ("sampling was off: --report_interval_seconds=0" if _interval(e) <= 0 else
               f"the document has none; the role ran {float(e.role['seconds']):.2f} s")
        notes.append(f"{e.run.label}{_rep(e)}: no interval samples ({why}): no throughput "
                     "over time")
    if not drawn:
        return None, notes
    paced = any(_target(e) > 0 for e in drawn)
    unit = "MB/s" if paced else "ops/s"
    intervals = sorted({_interval(e) for e in drawn})
    every = ", ".join(f"{i:g} s" for i in intervals)
    stalls = sum(_stall_count(e) for e in drawn)

    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 3.4)
        labelled: set[str] = set()
        top = 0.0
        for e in drawn:
            xs, ys, sx, sy = _series(e, paced)
            top = max([top, *ys])
            c = colours[e.run.label]
            first = e.run.label not in labelled
            labelled.add(e.run.label)
            # Markers where there are few intervals: a run of one interval is still seen.
            ax.plot(xs, ys, color=c, lw=1.4 if first else 0.8, alpha=1 if first else 0.6,
                    label=e.run.label if first else None, marker="o" if len(xs) <= 40 else None,
                    ms=2.5)
            if sx:
                ax.scatter(sx, sy, s=30, facecolors="none", edgecolors=ALERT, linewidths=1.2,
                           zorder=3, label="stall: below half the median"
                           if "stall" not in labelled else None)
                labelled.add("stall")
        for t in sorted({_target(e) for e in drawn if _target(e) > 0}):
            ax.axhline(t / MB, color="#333333", ls="--", lw=1,
                       label=f"writer's target {t / MB:.2f} MB/s")
            top = max(top, t / MB)
        # Room above the highest line and the target: a writer on its target stays visible.
        ax.set_ylim(0, top * 1.15 if top > 0 else 1)
        ax.set_xlim(left=0)
        ax.yaxis.set_major_formatter(_formatter(short))
        ax.set_xlabel("seconds since the benchmark started")
        ax.set_ylabel(unit)
        # On its own line: the legend above the axes may be as wide as the figure.
        fig.suptitle(f"{g.label}: throughput per interval ({every})", x=0.01, ha="left",
                     fontsize=10)
        _legend_above(ax)
        return fig

    caption = (f"{unit} in each interval of the run, one line per run. Red rings mark stalls, "
               f"intervals below half the run's median ({stalls} in all)."
               + (" The dashed line is the writer's target rate: a writer that keeps to it "
                  "draws along it." if paced else ""))
    return Figure(f"{g.name}-throughput", caption, draw,
                  noisy=noisy(g.runs()), notes=_few_points(drawn)), notes


def _few_points(drawn: list[Entry]) -> list[str]:
    """Why a run draws fewer than MIN_POINTS intervals: how long it lasted at which interval,
    and what gives more (its repeat with the fewest)."""
    out = []
    runs = list(dict.fromkeys(e.run.label for e in drawn))
    for label in runs:
        mine = [e for e in drawn if e.run.label == label]
        e = min(mine, key=lambda x: len(x.role["intervals"]["series"]))
        n = len(e.role["intervals"]["series"])
        if n >= MIN_POINTS:
            continue
        every = _interval(e)
        more = ("a shorter interval gives more" if every > SHORTEST_INTERVAL else
                f"only a longer run gives more ({SHORTEST_INTERVAL:g} s is the shortest "
                "interval kvbench takes)")
        which = f" (the fewest of its {len(mine)} repeats)" if len(mine) > 1 else ""
        out.append(f"{label}: only {n} interval{'' if n == 1 else 's'}{which}: the run lasted "
                   f"{float(e.role['seconds']):.3g} s at --report_interval_seconds={every:g}; "
                   f"{more}.")
    return out


def _legend_above(ax: Any) -> None:
    """The legend above the axes, right-aligned, runs first and the markings after."""
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: (labels[i].startswith(("stall", "writer")),
                                                      i))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower right",
              bbox_to_anchor=(1.0, 1.0), ncol=len(labels), borderaxespad=0.2,
              handlelength=1.6, columnspacing=1.2)


def _rep(e: Entry) -> str:
    return f" (repeat {e.repeat})" if int(e.result.get("repeats", 1)) > 1 else ""


def _stall_count(e: Entry) -> int:
    return int(e.role["intervals"].get("below_half_median", 0))


def _series(e: Entry, paced: bool) -> tuple[list[float], list[float], list[float], list[float]]:
    """Interval midpoints and rates, and the stalled ones: ops/s below half the median, the
    rule of intervals.below_half_median, which leaves out a trailing interval shorter than half
    the report interval (its rate is noise)."""
    median = float(e.role["intervals"]["median_ops_per_sec"])
    series = e.role["intervals"]["series"]
    nominal = _interval(e)
    xs, ys, sx, sy = [], [], [], []
    for k, iv in enumerate(series):
        secs = float(iv["seconds"])
        if secs <= 0:
            continue
        trailing_short = k == len(series) - 1 and secs < nominal / 2
        x = float(iv["end_seconds"]) - secs / 2
        ops = iv["ops"] / secs
        y = iv["bytes"] / secs / MB if paced else ops
        xs.append(x)
        ys.append(y)
        if ops < median / 2 and not trailing_short:
            sx.append(x)
            sy.append(y)
    return xs, ys, sx, sy


# ---- latency percentile distribution ----------------------------------------------------------

PERCENT_TICKS = [(2, "50%"), (10, "90%"), (100, "99%"), (1e3, "99.9%"), (1e4, "99.99%"),
                 (1e5, "99.999%"), (1e6, "99.9999%"), (1e7, "99.99999%"), (1e8, "99.999999%")]


def latency(g: Group, colours: Colours) -> tuple[Figure | None, list[str]]:
    """Latency against percentile on HdrHistogram's 1/(1-p) axis, p50 to max, one line per run."""
    drawn = [e for e in g.entries if int(e.role["latency_ns"].get("count", 0)) > 0]
    notes = [f"{e.run.label}{_rep(e)}: no operations timed: no latency distribution"
             for e in g.entries if e not in drawn]
    if not drawn:
        return None, notes

    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 3.6)
        labelled: set[str] = set()
        top = 2.0
        for e in drawn:
            lat = e.role["latency_ns"]
            xs, ys, exact = hgrm.curve(lat)
            c = colours[e.run.label]
            first = e.run.label not in labelled
            labelled.add(e.run.label)
            us = [y / 1e3 for y in ys]
            kw = dict(color=c, lw=1.5 if first else 0.8, alpha=1 if first else 0.6,
                      label=e.run.label if first else None)
            if exact:
                ax.step(xs, us, where="post", **kw)
            else:
                ax.plot(xs, us, marker="o", ms=3, **kw)
            marks = [(2.0, lat["p50"]), (100.0, lat["p99"]), (1000.0, lat["p99_9"]),
                     (xs[-1], lat["max"])]
            marks = [(x, v / 1e3) for x, v in marks if x <= xs[-1]]
            ax.plot([m[0] for m in marks], [m[1] for m in marks], "o", ms=3.5, color=c)
            top = max(top, xs[-1])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = [(x, t) for x, t in PERCENT_TICKS if x <= top * 1.01]
        ax.set_xticks([x for x, _ in ticks])
        ax.set_xticklabels([t for _, t in ticks])
        ax.minorticks_off()
        ax.set_xlim(1.9, top * 1.15)
        ax.yaxis.set_major_formatter(_formatter(lambda v: f"{v:g}"))
        ax.set_xlabel("percentile (HdrHistogram's 1/(1-p) axis); the last point of each line "
                      "is its max")
        ax.set_ylabel("latency (µs)")
        ax.set_title(f"{g.label}: latency by percentile")
        ax.legend(loc="upper left")
        return fig

    caption = ("Latency of each operation against its percentile, p50 to max, on a log scale "
               "that gives each extra nine the same width; dots mark p50, p99, p99.9 and max. "
               "A line that turns up sharply shows a tail: those operations waited on something "
               "(a flush, a stall, a lock).")
    return Figure(f"{g.name}-latency", caption, draw,
                  noisy=noisy([e.run for e in drawn])), notes


# ---- cost per operation ----------------------------------------------------------------------

# (title, [(path, stack label)], scale): bars of the insert benchmark's Mcpu/i, rKB/i, wKB/i,
# cs/i, size and rss; a path is looked up in the role, then in its result (metrics.value).
COST_PANELS: list[tuple[str, list[tuple[str, str]], float]] = [
    ("CPU µs/op", [("cost.cpu_user_us_per_op", "user"), ("cost.cpu_sys_us_per_op", "sys")], 1.0),
    ("storage read KB/op", [("cost.storage_read_kb_per_op", "")], 1.0),
    ("storage written KB/op", [("cost.storage_write_kb_per_op", "")], 1.0),
    ("context switches/op", [("cost.voluntary_cs_per_op", "voluntary"),
                             ("cost.involuntary_cs_per_op", "involuntary")], 1.0),
    ("database size MB", [("db_size_bytes", "")], 1.0 / MB),
    ("peak RSS MB", [("peak_rss_bytes", "")], 1.0 / MB),
]


def _value(e: Entry, path: str) -> float | None:
    return value(e.role, e.result, path)


def cost(g: Group, colours: Colours) -> tuple[Figure, list[str]]:
    """Bars per run: CPU, storage read and written, context switches per operation, database
    size and peak RSS after the benchmark (medians over repeats)."""
    runs = g.runs()
    notes = []
    missing = [r.label for r in runs if all(_value(e, "cost.storage_read_kb_per_op") is None
                                            for e in g.entries if e.run is r)]
    if missing:
        notes.append(", ".join(missing) + ": no storage KB per op (/proc/self/io was not "
                     "readable): those bars are n/a")

    def draw(plt: Any) -> Any:
        # One axes, a group of bars per panel, each on its own scale (its bars carry their
        # values: no y axis): six axes were most of the time a page of bar figures took.
        fig, ax = figures.new(plt, 2.9)
        x, ticks = 0, []
        for title, parts, scale in COST_PANELS:
            ticks += [(x + i, r.label) for i, r in enumerate(runs)]
            x = _bar_group(ax, x, runs, colours, _cost_stacks(g, runs, parts, scale), title)
        _groups_axes(ax, ticks, x)
        fig.suptitle(f"{g.label}: cost per operation", x=0.01, ha="left", fontsize=10)
        _stack_legend(plt, fig)
        return fig

    caption = ("What each operation cost, one bar per run: process CPU (user below, sys "
               "hatched above), storage KB read and written, context switches (voluntary below, "
               "involuntary hatched), and the database size and peak RSS after the benchmark. "
               "Lower is cheaper; the CPU and KB bars explain throughput differences.")
    return Figure(f"{g.name}-cost", caption, draw,
                  noisy=noisy(runs)), notes


def _stack_legend(plt: Any, fig: Any) -> None:
    """What the two parts of a stacked bar are, on the title's line: a figure file has no
    caption to say it."""
    patches = plt.matplotlib.patches
    solid = patches.Patch(facecolor="#8a8a8a", edgecolor="#8a8a8a")
    hatched = patches.Patch(facecolor="#8a8a8a", edgecolor="white", hatch="////")
    fig.legend([solid, hatched], ["user CPU; voluntary switches (solid, below)",
                                  "sys CPU; involuntary switches (hatched, above)"],
               loc="upper right", ncol=2, fontsize=7.5, borderaxespad=0.1)


# A cost group's highest bar, in the axes' units (each group on its own scale); its title above.
GROUP_HIGHEST = 1.0
GROUP_TOP = 1.2
# The top of a row of bar groups, in its highest bar's heights (decades on a log axis): room for
# the values over the bars and the groups' titles at GROUP_TOP.
AXES_TOP = GROUP_TOP + 0.12


def _cost_stacks(g: Group, runs: list[Run], parts: list[tuple[str, str]],
                 scale: float) -> list[list[float | None]]:
    """Each run's parts of one cost panel (medians over repeats, scaled; None when absent)."""
    out = []
    for r in runs:
        mine = [e for e in g.entries if e.run is r]
        values = [median_of(mine, lambda e: _value(e, path)) for path, _ in parts]
        out.append([None if v is None else v * scale for v in values])
    return out


def _bar_group(ax: Any, x0: int, runs: list[Run], colours: Colours,
               stacks: list[list[float | None]], title: str, fontsize: float = 9) -> int:
    """A panel as a group of bars at x0, x0 + 1, ...: a bar per run, stacked by parts (the
    second hatched), scaled so that the group's highest is GROUP_HIGHEST, each labelled with its
    value (n/a when it has none), the title above. Returns where the next group starts."""
    top = max((sum(v for v in st if v is not None) for st in stacks), default=0.0)
    unit = GROUP_HIGHEST / top if top > 0 else 1.0
    for i, (r, st) in enumerate(zip(runs, stacks)):
        bottom = 0.0
        for k, v in enumerate(st):
            if v is None:
                continue
            ax.bar(x0 + i, v * unit, bottom=bottom, color=colours[r.label], width=0.7,
                   hatch="////" if k else None, edgecolor="white" if k else colours[r.label],
                   linewidth=0.5)
            bottom += v * unit
        if any(v is not None for v in st):
            ax.text(x0 + i, bottom, short(bottom / unit), ha="center", va="bottom", fontsize=6.5)
        else:
            ax.text(x0 + i, 0, "n/a", ha="center", va="bottom", fontsize=7, color="#666666")
    ax.plot([x0 - 0.45, x0 + len(runs) - 0.55], [0, 0], color="#333333", lw=0.8)
    ax.text(x0 - 0.45, GROUP_TOP, title, ha="left", va="bottom", fontsize=fontsize)
    return x0 + len(runs) + 1


def _groups_axes(ax: Any, ticks: list[tuple[int, str]], end: int) -> None:
    """The axes of bar groups: a run's name under each bar, no y axis, no frame."""
    ax.set_xticks([x for x, _ in ticks])
    ax.set_xticklabels([label for _, label in ticks], rotation=30, ha="right", fontsize=7)
    ax.set_xlim(-0.7, end - 1.3)
    ax.set_ylim(0, AXES_TOP)
    ax.spines["bottom"].set_visible(False)
    ax.tick_params(axis="x", length=0)
    _values_on_bars(ax)


def _values_on_bars(ax: Any) -> None:
    """No y axis on a panel whose bars carry their values: it said them again, and its ticks
    and labels were a third of the drawing time of a page's bar figures."""
    ax.set_yticks([])
    ax.spines["left"].set_visible(False)
    ax.grid(visible=False)


# ---- overview ----------------------------------------------------------------------------------

def overview(gs: list[Group], colours: Colours) -> Figure | None:
    """Ops/s of every benchmark and role, one group of bars each, a bar per run: each group on
    its own linear scale, or all on one log axis when the runs of a group span more than
    figures.LOG_SPAN (a reference engine 100x a storage engine left the storage engines slivers)."""
    gs = [g for g in gs if any(e.role["ops"] > 0 for e in g.entries)]
    if not gs:
        return None
    per_row = min(len(gs), 5)
    nrows = math.ceil(len(gs) / per_row)
    ops = [[median_of([e for e in g.entries if e.run is r],
                      lambda e: float(e.role["ops_per_sec"])) or 0.0 for r in g.runs()]
           for g in gs]
    positive = [v for vals in ops for v in vals if v > 0]
    log = any(max(vals) > figures.LOG_SPAN * min(vals) for vals in
              ([v for v in group if v > 0] for group in ops) if vals)
    floor = 10.0 ** math.floor(math.log10(min(positive)))  # the log axis's bottom

    def draw(plt: Any) -> Any:
        # A row of groups per axes (see cost()).
        fig, axes = figures.new(plt, 2.3 * nrows + 0.3, nrows=nrows, squeeze=False)
        for row, ax in enumerate(axes[:, 0]):
            x, ticks = 0, []
            for k in range(row * per_row, min(len(gs), (row + 1) * per_row)):
                g, runs = gs[k], gs[k].runs()
                ticks += [(x + i, r.label) for i, r in enumerate(runs)]
                title = g.label.replace(" [", "\n[")
                x = _log_bar_group(ax, x, runs, colours, ops[k], title, floor) if log else \
                    _bar_group(ax, x, runs, colours, [[v] for v in ops[k]], title, 8.5)
            _groups_axes(ax, ticks, max(x, per_row * 4))
            if log:
                _log_axis(ax, floor, max(positive))
        fig.suptitle("ops/s per benchmark (median of repeats" + ("; one log axis" if log else "")
                     + "); higher is better", x=0.01, ha="left", fontsize=10)
        return fig

    scale = (f"all on one logarithmic axis, each gridline 10x the one below: the runs of a "
             f"benchmark span more than {figures.LOG_SPAN:g}x ({short(min(positive))} to "
             f"{short(max(positive))} ops/s in all), and on a linear scale the slower engines "
             "would be slivers; equal heights are equal ratios, a bar's height is not "
             "proportional to its ops/s" if log else "one panel each on its own linear scale")
    caption = (f"Throughput of every benchmark and role, {scale}; one bar per run in the run's "
               "colour, labelled with its ops/s: the headline numbers of the summary table.")
    return Figure("overview-throughput", caption, draw,
                  noisy=noisy([r for g in gs for r in g.runs()]))


def _log_bar_group(ax: Any, x0: int, runs: list[Run], colours: Colours, values: list[float],
                   title: str, floor: float) -> int:
    """A panel of the overview on its log axis: a bar per run from the axis's bottom `floor`
    up to its value (n/a when it has none), its value above it, the title over the group."""
    for i, (r, v) in enumerate(zip(runs, values)):
        if v > 0:
            ax.bar(x0 + i, v - floor, bottom=floor, color=colours[r.label], width=0.7)
            ax.text(x0 + i, v, short(v), ha="center", va="bottom", fontsize=6.5)
        else:
            ax.text(x0 + i, floor, "n/a", ha="center", va="bottom", fontsize=7, color="#666666")
    ax.text(x0 - 0.45, GROUP_TOP / AXES_TOP, title, ha="left", va="bottom", fontsize=8.5,
            transform=ax.get_xaxis_transform())
    return x0 + len(runs) + 1


def _log_axis(ax: Any, floor: float, top: float) -> None:
    """The overview's shared log axis, from `floor` to above the highest bar `top` as a linear
    row's (AXES_TOP), its ticks at the powers of ten (1k, 10k, ...)."""
    import matplotlib.ticker as ticker  # matplotlib loads only when a figure is drawn
    ax.set_yscale("log")
    ax.set_ylim(floor, floor * (top / floor) ** AXES_TOP)
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10))
    ax.yaxis.set_minor_locator(ticker.NullLocator())
    ax.yaxis.set_major_formatter(_formatter(short))
    ax.spines["left"].set_visible(True)
    ax.grid(axis="y", visible=True)
    ax.set_ylabel("ops/s (log)")
