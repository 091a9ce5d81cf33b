"""The architectures of a kvb matrix on a Slurm cluster side by side (docs/fleet.md): each one's
presets were built and measured natively on nodes of that architecture, as a comparison of their
own (its base, its control, its verdicts); values of two architectures are never divided. This
table puts each comparison's medians next to the others', every column headed by its
architecture, the nodes that measured it and their CPU: the ARM-vs-x86 table of the seeds'
insert-benchmark study, from runs measured natively.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from kvbtools.core import metrics, table

CONTROL = "control"     # a comparison's A/A column, which this table leaves out


@dataclass(frozen=True)
class ArchComparison:
    """One architecture's comparison: its matrix.json document, or why there is none."""
    arch: str
    doc: dict[str, Any] | None
    why: str = ""           # not measured: why

    def hosts(self) -> str:
        """'node1, node2 (AMD EPYC 7B13)': the nodes whose rounds were kept, and their CPUs."""
        if self.doc is None:
            return f"not measured: {self.why}"
        kept = sorted({r.get("host", "") for r in self.doc.get("runs", [])
                       if not r.get("set_apart")} - {""})
        cpus = self.doc.get("hosts", {})
        models = sorted({cpus[h] for h in kept if cpus.get(h)})
        return (", ".join(kept) or "here") + (f" ({'; '.join(models)})" if models else "")

    def sides(self) -> list[str]:
        return [s["label"] for s in (self.doc or {}).get("sides", []) if s["label"] != CONTROL]

    def medians(self) -> dict[tuple[str, str], dict[str, float]]:
        """(metric, benchmark) -> side -> the median of its kept values."""
        out: dict[tuple[str, str], dict[str, float]] = {}
        sides = self.sides()
        for row in (self.doc or {}).get("rows", []):
            got = out.setdefault((row["metric"], row["benchmark"]), {})
            if sides and row["base_values"]:
                got[sides[0]] = statistics.median(row["base_values"])
            if row["side"] in sides and row["values"]:
                got[row["side"]] = statistics.median(row["values"])
        return out


HEADING = ("architectures side by side: each built and measured on its own nodes, a comparison "
           "of its own; values of two architectures are never divided (docs/fleet.md)")


def blocks(measured: list[ArchComparison]) -> list[tuple[list[str], list[list[str]]]]:
    """The table (the module doc) as blocks, one per metric: its header (the metric and its
    shown unit, then each architecture's columns) and a row per benchmark."""
    medians = [m.medians() for m in measured]
    keys = list(dict.fromkeys(k for got in medians for k in got))
    units = {r["metric"]: metrics.Metric(r["metric"], r.get("unit", ""), "higher")
             for m in measured for r in (m.doc or {}).get("rows", [])}
    out = []
    for metric in dict.fromkeys(k[0] for k in keys):
        unit = units[metric]
        head = [f"{metric} [{unit.shown_unit}], medians",
                *(f"{m.arch}: {s}" for m in measured for s in m.sides())]
        rows = [[bench, *(table.fmt_value(got[(metric, bench)][s] * unit.scale)
                          if s in got.get((metric, bench), {}) else "-"
                          for m, got in zip(measured, medians) for s in m.sides())]
                for mk, bench in keys if mk == metric]
        out.append((head, rows))
    return out


def side_by_side(measured: list[ArchComparison]) -> str:
    """The table as text: the heading, each architecture's nodes and CPUs, the blocks."""
    lines = [HEADING, *(f"  {m.arch}: {m.hosts()}" for m in measured)]
    for head, rows in blocks(measured):
        lines += ["", *table.render(rows, header=head)]
    return "\n".join(lines)
