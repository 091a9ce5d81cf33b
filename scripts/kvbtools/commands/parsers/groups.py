"""The argument groups several kvb commands share, each declared here once: add_*_arguments(parser)
and the parsers of their values (--threshold and --alpha: add_judgement_arguments; --repeats,
--max-rounds, --max-time: add_budget_arguments; --cpu: add_cpu_argument; --layouts:
add_layouts_argument; --store; matrix's and versions' plan; the store's selection; dbbench's
flags). A command's own words for a flag (what its threshold is compared with) are an argument
of the group, not a second declaration. The typed values they become (PlanRequest, Selection,
DbbenchRequest, a Judgement, a Budget) are commands/arguments.py's, beside the run modules.

Imported at kvb's start, by every command's parser: argparse and the light modules of
commands/parsers/ only (docs/kvbtools.md, "kvb's start").
"""
from __future__ import annotations

import argparse
import re
import shutil

from kvbtools.commands import command
from kvbtools.core.store_schema import ENV

# measure/plan.py's defaults, which --max-rounds' and --max-time's help state: measure/ loads the
# statistics (tens of ms), too much for every `kvb ... --help`. tests/scripts_test.py holds the
# two equal.
MAX_ROUNDS = 400
FLOOR = 120.0
# Links a comparison of builds starts with (kvb matrix --presets, versions, bisect): Yuen's
# trimmed t over 4 link pairs has 3 degrees of freedom (t 3.18) where 3 have 2 (t 4.30), an
# interval 26% narrower for one relink; and 4 links x 2 rounds is the least that splits the
# variance between links from the variance within them for the allocation.
DEFAULT_LAYOUTS = 4
# core/dbbench_args.BENCHMARKS' kvbench names, which both dbbench commands take: the same
# test holds them equal.
DBBENCH_BENCHMARKS = ("fillseq", "readrandom", "overwrite", "fwdrange")


# ---- a judgement: --threshold, --alpha ---------------------------------------------------------

def parse_threshold(text: str) -> float:
    """'5%' -> 0.05; '0.05' -> 0.05; '5' -> 0.05 (a bare number of 1 or more is percent)."""
    def fraction(t: str) -> float:
        if t.endswith("%"):
            return float(t[:-1]) / 100.0
        v = float(t)
        return v / 100.0 if v >= 1 else v
    return command.checked(text.strip(), fraction, f"not a threshold: {text!r} (e.g. 5%)",
                           lambda v: 0 <= v < 10, f"threshold out of range: {text!r}")


def parse_alpha(text: str) -> float:
    return command.checked(text, float, f"not a number: {text!r}", lambda v: 0 < v < 1,
                           "alpha must be between 0 and 1")


# argparse reads an argument that starts with '-' as an option unless it looks like a negative
# number, and '-5%' does not: `--threshold -5%` said "expected one argument" where
# `--threshold=-5%` says "threshold out of range". A parser that takes --threshold reads a
# negative percentage as a value too (argparse's own pattern, with an optional %).
NEGATIVE_NUMBER = re.compile(r"^-\d+%?$|^-\d*\.\d+%?$")


def add_judgement_arguments(p: argparse.ArgumentParser, threshold: str, alpha: str) -> None:
    """--threshold and --alpha (arguments.judgement), declared once for every command that
    judges a change; `threshold` and `alpha` say what they are to the command (e.g. 'smallest
    change that counts', 'significance level of the confirmation')."""
    p.add_argument("--threshold", type=parse_threshold, default=parse_threshold("5%"),
                   help=f"{threshold} (default 5%%)")
    p._negative_number_matcher = NEGATIVE_NUMBER  # type: ignore[attr-defined]
    p.add_argument("--alpha", type=parse_alpha, default=0.05, help=f"{alpha} (default 0.05)")


# ---- rounds: --until-resolved, --max-rounds, --max-time -----------------------------------------

def parse_duration(text: str) -> float:
    """'90s', '20m', '1h30m', '1.5h', '45' (seconds) -> seconds; > 0."""
    t = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*(h|m|s)?", t)
    if not t or re.fullmatch(r"(?:\d+(?:\.\d+)?\s*[hms]?\s*)+", t) is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 90s, 20m, 1h30m)")
    unit = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}
    seconds = sum(float(v) * unit[u] for v, u in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"--max-time must be more than 0: {text!r}")
    return seconds


def parse_cpu(text: str) -> str:
    """--cpu: 'auto', 'none' or a CPU number (checked against the allowed CPUs before any
    build: measure/pinning.check_cpu)."""
    t = text.strip().lower()
    if t in ("auto", "none") or t.isdigit():
        return str(int(t)) if t.isdigit() else t
    raise argparse.ArgumentTypeError(f"--cpu: expected auto, none or a CPU number, got {text!r}")


def positive_int(text: str) -> int:
    return command.checked(text, int, f"not a whole number: {text!r}", lambda v: v >= 1,
                           f"must be at least 1: {text!r}")


def add_budget_arguments(p: argparse.ArgumentParser, repeats: str, *, flag: bool = True,
                         scope: str = "", builds: str = "the builds of this invocation") -> None:
    """--repeats (`repeats` says what the first rounds are to the command), --until-resolved
    (when `flag`: kvb matrix and versions, where it is the default), --max-rounds and --max-time
    (arguments.budget); `scope` says what one budget covers (e.g. ' of each series'), `builds`
    what its default follows."""
    p.add_argument("--repeats", type=int, default=5, help=f"{repeats} (default 5)")
    if flag:
        p.add_argument("--until-resolved", action="store_true",
                       help="the default now, accepted as before: after the first rounds, "
                            "links or rounds are added where the variance is until every "
                            "row's 95%% interval of the ratio is narrower than --threshold, or "
                            "the budget is spent (docs/compare.md, Adaptive rounds)")
    p.add_argument("--max-rounds", type=positive_int, metavar="N",
                   help=f"budget{scope}: at most N rounds (default {MAX_ROUNDS}: the "
                        "time budget decides first; never below --repeats); --repeats N "
                        "--max-rounds N runs exactly N")
    p.add_argument("--max-time", type=parse_duration, metavar="DURATION",
                   help=f"budget{scope}: seconds of measuring and relinking (e.g. 5m, 1h30m; "
                        f"default: as long as {builds} took, at least {FLOOR / 60:g} minutes); "
                        "no round is started that would end after it")


def add_layouts_argument(p: argparse.ArgumentParser, how: str) -> None:
    """--layouts (arguments' links); `how` says how the command links a build again."""
    p.add_argument("--layouts", type=positive_int, metavar="K",
                   help=f"links every build starts with, each with different code placement "
                        f"(seeds 0..K-1; {how}); more are added where the variance is. Default "
                        f"{DEFAULT_LAYOUTS} (Yuen's trimmed t over 4 link pairs has 3 degrees of "
                        "freedom where 3 have 2); 1: one link, none added; 1 with "
                        "--instructions (docs/placement.md)")


def add_cpu_argument(p: argparse.ArgumentParser, threads: str = "",
                     default: str | None = "auto") -> None:
    """--cpu (measure/pinning.choose_pin); `threads` adds what the command does with several;
    `default` None: the command tells --cpu auto from no --cpu (kvb bisect --resume)."""
    p.add_argument("--cpu", type=parse_cpu, default=default, metavar="auto|N|none",
                   help="every run on this CPU: auto (default) the fastest by kvbench's canary "
                        "at the start; N; none: not pinned, no canary" + threads)


# ---- the fleet: --slurm, --slurm-config ---------------------------------------------------------

# measure/slurm.CONFIG_ENV, which the help states (tests/scripts_test.py holds the two equal).
SLURM_CONFIG_ENV = "KVB_SLURM_CONFIG"


def add_slurm_arguments(p: argparse.ArgumentParser) -> None:
    """--slurm PARTITION and --slurm-config FILE (measure/slurm.load_config; docs/fleet.md)."""
    p.add_argument("--slurm", metavar="PARTITION",
                   help="run the builds and the measurements as Slurm jobs: every build a job "
                        "on a node of the build partition with its architecture, every step's "
                        "rounds a job on each up node of PARTITION with the plan's "
                        "architecture, which it has to itself (--exclusive); the verdicts rest "
                        "on hosts from 3 nodes (docs/fleet.md). The checkout and the results "
                        "directory must be on storage every node shares at the same path")
    p.add_argument("--slurm-config", metavar="FILE",
                   help="with --slurm: the [slurm] section of FILE (sbatch options of every "
                        "job, of build and of measurement jobs, the build partition, how each "
                        f"architecture is asked for, how many nodes; default "
                        f"${SLURM_CONFIG_ENV}, else none: docs/fleet.md)")


# ---- the results store: --store, --no-store -----------------------------------------------------

def add_store_arguments(p: argparse.ArgumentParser, auto: bool = False) -> None:
    p.add_argument("--store", metavar="PATH|URL",
                   help=f"SQLite file or postgresql:// URL (default ${ENV}, else "
                        "results/kvbench.sqlite)")
    if auto:
        p.add_argument("--no-store", action="store_true",
                       help="do not add the runs to the results store")


# ---- kvb matrix and kvb versions: what each series runs, how it is judged ------------------------

def add_plan_arguments(p: argparse.ArgumentParser, micro_default: str = "/4096$") -> None:
    p.add_argument("--workloads", default="fillseq,readrandom",
                   help="kvbench --benchmarks for KV runs (default fillseq,readrandom)")
    p.add_argument("--engines",
                   help="comma-separated engines for KV runs (default: the first engine of "
                        "cmake/deps.json); in a study, an axis: a series per engine")
    p.add_argument("--num", type=int, help="kvbench --num (default 100000; 20000 with "
                                           "--instructions)")
    p.add_argument("--kvbench-arg", action="append", default=[], metavar="ARG",
                   help="one more kvbench flag for KV runs, e.g. "
                        "--kvbench-arg=--benchmark_write_rate_limit=2097152 (repeatable)")
    p.add_argument("--profile", action="store_true",
                   help="KV runs: kvbench --profile (CPU profiles of the measured loops, "
                        "docs/profile.md); the table is followed by the functions whose CPU "
                        "per op moved most against the base, and report.html draws a "
                        "differential flame graph per series")
    p.add_argument("--min-time", type=float, default=0.02,
                   help="kvbench_micro --benchmark_min_time in seconds (default 0.02: a "
                        "process's repetitions vary less than processes do, so short runs and "
                        "more rounds narrow the intervals sooner; docs/compare.md)")
    p.add_argument("--filter", metavar="REGEX",
                   help=f"micro: --benchmark_filter (default {micro_default!r}); KV: only "
                        "table rows that match")
    add_judgement_arguments(p, "the smallest change that counts",
                            "the significance level of a verdict, after the family's adjustment")
    p.add_argument("--metric", action="append",
                   help="only these metrics (see kvb compare; default: the headline ones; "
                        "'all': every one)")
    add_budget_arguments(p, "rounds, each series measured once a round. Builds compared "
                            "(--presets, kvb versions): the first rounds, in whole cycles of the "
                            "links, at least 2 on each (8 with 4 links); more follow where the "
                            "variance is, within the budget. A study runs exactly these")
    p.add_argument("--instructions", action="store_true",
                   help="count instructions under valgrind's callgrind, in the measured loops "
                        "only, instead of timing: per byte (micro), per op of each role and of "
                        "the engine's background threads (KV; deterministic: zero-width "
                        "intervals; instructions are not time). Needs portable presets on an "
                        "AVX-512 host (docs/compare.md)")
    p.add_argument("--no-control", action="store_true",
                   help="do not measure the first series twice")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="a gate for CI: exit 3 when a series (the control not counted) has a "
                        "significant regression beyond the threshold, else 4 when a row is "
                        "undecided, else 0 (docs/cli.md)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the builds and the run order, build and run nothing")
    add_layouts_argument(p, "lld --shuffle-sections, relinks only")
    add_cpu_argument(p, ". A KV plan of several threads (--kvbench-arg=--threads=N, a "
                        "*whilewriting writer) gets one CPU a thread with auto (docs/compare.md, "
                        "Presets)")
    p.add_argument("--results-dir", help="parent of the run's results directory "
                                         "(default results/)")
    add_store_arguments(p, auto=True)
    add_slurm_arguments(p)


# ---- kvb history, trend, export: which series of the store --------------------------------------

PRIMARY_METRIC = "each row's primary metric, ops_per_sec or bytes_per_second"


def add_selection_arguments(p: argparse.ArgumentParser, metric_default: str = PRIMARY_METRIC
                            ) -> None:
    add_store_arguments(p)
    p.add_argument("--filter", action="append", metavar="NAME=VALUE",
                   help="only series and runs with this value (repeat: all must match), e.g. "
                        "engine=memory, host=vm, workload.num=20000, lib.rocksdb.version=7.8.3")
    p.add_argument("--metric", action="append",
                   help="only these metrics (repeat), a path or its last parts as kvb compare "
                        f"takes them (p99, cpu_user_us_per_op); 'all' for every stored one; "
                        f"default: {metric_default}")
    p.add_argument("--by", action="append", metavar="NAME",
                   help="split series further by this attribute (repeat), e.g. "
                        "lib.rocksdb.version or kernel")


# ---- kvb dbbench parity and instructions ------------------------------------------------------

def add_dbbench_arguments(p: argparse.ArgumentParser, num: int) -> None:
    """The flags both dbbench commands take."""
    p.add_argument("--num", type=int, default=num, help=f"keys (default {num})")
    p.add_argument("--cache-size", type=int, default=256 << 20,
                   help="block cache bytes (default 268435456)")
    p.add_argument("--benchmarks", default=",".join(DBBENCH_BENCHMARKS),
                   help=f"comma-separated, of {', '.join(DBBENCH_BENCHMARKS)} (default all)")
    p.add_argument("--kvbench", help="default: build/<host gcc native preset>/src/kvbench")
    p.add_argument("--db-bench", default=shutil.which("db_bench") or "db_bench",
                   help="default: db_bench on PATH (Debian: rocksdb-tools)")
    p.add_argument("--workdir", help="where the databases go (default: a temporary directory)")
