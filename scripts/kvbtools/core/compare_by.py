"""kvb compare --by FIELD: sides that differ in a fingerprint field (the engine, by default when
the sides' engines differ) are compared row by row on benchmark and role alone, and labelled by
that field's value. Without it, rows are keyed by engine and benchmark, so a RocksDB run and an
LMDB run would have no row in common."""
from __future__ import annotations

from typing import Any

from kvbtools.core.errors import UsageError
from kvbtools.core.samples import Side


def field_value(ctx: dict[str, Any], path: str) -> str:
    """The value of a context field by dotted path ("engine", "build.preset", "host.cpu"); an
    object with a name (the engine) gives its name. "" when absent."""
    v: Any = ctx
    for part in path.split("."):
        if not isinstance(v, dict) or part not in v:
            return ""
        v = v[part]
    if isinstance(v, dict):
        v = v.get("name", "")
    return "" if v is None or isinstance(v, (dict, list)) else str(v)


def side_value(side: Side, path: str) -> str:
    """The one value of `path` across a side's files; UsageError when they disagree."""
    values = {field_value(ctx, path) for ctx in side.contexts}
    if len(values) != 1:
        raise UsageError(f"--by {path}: the files of side {side.label} differ in it "
                         f"({', '.join(sorted(repr(v) for v in values))}); pool only files "
                         "with one value")
    return values.pop()


def auto_field(sides: list[Side]) -> str:
    """"engine" when every side has one engine and they differ; else ""."""
    try:
        engines = [side_value(s, "engine") for s in sides]
    except UsageError:
        return ""
    return "engine" if all(engines) and len(set(engines)) > 1 else ""


def rekey(sides: list[Side], path: str, relabel: bool) -> None:
    """Keys every kvbench row on benchmark and role (dropping the leading engine) and, with
    `relabel`, names each side by its value of `path`."""
    values = [side_value(s, path) for s in sides]
    if not all(values):
        missing = [s.label for s, v in zip(sides, values) if not v]
        raise UsageError(f"--by {path}: side(s) {', '.join(missing)} have no such context field "
                         "(kvb report FILE shows a run's context)")
    for s, v in zip(sides, values):
        engine = side_value(s, "engine")

        def strip(bench: str, engine: str = engine) -> str:
            return bench[len(engine) + 1:] if engine and bench.startswith(engine + " ") else bench
        s.values = {(strip(b), m): x for (b, m), x in s.values.items()}
        s.where = {(strip(b), m): x for (b, m), x in s.where.items()}
        s.order = [(strip(b), m) for b, m in s.order]
        s.skipped = {strip(b): why for b, why in s.skipped.items()}
        if relabel:
            s.label = v
    if relabel and len(set(values)) < len(values):
        for i, s in enumerate(sides):
            s.label = f"{i}:{s.label}"
