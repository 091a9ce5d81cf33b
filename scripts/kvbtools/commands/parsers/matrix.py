"""kvb matrix: the same benchmarks across presets, engines, thread counts or configurations.

With --presets alone: the same benchmarks built with several presets, interleaved, one table per
metric (below). With --threads, --configs, or without --presets: a study
(kvbtools/measure/study.py): every combination of the axes, the first the base, tables relative
to it, QPS@N per thread count.

Each preset is configured and built in build/kvb/<preset>[-<dep>-<version>...] with tests off,
linked --layouts times (4 by default: lld --shuffle-sections seeds, relinks only). With --micro,
each preset also compiles the libraries the benchmarks run (lz4, zstd, xxhash: Debian's source
of the installed version) so the comparison covers their code; --system-libs keeps the installed
ones. A row whose library no build compiled (an engine as installed, or --system-libs) says
"same <library> in every build: this compares kvbench's code, not the library's". The runs go
in rounds: each round runs every preset once, back to back on one CPU (--cpu), on the round's
link, the order rotating, with a canary before and after it; a round whose canary moved is set
apart and repeated. The first preset is also measured a second time in every round, as a series
labelled "control": the same binaries, so its verdict shows the noise floor. Verdicts rest on
rounds paired (link pairs with several links; docs/compare.md). After the first rounds (--repeats,
whole cycles of the links) more rounds or links are added where the variance is until every
row's interval is narrower than --threshold or the budget is spent: as long as the builds took,
at least 2 minutes (--max-time, --max-rounds); the output says what the decision cost.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups


def register(sub: Any) -> None:
    p = command.add(sub, "matrix", __doc__, "main")
    p.add_argument("--presets",
                   help="comma-separated configure presets; the first is the base. Without it, "
                        "a study of one kvbench binary (--kvbench)")
    p.add_argument("--threads", metavar="N,N,...",
                   help="an axis: kvbench --threads values (a study: QPS@N tables too)")
    p.add_argument("--configs", metavar="FILE",
                   help="an axis: named configurations, one a line, 'name: --flag=value ...'; "
                        "the first is the base")
    p.add_argument("--kvbench", metavar="BINARY",
                   help="without --presets: the kvbench to run (default: this tree's "
                        "build/<arch>-gcc-native/src/kvbench)")
    p.add_argument("--micro", action="store_true",
                   help="run kvbench_micro instead of kvbench workloads")
    p.add_argument("--from-source", default="", metavar="DEP[@VERSION],...",
                   help="build these libraries from source with each preset's toolchain (with "
                        "--micro, lz4, zstd and xxhash are built so by default, from Debian's "
                        "source of the installed version, fetched once into build/kvb/sources/)")
    p.add_argument("--source", action="append", default=[], metavar="DEP=DIR",
                   help="source tree for a --from-source dependency (repeat)")
    p.add_argument("--system-libs", action="store_true",
                   help="--micro: measure the installed lz4, zstd and xxhash in every build "
                        "instead of building them with each preset; their rows then say that "
                        "every build ran the same library")
    groups.add_plan_arguments(p)
