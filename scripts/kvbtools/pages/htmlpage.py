"""One self-contained HTML page: text, tables and figures (inline SVG), no script, style sheet,
font or image from anywhere else, so it opens offline and can be attached to a bug report.

A page is a list of blocks, HTML or figures; the figures are drawn only when the page is written
(figures.Output), one at a time.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

from kvbtools.pages import figures, noise
from kvbtools.pages.figures import Figure
from kvbtools.core import output

STYLE = """
:root{--fg:#1d1d1f;--muted:#5f6368;--rule:#dadce0;--zebra:#f6f7f9;--warn:#fff4d6;
--warnrule:#e0b100;--bad:#fde8e8;--badrule:#d62728}
body{font-family:system-ui,-apple-system,"Segoe UI","DejaVu Sans",Helvetica,Arial,sans-serif;
color:var(--fg);margin:0 auto;padding:1.2em 2em 3em;max-width:1200px;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0 .1em}h2{font-size:1.2em;margin:2em 0 .4em;
border-bottom:1px solid var(--rule);padding-bottom:.2em}h3{font-size:1.02em;margin:1.4em 0 .3em}
p{margin:.4em 0}.muted{color:var(--muted);font-size:.9em}
nav{font-size:.9em;margin:.6em 0 1em}nav a{margin-right:1em;white-space:nowrap}
a{color:#1a56b0;text-decoration:none}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0 .8em;max-width:100%}
th,td{padding:.22em .55em;text-align:left;vertical-align:top;border-bottom:1px solid var(--rule)}
td{overflow-wrap:break-word}
th{background:#eef0f3;font-weight:600}tr:nth-child(even) td{background:var(--zebra)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.kv{width:100%;table-layout:fixed}table.kv td{overflow-wrap:anywhere}
table.kv th{background:none;color:var(--muted);font-weight:500}
table.kv tr:first-child th{color:var(--fg);font-weight:600}
table.kv th:first-child{width:9em}
.box{border-left:4px solid var(--warnrule);background:var(--warn);padding:.5em .9em;
margin:.6em 0;font-size:.9em}.box.bad{border-color:var(--badrule);background:var(--bad)}
.box ul{margin:.2em 0;padding-left:1.2em}
figure{margin:.8em 0 1.4em}figure svg{width:100%;height:auto;display:block}
svg.flame{max-width:100%;height:auto}
figcaption{font-size:.85em;color:var(--muted);margin-top:.2em;max-width:60em}
figcaption .warn{display:block;color:#b3261e;font-weight:600}
a.noisy{font-size:.85em;color:#b3261e;border:1px solid #e6a9a4;border-radius:3px;
padding:0 .35em;margin-right:.5em;white-space:nowrap}
figcaption .note{display:block;color:var(--fg)}
tr td.undecided{color:var(--muted);font-style:italic;
background:repeating-linear-gradient(135deg,#e4e4e4 0 4px,#fff 4px 8px)}
td.worse{color:#b3261e;font-weight:600}td.better{font-weight:600}
pre{background:var(--zebra);padding:.6em .8em;font-size:.78em;white-space:pre-wrap;
overflow-wrap:anywhere;border:1px solid var(--rule)}
code{font-size:.9em}
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Td:
    """A table cell with a class (its look: `undecided`, `worse`) and a title (its tooltip)."""
    text: object
    cls: str = ""
    title: str = ""


def _td(cell: object, numeric: bool) -> str:
    c = cell if isinstance(cell, Td) else Td(cell)
    cls = " ".join(x for x in ("n" if numeric else "", c.cls) if x)
    attrs = (f' class="{esc(cls)}"' if cls else "") + (f' title="{esc(c.title)}"' if c.title
                                                       else "")
    # A benchmark's role may go to the next line (fwdrangewhilewriting[reader]): wide tables fit.
    return f"<td{attrs}>{esc(c.text).replace('[', '<wbr>[')}</td>"


def table(rows: Sequence[Sequence[object]], header: Sequence[str] | None = None, *,
          numeric: Sequence[int] = (), cls: str = "") -> str:
    """An HTML table; columns in `numeric` are right-aligned with tabular figures. A cell may be
    a Td (a class and a tooltip)."""
    num = set(numeric)
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if header:
        out.append("<tr>" + "".join(
            f'<th class="n">{esc(h)}</th>' if i in num else f"<th>{esc(h)}</th>"
            for i, h in enumerate(header)) + "</tr>")
    for r in rows:
        out.append("<tr>" + "".join(_td(c, i in num) for i, c in enumerate(r)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def box(title: str, items: Sequence[str], *, bad: bool = False, anchor: str = "") -> str:
    """A highlighted list: warnings (amber) or what is missing or failed (red)."""
    li = "".join(f"<li>{esc(i)}</li>" for i in items)
    a = f' id="{esc(anchor)}"' if anchor else ""
    return (f'<div class="box{" bad" if bad else ""}"{a}><b>{esc(title)}</b><ul>{li}</ul>'
            "</div>")


def noise_box(items: Sequence[str]) -> str:
    """The page's one statement of its noisy runs and why (noise.TITLE), where the figures'
    markers link."""
    return box(noise.TITLE, items, bad=True, anchor=noise.ANCHOR)


class Page:
    def __init__(self, title: str) -> None:
        self.title = title
        self.blocks: list[str | Figure] = []
        self.toc: list[tuple[str, str]] = []

    def html(self, text: str) -> None:
        self.blocks.append(text)

    def para(self, text: str, cls: str = "") -> None:
        self.blocks.append(f'<p class="{cls}">{esc(text)}</p>' if cls else f"<p>{esc(text)}</p>")

    def heading(self, level: int, text: str, anchor: str = "") -> None:
        if anchor and level == 2:
            self.toc.append((anchor, text))
        a = f' id="{esc(anchor)}"' if anchor else ""
        self.blocks.append(f"<h{level}{a}>{esc(text)}</h{level}>")

    def figure(self, fig: Figure) -> None:
        self.blocks.append(fig)

    def figures(self) -> list[Figure]:
        return [b for b in self.blocks if isinstance(b, Figure)]

    def _with_noise_box(self) -> list[str | Figure]:
        """The blocks, with a box of noisy runs at the top when a figure marks one and the page
        has none for its marker to link to (every page that draws runs has its own)."""
        noisy = {k: v for f in self.figures() for k, v in f.noisy.items()}
        if not noisy or any(isinstance(b, str) and f'id="{noise.ANCHOR}"' in b
                            for b in self.blocks):
            return self.blocks
        return [noise_box([f"{k}: {v}" for k, v in noisy.items()]), *self.blocks]

    def write(self, path: str | None, out: figures.Output) -> int:
        """Draws every figure (into `out`'s directories too) and writes the page to `path` (None:
        only the figure files). Returns the number of figures."""
        figs = self.figures()
        figures.unique_names(figs)
        body: list[str] = []
        for b in self._with_noise_box():
            if isinstance(b, Figure):
                mark = (f'<a class="noisy" href="#{noise.ANCHOR}">{esc(noise.marker(b.noisy))}'
                        "</a>" if b.noisy else "")
                body.append(f'<figure id="fig-{esc(b.name)}">{out.draw(b)}'
                            f"<figcaption>{mark}<b>{esc(b.name)}</b>: {esc(b.caption)}"
                            + "".join(f'<span class="note">{esc(n)}</span>' for n in b.notes)
                            + "</figcaption></figure>")
            else:
                body.append(b)
        if path is not None:
            # A space between the links: each keeps its words together (nowrap), the bar wraps.
            nav = " ".join(f'<a href="#{esc(a)}">{esc(t)}</a>' for a, t in self.toc)
            doc = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                   '<meta name="viewport" content="width=device-width, initial-scale=1">',
                   f"<title>{esc(self.title)}</title><style>{STYLE}</style></head><body>",
                   f"<h1>{esc(self.title)}</h1>",
                   f"<nav>{nav}</nav>" if nav else "", *body, "</body></html>"]
            output.write_text(path, "\n".join(doc) + "\n")
        return len(figs)
