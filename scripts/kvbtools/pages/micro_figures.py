"""kvbench_micro figures (docs/report.md): GB/s against block size, per family (crc32c, xxh3_64,
lz4, ...). With one side (one file, one preset), one line per implementation; with several
(presets of kvb matrix, versions of kvb versions), one panel per implementation and one line per
side, in the side's colour.

A Google Benchmark name is family/implementation/.../block size; names that do not end in a
block size are listed, not drawn.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from kvbtools.pages import figures
from kvbtools.pages.figures import Colours, Figure
from kvbtools.core.samples import Side

RATE = "bytes_per_second"


@dataclass(frozen=True)
class Name:
    family: str
    impl: str
    size: int


def parse(name: str) -> Name | None:
    parts = name.split("/")
    if len(parts) < 3 or not parts[-1].isdigit():
        return None
    return Name(parts[0], "/".join(parts[1:-1]), int(parts[-1]))


def families(sides: list[Side]) -> tuple[dict[str, list[str]], list[str]]:
    """{family: [implementation, ...]} in order of appearance, and the benchmarks not drawn
    (no block size in the name, or no bytes/s)."""
    out: dict[str, list[str]] = {}
    undrawn: list[str] = []
    for s in sides:
        for bench, metric in s.order:
            if metric != RATE:
                continue
            n = parse(bench)
            if n is None:
                if bench not in undrawn:
                    undrawn.append(bench)
                continue
            impls = out.setdefault(n.family, [])
            if n.impl not in impls:
                impls.append(n.impl)
    return out, undrawn


def _points(side: Side, family: str, impl: str) -> tuple[list[int], list[float]]:
    pts = []
    for (bench, metric), values in side.values.items():
        n = parse(bench) if metric == RATE else None
        if n is not None and n.family == family and n.impl == impl:
            pts.append((n.size, statistics.median(values) / 1e9))
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts]


def _size_label(v: float) -> str:
    v = int(round(v))
    return f"{v // 1048576} MiB" if v >= 1048576 and v % 1048576 == 0 else \
        f"{v // 1024} KiB" if v >= 1024 and v % 1024 == 0 else f"{v} B"


def _axes(ax: Any, sizes: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([_size_label(s) for s in sizes], fontsize=7)
    ax.minorticks_off()
    ax.set_ylim(bottom=0)


def _one_size(family: str, impls: list[str], sides: list[Side], colours: Colours,
              size: int) -> Figure:
    """All runs measured one block size (kvb micro, the quick start): bars, grouped by
    implementation, one per side."""
    def draw(plt: Any) -> Any:
        fig, ax = figures.new(plt, 2.8)
        width = 0.8 / len(sides)
        for j, s in enumerate(sides):
            for i, impl in enumerate(impls):
                _, ys = _points(s, family, impl)
                if not ys:
                    continue
                x = i - 0.4 + width * (j + 0.5)
                ax.bar(x, ys[0], width=width * 0.92, label=s.label if i == 0 else None,
                       color=colours[s.label] if len(sides) > 1 else colours[impl])
                ax.text(x, ys[0], f"{ys[0]:.3g}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(impls)))
        ax.set_xticklabels(impls, fontsize=8)
        ax.margins(y=0.15)
        ax.grid(axis="x", visible=False)
        ax.set_ylabel("GB/s")
        ax.set_title(f"{family}: GB/s at {_size_label(size)} blocks")
        if len(sides) > 1:
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=len(sides),
                      borderaxespad=0.2)
        return fig

    caption = (f"Bytes processed per second (GB/s, 10^9) at the one block size measured "
               f"({_size_label(size)}), one bar per implementation"
               + (" and side" if len(sides) > 1 else "") + "; higher is faster.")
    return Figure(f"{figures.safe_name(family)}-gbps", caption, draw)


def gbps_figure(family: str, impls: list[str], sides: list[Side],
                colours: Colours) -> Figure:
    """GB/s against block size for one family."""
    sizes_seen = {n.size for s in sides for b, m in s.order if m == RATE
                  for n in [parse(b)] if n is not None and n.family == family}
    if len(sizes_seen) == 1:
        return _one_size(family, impls, sides, colours, sizes_seen.pop())
    several = len(sides) > 1
    ncols = min(len(impls), 3) if several else 1
    nrows = math.ceil(len(impls) / ncols) if several else 1

    def draw(plt: Any) -> Any:
        fig, axes = figures.new(plt, (2.6 if several else 3.6) * nrows + 0.3, ncols=ncols,
                                nrows=nrows, squeeze=False)
        flat = [ax for row in axes for ax in row]
        sizes: set[int] = set()
        if several:
            for ax, impl in zip(flat, impls):
                for s in sides:
                    xs, ys = _points(s, family, impl)
                    sizes.update(xs)
                    ax.plot(xs, ys, marker="o", ms=3, color=colours[s.label], label=s.label)
                ax.set_title(f"{family}/{impl}", fontsize=9)
            for ax in flat[len(impls):]:
                ax.set_visible(False)
            handles, labels = flat[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="upper right", ncol=len(labels), frameon=False)
        else:
            ax = flat[0]
            for impl in impls:
                xs, ys = _points(sides[0], family, impl)
                sizes.update(xs)
                ax.plot(xs, ys, marker="o", ms=3, color=colours[impl], label=impl)
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=min(len(impls), 6),
                      borderaxespad=0.2)
            ax.set_title(f"{family}: GB/s by block size ({sides[0].label})")
        for ax in flat[:len(impls) if several else 1]:
            _axes(ax, sorted(sizes))
            ax.set_ylabel("GB/s")
        if several:
            fig.suptitle(f"{family}: GB/s by block size", x=0.01, ha="left", fontsize=10)
        return fig

    what = "preset or version" if several else "implementation"
    caption = (f"Bytes processed per second (GB/s, 10^9) against the block size on a log scale, "
               f"one line per {what}; higher is faster. Small blocks show per-call overhead, "
               "large ones the kernel's streaming rate.")
    return Figure(f"{figures.safe_name(family)}-gbps", caption, draw)


def all_figures(sides: list[Side], colours: Colours) -> tuple[list[Figure], list[str]]:
    """A figure per family, and notes on what was not drawn. `colours`: the sides'."""
    fams, undrawn = families(sides)
    # One side: a colour per implementation, from the first in each family; several: the
    # sides' colours, the same in every family.
    figs = [gbps_figure(f, impls, sides, colours if len(sides) > 1 else Colours(impls))
            for f, impls in fams.items()]
    notes = []
    if undrawn:
        notes.append("not drawn (no block size at the end of the name): " + ", ".join(undrawn))
    skipped = sorted({f"{b}: {m}" for s in sides for b, m in s.skipped.items()})
    if skipped:
        notes.append("benchmarks that reported an error: " + "; ".join(skipped))
    return figs, notes
