"""kvb versions: kvbench built against several versions of one library, interleaved, compared.

Each --source tree (or --prefix install, or --fetch VERSION through scripts/get-sources.sh) is
labelled by the version its headers declare; trees of one version also by their commit (short
hash and `git describe`) or else by the directory name as given. Each is built into
build/kvb/<preset>-<dep>-<version>[-<commit or name>] with the preset's toolchain, linked --layouts
times (default 4), and measured as kvb matrix --presets does: in rounds on one CPU with a canary,
paired by round, links or rounds added where the variance is until every row is resolved or the
budget is spent (as long as the builds took, at least 2 minutes); the first is the base. The
preset builds only --dep from these trees: a row of another library (kvbench_micro's rows of
lz4, zstd, xxhash; an engine as installed) says "same <library> in every build: this compares
kvbench's code, not the library's".
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups
from kvbtools.core import deps_json


def register(sub: Any) -> None:
    p = command.add(sub, "versions", __doc__, "main")
    p.add_argument("--dep", required=True,
                   help=f"one of {', '.join(deps_json.buildable())} (cmake/deps.json)")
    p.add_argument("--source", nargs="+", default=[], metavar="DIR",
                   help="source trees, one per version; the first is the base")
    p.add_argument("--prefix", nargs="+", default=[], metavar="DIR",
                   help="install prefixes, one per version (KVBENCH_<DEP>_ROOT)")
    p.add_argument("--fetch", nargs="+", default=[], metavar="VERSION",
                   help="versions to fetch with scripts/get-sources.sh (Debian sources)")
    p.add_argument("--preset", help="configure preset (default: this host's gcc native; its "
                                    "portable one with --instructions on an AVX-512 host)")
    p.add_argument("--bench", metavar="WORKLOADS",
                   help="run kvbench with these --benchmarks (default for engines: "
                        "fillseq,readrandom on that engine)")
    p.add_argument("--micro", nargs="?", const="", metavar="REGEX",
                   help="run kvbench_micro (the default for a library that is not an engine: "
                        "its micro_filter in cmake/deps.json), optionally with this "
                        "--benchmark_filter")
    groups.add_plan_arguments(p, "^<dep>/.*/4096$")
    p.set_defaults(engines=None)
