"""Text tables: columns padded to their widest cell, the one table printer every command uses."""
from __future__ import annotations

from typing import Sequence


def render(rows: Sequence[Sequence[str]], *, header: Sequence[str] | None = None,
           left: Sequence[int] = (0,), rule: bool = False) -> list[str]:
    """The lines of a table. Columns listed in `left` (negative indices count from the end) are
    left-aligned, the others (numbers) right-aligned; `rule` puts a line of dashes under the
    header. Trailing blanks are stripped."""
    body = [list(r) for r in rows]
    if header is not None:
        body.insert(0, list(header))
    if not body:
        return []
    n = max(len(r) for r in body)
    for r in body:
        r.extend([""] * (n - len(r)))
    widths = [max(len(r[i]) for r in body) for i in range(n)]
    lefts = {i % n for i in left}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in lefts else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(r) for r in body]
    if header is not None and rule:
        out.insert(1, line(["-" * w for w in widths]))
    return out



def fmt_value(v: float) -> str:
    """A measured value with the digits that matter: 12,345 / 123.4 / 12.34 / 1.234."""
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"
