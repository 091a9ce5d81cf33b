"""The summary rows of kvbench runs: a line per engine, benchmark and role with ops/s, MB/s,
latency, CPU and bytes written per op and size. kvb report prints them; its page tabulates them."""
from __future__ import annotations

from typing import Any, Iterable

from kvbtools.core import table
from kvbtools.core.results import Row

COLUMNS = ["engine", "benchmark", "ops/s", "MB/s", "p50 us", "p99 us", "p99.9 us", "cpu us/op",
           "wKB/op", "db MB", "notes"]


def _fmt(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def cells(row: Row) -> list[str]:
    d: dict[str, Any] = row.data
    lat = d["latency_ns"]
    cost = d["cost"]
    notes = []
    if row.role == "reader":
        notes.append(f"{d['found']}/{d['found'] + d['not_found']} found")
    if "pacing" in d:
        p = d["pacing"]
        if p["target_bytes_per_sec"] > 0:
            notes.append("sustained" if p["sustained"] else "NOT sustained")
        else:
            notes.append("unpaced")
    if row.reference:
        notes.append("reference engine")
    cpu = cost["cpu_user_us_per_op"] + cost["cpu_sys_us_per_op"]
    wkb = cost.get("storage_write_kb_per_op")
    return [row.engine, row.label, _fmt(d["ops_per_sec"], 0), _fmt(d["mb_per_sec"]),
            _fmt(lat["p50"] / 1e3, 2), _fmt(lat["p99"] / 1e3, 2), _fmt(lat["p99_9"] / 1e3, 2),
            _fmt(cpu, 2), "-" if not isinstance(wkb, (int, float)) else _fmt(wkb, 3),
            _fmt(d["_result"]["db_size_bytes"] / 1048576.0), ", ".join(notes)]


def summary(rows: Iterable[Row]) -> str:
    return "\n".join(table.render([cells(r) for r in rows], header=COLUMNS, left=(0, 1, -1),
                                  rule=True))
