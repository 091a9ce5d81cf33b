"""kvb export: the store's series for the tools people already run (docs/history.md).

  kvb export csv [--out DIR]   Apache Otava's (Hunter's) CSV layout, one file per test (a
                               benchmark row on one fingerprint): one row per run; columns
                               time, the attributes (commit, library versions, ...), then one
                               column per metric (its path: ops_per_sec, latency_ns.p99, ...)
                               holding the run's median in the unit the documents give it
                               (kvbench_micro's cpu_time and real_time in ns). Without --out:
                               one test, on stdout.
  kvb export bencher [--out FILE] [--document HASH] [--name-by FIELD]
                               Bencher Metric Format JSON for one run of each series (the
                               latest, or the stored document HASH): {"benchmark": {"metric":
                               {"value": median, "lower_value": lo, "upper_value": hi}}},
                               the interval being kvb history's (omitted for n = 1). The
                               benchmark is the series' row ("rocksdb fillseq",
                               "rocksdb readwhilewriting[writer]"), with
                               "[FIELD=value, ...]" of each --name-by key field: never the
                               fingerprint, so adding a configuration renames nothing. Two
                               configurations that would share a name are refused (exit 2):
                               --filter one (a Bencher testbed each), or --name-by a field
                               that tells them apart.
The usual --filter, --metric (default: every stored metric) and --store apply.
  kvb export hgrm FILE.json... [--out DIR]
                               HdrHistogram percentile distributions from kvbench result
                               files (not the store): DIR/<file>.<benchmark>.<role>.hgrm per
                               role, values in microseconds (docs/report.md); DIR defaults
                               to the current directory.
  kvb export folded FILE.json... [--out DIR]
                               The CPU profiles of kvbench --profile runs as folded stacks
                               ("frame;frame;frame samples" per line: flamegraph.pl, inferno,
                               speedscope): DIR/<file>.<benchmark>.<role>.folded per profiled
                               role, repeats pooled (docs/profile.md); DIR defaults to the
                               current directory.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "export", __doc__, "main")
    p.add_argument("format", choices=("csv", "bencher", "hgrm", "folded"))
    p.add_argument("files", nargs="*", metavar="FILE.json",
                   help="hgrm, folded: kvbench result files, right after the format")
    groups.add_selection_arguments(p, metric_default="every stored metric ('all')")
    p.add_argument("--out", metavar="PATH", help="csv, hgrm: a directory; bencher: a file "
                                                 "(default: stdout; hgrm, folded: .)")
    p.add_argument("--document", metavar="HASH", help="bencher: this stored run instead of "
                                                      "each series' latest")
    p.add_argument("--name-by", action="append", metavar="FIELD",
                   help="bencher: add this key field's value to each benchmark name (repeat), "
                        "e.g. host or workload.num, to export several configurations at once")
