"""kvb history: the series in the results store and their points (docs/history.md).

A series is one benchmark row (kvbench: engine, benchmark and role; kvbench_micro: the benchmark
name) x one metric x one fingerprint (the key fields of scripts/kvbtools/core/fingerprint.py:
host, build configuration, workload). A point is one stored run: the median of its repeats, a 95%
interval and n, and its run (the stored document's hash: kvb store get prints it, kvb store rm
removes it). The columns after the interval show what changed at that point: the attributes
(kvbench commit, library versions and origins, compiler version, kernel, ...) that differ from
the point before. --by NAME splits series further by an attribute, --filter NAME=VALUE keeps
the series and runs that match, by the selectors kvb compare --store and kvb store rm take
(docs/history.md, "Selectors"): the series' kind, engine, benchmark, role, row, metric; host,
preset, commit (by its first characters), document, fingerprint; or any stored field:
workload.num, lib.rocksdb.version, context.<path>, ... A field no stored run has is exit 2,
naming the known ones.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "history", __doc__, "main")
    groups.add_selection_arguments(p)
    p.add_argument("--html", metavar="OUT",
                   help="draw every series over time, with intervals and change points, as "
                        "one self-contained HTML page (needs python3-matplotlib)")
