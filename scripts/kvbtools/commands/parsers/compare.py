"""kvb compare: values of two or more sides and their ratios to the first, with verdicts.

One table per metric, like the "values relative to ..." tables of the seeds: a row per benchmark,
the median of each side, then for every side after the first its ratio to the first side, the
verdict and its p-value (and the p adjusted over the comparison's rows); the last row is the
geometric mean of the ratios. The ratio is the estimate the verdict tested, named over the table:
with two units a side the Hodges-Lehmann estimate (over rounds paired, the trimmed mean), not the
quotient of the medians; with one process a side, that quotient (docs/compare.md, "The
ratio"). A verdict rests on the highest level with two units a side: links (code placements),
else processes (files): the repetitions inside one process are one sample of
it (--repetitions-independent counts them apart, as Google's compare.py does), so one file a
side is undecided. A comparison's rows and metrics are one family of tests: their p-values are
adjusted by Benjamini-Hochberg. A verdict is one of three: changed (faster / slower, larger /
smaller: direction aware) when the adjusted p < alpha and the change is at least --threshold;
"no change" when the 95% interval of the ratio lies within the threshold; "undecided"
otherwise, with the reason ("n=3+3 processes cannot reach p<0.05: 4 processes a side needed,
each a separate run (a file)"). The unit each
verdict rested on is printed ("unit: 5 processes a side"). Before any ratio the sides'
workloads are compared: sides that differ in what defines the workload (sizes, threads, engine
options, memory budget, ...) are "not comparable" (exit 2) unless --allow-different names the
differences to accept. For kvbench files the headline metrics by
default (ops/s, p50/p99/p99.9, CPU and storage per op, the worst interval, size; --metric all:
every one). matrix, versions and bisect print through here.
--html OUT.html also writes a page with a figure per metric: each side's ratio to the base with
its 95% interval (docs/report.md).
Files of `kvbench --profile` runs also get, per benchmark and role, the functions whose CPU time
per op moved most (self and total, ns/op), and on the page a differential flame graph of each
side against the base (docs/profile.md).
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(sub: Any) -> None:
    p = command.add(sub, "compare", __doc__, "main")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="BASE OTHER [OTHER...]: one JSON file per side, the first is the base")
    p.add_argument("--base", nargs="+", metavar="FILE", action=command.Once,
                   help="pool these files as the base side (e.g. several runs of one build); "
                        "given once (--base A B pools A and B)")
    p.add_argument("--other", nargs="+", action="append", metavar="FILE",
                   help="pool these files as one other side; repeat for more sides")
    p.add_argument("--label", action="append", help="name of each side, in order (repeat)")
    groups.add_judgement_arguments(p, "smallest change that counts, e.g. 5%%",
                                   "significance level of the test")
    metrics = ("kvbench: those the files describe (e.g. ops_per_sec, p99 for latency_ns.p99, "
               "cpu_user_us_per_op; default: the headline ones, ops/s, p50/p99/p99.9, CPU and "
               "storage KB per op, the worst interval; 'all': every one); Google Benchmark: "
               "bytes_per_second, items_per_second, cpu_time, real_time")
    p.add_argument("--metric", action="append",
                   help=f"only these metrics (repeat), by path or its last part: {metrics}")
    p.add_argument("--filter", metavar="REGEX", help="only benchmarks whose name matches")
    p.add_argument("--repetitions-independent", action="store_true",
                   help="count the repetitions of one process (kvbench --repeats, Google "
                        "Benchmark's --benchmark_repetitions) as independent samples, as "
                        "Google's compare.py does; by default they are one sample of their "
                        "process, and a verdict needs two processes a side (docs/compare.md); "
                        "the verdict line says so")
    p.add_argument("--by", metavar="FIELD",
                   help="compare sides that differ in this context field (engine, build.preset, "
                        "...): rows keyed on benchmark and role, sides labelled by its value. "
                        "Automatic for engine when the sides' engines differ")
    p.add_argument("--allow-different", action="append", metavar="NAME[,NAME...]",
                   help="accept sides whose work differs in these fields (num, key_size, "
                        "threads, compression, memory_budget, ...): without it such sides are "
                        "'not comparable' (exit 2); the accepted differences head the output")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="a gate for CI: exit 3 when a row is a significant regression beyond "
                        "the threshold, else 4 when a row is undecided (too few runs, or an "
                        "interval that spans both no change and a change), else 0 "
                        "(docs/cli.md)")
    p.add_argument("--json", metavar="OUT", help="also write the comparison as JSON here")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write a self-contained HTML page with the ratio figures "
                        "(docs/report.md; needs python3-matplotlib)")
    p.add_argument("--store", metavar="PATH|URL",
                   help="take the sides from the results store: --base and --other are then "
                        "NAME=VALUE selectors, as --filter and kvb store rm take them, e.g. "
                        "--base host=A --other host=B, --base engine=rocksdb --other "
                        "engine=lmdb (docs/history.md, \"Selectors\"); each run is named "
                        "by its id, document=HASH12")
