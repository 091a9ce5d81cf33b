"""Flame graphs of `kvbench --profile` runs as static inline SVG (docs/profile.md): no script, a
<title> per frame for the full name and figures on hover. Drawn by hand, not by matplotlib: a
flame graph is rectangles and clipped text, and this keeps the page readable without it.

A flame graph: the bottom bar is every sample of a role; above each frame, the functions it
called, as wide as their share of its samples; colour means nothing but the kind of code
(kvbench, engine library, C library, kernel). A differential one has B's shape and colours every
frame by how its CPU per operation (total: itself and what it calls) moved from A: red grew, blue
shrank, white unchanged.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from kvbtools.core import profiles
from kvbtools.core.profiles import RoleProfile
from kvbtools.core.results import Document
from kvbtools.pages.htmlpage import Page, esc

WIDTH, ROW, FONT, CHAR = 1200.0, 16, 11, 6.4  # px; CHAR: a character's width at FONT
MIN_PX = 0.4          # narrower frames are left out (their samples stay in their parent)
MAX_DEPTH = 96
# Below this many samples a graph says so: a frame of n samples is known to about ±1/√n
# (docs/profile.md, "Accuracy"), so at 200 a 10% frame is ±22% of itself.
FEW_SAMPLES = 200

Tree = dict[tuple[str, ...], int]  # path from the root -> samples in it and below


def tree(stacks: dict[str, int]) -> Tree:
    """Every prefix of every stack with its samples: the flame graph's frames."""
    out: Tree = {}
    for stack, count in stacks.items():
        frames = tuple(stack.split(";"))[:MAX_DEPTH]
        for i in range(1, len(frames) + 1):
            out[frames[:i]] = out.get(frames[:i], 0) + count
    return out


def layout(t: Tree, total: int) -> list[tuple[tuple[str, ...], float, float]]:
    """(path, x, width) of every frame wide enough to draw, children left to right by name."""
    children: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for path in t:
        children.setdefault(path[:-1], []).append(path)
    scale = WIDTH / total if total else 0.0
    out: list[tuple[tuple[str, ...], float, float]] = []
    todo = [((), 0.0)]
    while todo:
        parent, x = todo.pop()
        for path in sorted(children.get(parent, [])):
            w = t[path] * scale
            if w >= MIN_PX:
                out.append((path, x, w))
                todo.append((path, x))
            x += w
    return out


def kind_colour(frame: str) -> str:
    """A warm colour by the kind of code, varied by the name so neighbours differ."""
    h = int(hashlib.md5(frame.encode()).hexdigest()[:4], 16) / 65535.0
    if frame.endswith("_[k]"):
        return f"rgb({200 + int(40 * h)},{120 + int(50 * h)},60)"       # kernel: orange
    if "+0x" in frame or frame.startswith("["):
        return f"rgb({170 + int(30 * h)},{170 + int(30 * h)},{170 + int(30 * h)})"  # unnamed
    if frame.startswith("kvbench::"):
        return f"rgb({220 + int(35 * h)},{70 + int(60 * h)},50)"        # kvbench: red
    if "::" in frame:
        return f"rgb({225 + int(30 * h)},{150 + int(60 * h)},40)"       # C++ libraries: amber
    return f"rgb({200 + int(40 * h)},{190 + int(50 * h)},70)"           # C: yellow


def diff_colour(delta: float, scale: float) -> str:
    """White at no change, red as B took more ns/op, blue as it took less; scale: the largest
    |delta| of the graph."""
    v = max(-1.0, min(1.0, delta / scale)) if scale > 0 else 0.0
    fade = int(235 - 175 * abs(v))
    return f"rgb(245,{fade},{fade})" if v > 0 else f"rgb({fade},{fade},245)"


def svg(t: Tree, total: int, title: str, colour: Callable[[tuple[str, ...]], str],
        note: Callable[[tuple[str, ...]], str]) -> str:
    """The flame graph of tree `t` as one <svg>: root at the bottom."""
    frames = layout(t, total)
    depth = max((len(p) for p, _, _ in frames), default=0) + 1
    height = (depth + 1) * ROW + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:.0f} {height}" '
           f'width="{WIDTH:.0f}" height="{height}" class="flame" font-family="monospace" '
           f'font-size="{FONT}">',
           f'<text x="4" y="{ROW - 3}" font-size="{FONT + 1}">{esc(title)}</text>']
    bottom = height - 4

    def bar(label: str, tip: str, x: float, y: float, w: float, fill: str) -> None:
        chars = int((w - 4) / CHAR)
        text = label if len(label) <= chars else label[:max(chars - 1, 0)] + "…"
        out.append(f'<g><title>{esc(tip)}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" '
                   f'height="{ROW - 1}" fill="{fill}" rx="1"/>'
                   + (f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{esc(text)}</text>'
                      if chars >= 3 else "") + "</g>")

    bar(f"all ({total} samples)", f"all: {total} samples {note(())}", 0, bottom - ROW, WIDTH,
        colour(()))
    for path, x, w in frames:
        name = path[-1]
        tip = f"{name}: {t[path]} samples, {100.0 * t[path] / total:.1f}% {note(path)}"
        bar(profiles.short_name(name), tip, x, bottom - ROW * (len(path) + 1), w, colour(path))
    out.append("</svg>")
    return "\n".join(out)


def flame(rp: RoleProfile, title: str) -> str:
    t = tree(rp.stacks)
    total = sum(rp.stacks.values())
    return svg(t, total, title, lambda p: kind_colour(p[-1]) if p else "rgb(230,230,230)",
               lambda p: f"({rp.ns_per_op(t.get(p, total)):.1f} ns/op)" if rp.ops else "")


def differential(a: RoleProfile, b: RoleProfile, title: str) -> str:
    """B's flame graph, each frame coloured by its ns/op in B minus in A (same path)."""
    ta, tb = tree(a.stacks), tree(b.stacks)
    total_a, total_b = sum(a.stacks.values()), sum(b.stacks.values())

    def delta(p: tuple[str, ...]) -> float:
        return b.ns_per_op(tb.get(p, total_b) if p else total_b) - \
            a.ns_per_op(ta.get(p, 0) if p else total_a)

    scale = max((abs(delta(p)) for p in tb), default=0.0)

    def note(p: tuple[str, ...]) -> str:
        was = a.ns_per_op(ta.get(p, 0) if p else total_a)
        return f"(A {was:.1f} -> B {was + delta(p):.1f} ns/op, {delta(p):+.1f})"

    return svg(tb, total_b, title, lambda p: diff_colour(delta(p), scale), note)


def few(samples: int) -> str:
    """What a graph of few samples says under it; '' when it has enough."""
    if samples >= FEW_SAMPLES:
        return ""
    return (f"Few samples: {samples} (fewer than {FEW_SAMPLES}): a frame of n samples is known "
            "to about ±1/√n, so its width here is rough and a frame under ~10 samples is noise; "
            "run longer (--duration), repeat (--repeats) or raise --profile_hz (docs/profile.md).")


def _figure(svg_text: str, caption: str, warning: str = "") -> str:
    warn = f'<span class="warn">{esc(warning)}</span>' if warning else ""
    return f'<figure>{svg_text}<figcaption>{esc(caption)}{warn}</figcaption></figure>'


def add_profile_sections(page: Page, docs: list[Document]) -> None:
    """kvb report --html: a flame graph per profiled benchmark and role of each document."""
    shown = [(d, profiles.of_document(d.doc)) for d in docs]
    if not any(p for _, p in shown):
        return
    page.heading(2, "CPU profiles", "profiles")
    page.para("Where each role's CPU time went during the measured loops (kvbench --profile, "
              "docs/profile.md). Hover a frame for its full name, samples and ns per operation.",
              "muted")
    for d, profs in shown:
        idle = []
        for (bench, role), rp in profs.items():
            if not rp.samples:  # an idle role: the signal thread, an engine with no threads
                idle.append(f"{bench} [{role}]")
                continue
            title = f"{bench} [{role}]" + (f": only {rp.samples} samples"
                                           if rp.samples < FEW_SAMPLES else "")
            page.heading(3, f"{d.path}: {bench} [{role}]")
            page.html(_figure(flame(rp, title),
                              f"{rp.samples} samples of {rp.period_ns / 1e6:g} ms CPU over "
                              f"{rp.threads} thread(s); {rp.lost} lost; "
                              f"{rp.ns_per_op(rp.samples):.1f} ns/op in all", few(rp.samples)))
        if idle:
            page.para(f"{d.path}: no samples, so no flame graph, of {', '.join(idle)}: the role "
                      "took no CPU time while it was profiled (kvbench's signal thread as "
                      "background, an engine without threads of its own)", "muted")
        for why in profiles.unavailable(d.doc):
            page.para(f"{d.path}: not profiled: {why}", "muted")


def add_diff_sections(page: Page, sides: list[dict[tuple[str, str], RoleProfile]],
                      labels: list[str]) -> None:
    """kvb compare --html: per benchmark and role both sides profiled, B's differential flame
    graph against the base (A)."""
    base = sides[0]
    pairs = [(label, key, base[key], other[key]) for label, other in zip(labels[1:], sides[1:])
             for key in other if key in base and other[key].samples]
    idle = [f"{bench} [{role}] of {label}" for label, other in zip(labels[1:], sides[1:])
            for (bench, role), rp in other.items() if (bench, role) in base and not rp.samples]
    if not pairs and not idle:
        return
    page.heading(2, "Where the CPU time moved", "profiles")
    page.para(f"Each side's flame graph coloured by the change of every frame's CPU per "
              f"operation (itself and what it calls) against {labels[0]}: red more, blue less.",
              "muted")
    for label, (bench, role), a, b in pairs:
        least = min(a.samples, b.samples)
        page.heading(3, f"{bench} [{role}]: {label} against {labels[0]}")
        page.html(_figure(differential(a, b, f"{bench} [{role}]: {label} vs {labels[0]}"
                                       + (f": only {least} samples" if least < FEW_SAMPLES
                                          else "")),
                          f"{labels[0]} {a.ns_per_op(a.samples):.1f} ns/op ({a.samples} "
                          f"samples), {label} {b.ns_per_op(b.samples):.1f} ns/op ({b.samples} "
                          "samples) sampled", few(least)))
    if idle:
        page.para(f"No samples, so no differential flame graph: {', '.join(idle)} (the role "
                  "took no CPU time while it was profiled)", "muted")
