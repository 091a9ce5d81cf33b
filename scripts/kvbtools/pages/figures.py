"""Figures drawn with matplotlib (Debian's python3-matplotlib), the same bytes for the same input,
for self-contained HTML pages (inline SVG) and as files (--svg DIR, --png DIR). Every kvb command
that draws goes through here: `kvb report --html`, `kvb compare --html`, the report.html of
matrix, versions and bisect (docs/report.md), `kvb history --html` (docs/history.md). Pages are
htmlpage.Page; the figures of each page are in run_figures, micro_figures, compare_figures and
history_figures.

Importing this module does not import matplotlib (every other kvb command works without it);
`pyplot()` does, and raises UsageError naming the Debian package when it is missing.

Deterministic output: a fixed svg.hashsalt per figure (its name) for the ids matplotlib makes,
no date or creator in the metadata, one font (DejaVu Sans, matplotlib's own and Debian's
fonts-dejavu-core) drawn as paths, so an SVG needs no font where it is opened and two runs of a
command over the same files write the same bytes.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from kvbtools.core import manifest, output
from kvbtools.core.io_util import import_debian
from kvbtools.pages import noise

PACKAGE = "python3-matplotlib"
WIDTH_INCHES = 10.0      # every figure; with PNG_DPI a PNG is 1200 px wide
PNG_DPI = 120
FONT = "DejaVu Sans"

# One colour per engine on every page and in every figure: a run, a study series or a side named
# after an engine is drawn in the engine's colour, one named after an engine and more ("rocksdb
# x86-clang-native") in a shade of it. Any other name (a preset, a version, an implementation)
# takes a colour from a hash of the name, never an engine's, so it too keeps its colour from page
# to page. Red is kept for what a reader must notice: stalls, regressions, the blamed commit; grey
# for the control.
# The storage engines take these in cmake/deps.json's order (rocksdb blue, wiredtiger orange,
# lmdb green: no module names a library, core/manifest.py), then the reference engines theirs.
ENGINE_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d4a017", "#7f7f7f", "#9edae5")
REFERENCE_COLOURS = {"memory": "#8c564b", "null": "#e377c2"}
ENGINE_COLOURS = {**{name: ENGINE_PALETTE[i % len(ENGINE_PALETTE)] for i, name in enumerate(
    d.name for d in manifest.deps().values() if d.engine)}, **REFERENCE_COLOURS}
HASHED = ("#9467bd", "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#7b4173",
          "#5254a3", "#e7ba52", "#6b6ecf")
# Shades of an engine's colour for names that start with it: mixed with black (<0) or white.
SHADES = (-0.35, 0.4, -0.6, 0.65, -0.15, 0.2)
# Values (ratios, rates) spanning more than this factor get a log axis: on a linear one 0.011
# beside 7.56, or 0.5 M ops/s beside 47.5 M, leave the smaller in a pixel or a sliver.
LOG_SPAN = 10.0
ALERT = "#d62728"
GOOD = "#2c7fb8"
MUTED = "#9a9a9a"
BAND = "#e3e3e3"

_plt: Any = None


def pyplot(purpose: str = "--html") -> Any:
    """matplotlib.pyplot set up for deterministic figures; UsageError (exit 2) naming the Debian
    package when matplotlib cannot be imported."""
    global _plt
    if _plt is not None:
        return _plt
    matplotlib = import_debian("matplotlib", PACKAGE, purpose)
    matplotlib.use("Agg")
    rc = matplotlib.rcParams
    rc["svg.hashsalt"] = "kvbench"
    rc["svg.fonttype"] = "path"
    rc["font.family"] = "sans-serif"
    rc["font.sans-serif"] = [FONT]
    rc["font.size"] = 9
    rc["axes.titlesize"] = 10
    rc["axes.titlelocation"] = "left"
    rc["axes.spines.top"] = False
    rc["axes.spines.right"] = False
    rc["axes.grid"] = True
    rc["grid.color"] = "#e6e6e6"
    rc["grid.linewidth"] = 0.6
    rc["axes.axisbelow"] = True
    rc["legend.fontsize"] = 8
    rc["legend.frameon"] = False
    rc["figure.max_open_warning"] = 0
    import matplotlib.pyplot as plt  # optional and slow to load: only when a figure is drawn
    _plt = plt
    return plt


def _hash(name: str) -> int:
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16)


def _mix(colour: str, t: float) -> str:
    """The colour mixed with black (t < 0) or white (t > 0) by |t|."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    end = 255 if t > 0 else 0
    return "#" + "".join(f"{round(c + (end - c) * abs(t)):02x}" for c in rgb)


_ENGINE_PREFIX = re.compile(r"^(" + "|".join(ENGINE_COLOURS) + r")(?=$|[\s(#:/_-])")


def engine_of(name: str) -> str:
    """The engine a label names first ("rocksdb x86-gcc-native" -> rocksdb), or ""."""
    m = _ENGINE_PREFIX.match(name)
    return m.group(1) if m else ""


def colour_choices(name: str) -> list[str]:
    """The colours a name may take, best first: an engine's own; a shade of the engine's for a
    name that starts with one; else the hashed palette from the name's hash on."""
    if name in ENGINE_COLOURS:
        return [ENGINE_COLOURS[name], *(_mix(ENGINE_COLOURS[name], t) for t in SHADES)]
    engine = engine_of(name)
    if engine:
        shades = [_mix(ENGINE_COLOURS[engine], t) for t in SHADES]
        k = _hash(name) % len(shades)
        return shades[k:] + shades[:k] + [ENGINE_COLOURS[engine]]
    k = _hash(name) % len(HASHED)
    return list(HASHED[k:] + HASHED[:k])


class Colours:
    """A colour per name, the same on every page (colour_choices). Two names of one page that
    would be drawn alike: the later in sorted order (not in order of use) takes its next choice,
    so the names given at construction get the same colours whatever order they come in."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._by_name: dict[str, str] = {}
        for name in sorted(set(names)):
            self[name]

    def __getitem__(self, name: str) -> str:
        if name not in self._by_name:
            used = set(self._by_name.values())
            choices = colour_choices(name)
            self._by_name[name] = next((c for c in choices if c not in used), choices[0])
        return self._by_name[name]


@dataclass
class Figure:
    """A figure to draw when the page is written (so only one is open at a time).

    name: the stable file name without extension (`readrandom-throughput`); caption: what it
    shows and how to read it; draw(plt) returns the matplotlib figure. noisy: what it draws that
    kvbench called noisy (a run, a side, a point: label -> why): the page says why once, in its
    box at the top (htmlpage.noise_box), and marks the figure with a link to it; a figure file
    (--svg, --png) has no page and says it under the figure (noise.figure_warning). notes (why
    it has few points) are said under the caption and in the figure file."""
    name: str
    caption: str
    draw: Callable[[Any], Any]
    noisy: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def new(plt: Any, height: float, ncols: int = 1, nrows: int = 1, **kw: Any) -> tuple[Any, Any]:
    """A figure WIDTH_INCHES wide with a constrained layout (so its size is exactly that)."""
    return plt.subplots(nrows, ncols, figsize=(WIDTH_INCHES, height), layout="constrained", **kw)


def render(fig: Any, name: str, fmt: str) -> bytes:
    """The figure as SVG or PNG bytes, deterministic; ids salted with the figure's name."""
    import matplotlib  # loaded by pyplot() already; optional, so never at module level
    matplotlib.rcParams["svg.hashsalt"] = "kvbench-" + name
    buf = io.BytesIO()
    if fmt == "svg":
        with laid_out_once(fig):
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None,
                                                      "Format": None, "Type": None})
    else:
        fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None},
                    pil_kwargs={"optimize": True})
    return buf.getvalue()


@contextlib.contextmanager
def laid_out_once(fig: Any) -> Iterator[None]:
    """The figure's layout made once, for an SVG save, and its layout engine off during the save.
    savefig lays a figure with an engine out in a draw of every artist with drawing disabled,
    then draws it again to write it: the first draw was a sixth of the figures' time. The layout
    is the same (measured as the SVG canvas measures text), so are the bytes; the engine is back
    afterwards, for a footnote added and a save again. Layout engines are matplotlib 3.6's: an
    older one (Ubuntu 22.04's 3.5) saves as before."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG  # optional, as above
    engine, canvas = getattr(fig, "get_layout_engine", lambda: None)(), fig.canvas
    if engine is None:
        yield
        return
    FigureCanvasSVG(fig)  # the figure's canvas until the end
    try:
        engine.execute(fig)
        fig.set_layout_engine(None)
        yield
    finally:
        fig.set_layout_engine(engine)
        fig.set_canvas(canvas)


_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(href="#|url\(#)([^")]+)')


def inline(svg: str, prefix: str) -> str:
    """An SVG document as an element to put inside HTML: no XML prolog or DOCTYPE, no namespace
    declarations (the HTML parser gives <svg> its namespace), every id prefixed so the figures
    of one page never share one."""
    text = svg[svg.index("<svg"):]
    head, rest = text.split(">", 1)
    head = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", head)
    rest = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', rest)
    rest = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", rest)
    return f'{head} role="img">{rest}'


def svg(fig: Any, name: str = "figure") -> str:
    """The figure as an inline <svg> element (see inline())."""
    return inline(render(fig, name, "svg").decode("utf-8"), re.sub(r"\W+", "-", name))


def safe_name(text: str) -> str:
    """A file name stem from a label: letters, digits, '.', '_', '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "figure"


class Output:
    """Where figures go besides the page: --svg DIR and --png DIR, one file per figure."""

    def __init__(self, svg_dir: str | None = None, png_dir: str | None = None) -> None:
        self.svg_dir, self.png_dir = svg_dir, png_dir
        self.written: list[str] = []
        for d in (svg_dir, png_dir):
            if d:
                output.make_dirs(d)

    def draw(self, figure: Figure) -> str:
        """Draws one figure, writes its files, returns its inline SVG. The page says the
        figure's notes under it and marks its noisy runs; a file carries both in the figure
        (footnote)."""
        plt = pyplot()
        fig = figure.draw(plt)
        try:
            data = render(fig, figure.name, "svg")
            if (self.svg_dir or self.png_dir) and footnote(fig, figure):
                page, data = data, render(fig, figure.name, "svg")
            else:
                page = data
            for d, ext, blob in ((self.svg_dir, "svg", data),
                                 (self.png_dir, "png", None)):
                if not d:
                    continue
                path = os.path.join(d, f"{figure.name}.{ext}")
                output.write_bytes(path, blob if blob is not None
                                   else render(fig, figure.name, "png"))
                self.written.append(path)
        finally:
            plt.close(fig)
        return inline(page.decode("utf-8"), safe_name(figure.name))


def footnote(fig: Any, figure: Figure) -> bool:
    """A figure file's noisy runs (red) and notes (grey) under it, one wrapped line each; False
    when it has none."""
    warnings = noise.figure_warning(figure.noisy)
    lines = warnings + figure.notes
    if not lines:
        return False
    text = "\n".join(textwrap.fill(x, 150, subsequent_indent="    ") for x in lines)
    fig.supxlabel(text, x=0.01, ha="left", fontsize=7.5, linespacing=1.3,
                  color=ALERT if warnings else "#555555")
    return True


def unique_names(figures: list[Figure]) -> None:
    """Makes figure names unique within a page (a second `x` becomes `x-2`)."""
    seen: dict[str, int] = {}
    for f in figures:
        n = seen.get(f.name, 0) + 1
        seen[f.name] = n
        if n > 1:
            f.name = f"{f.name}-{n}"
