"""kvb bisect: the commit of a library that made a benchmark slower (or faster), noise and all.

  kvb bisect --repo DIR --old OLD --new NEW [--find slower|faster] (kvbench or generic mode)

OLD must be an ancestor of NEW (--good/--bad are the same options under their git names).
Commits are built in worktrees of a temporary directory (kvbench mode: a few, moved from commit
to commit; generic mode: one a commit); the user's checkout never moves, no ref is written, and
the worktrees are removed however the bisect ends.

Every series runs its commits in rounds (each commit once a round, back to back, pinned to one
CPU, on the round's link), starting with --layouts links x 2 rounds, and adds a round on every
link or another link (whichever narrows the widest interval most per second) until it decides
or its budget is spent: as long as building its commits took, at least 2 minutes (--max-time
sets it; --max-rounds bounds it). Verdicts rest on paired rounds: Yuen's trimmed t over link
pairs (docs/placement.md).

1. old and new are built (traced, to learn which files of the repository the build compiles)
   and measured until old -> new is established as a change of at least --threshold in the
   --find direction (the metric's better direction honoured), or refused.
2. git's bisection (`git rev-list --bisect-all`, what `git bisect` runs) picks a commit, or a
   step measures k commits that cut the range into k + 1 parts (--candidates: by default k is
   chosen by what a step costs here: builds side by side while they fit the cores, a longer
   round per candidate; with --slurm k is the measurement nodes up, each measuring old, new
   and a candidate of its own), so n commits take about log_(k+1)(n) steps. A commit whose
   compiled sources hash like an already judged commit's takes that verdict without a build or
   a run; one that does not build (or run) is skipped. Any other is measured together with old
   and new, in the same rounds (on a cluster, on its node), and judged like old or like new by
   the halfway point of the change; a commit between them (a spread change) by the halfway
   rule once its intervals are narrow against the change. When time cannot decide within the
   budget, instruction counts do (--witness auto; kvbench_micro benchmarks, or --count-cmd),
   where they place the commits time placed where time did; else the search goes on by time.
3. The commit where the change crosses halfway is measured against its parent, with old and
   new: confirmed when it differs significantly, by the threshold, in the direction looked for
   and changes something the build compiles; the report gives its share of old -> new and how
   much lies before and after it. --all-steps searches those ranges too.

Two ways to build and measure a commit:
  kvbench mode:  --dep DEP [--preset P] (--bench WORKLOAD | --micro NAME): the library is built
                 with the preset's toolchain through -DKVBENCH_<DEP>_SOURCE_DIR=<worktree>, then
                 kvbench (or kvbench_micro) against it, in a slot of the temporary directory (a
                 worktree moved by checkout, a build tree configured once): a step compiles the
                 files that changed (through ccache) and links (docs/presets.md).
  generic mode:  --build-cmd CMD --measure-cmd CMD: shell commands run in the commit's worktree;
                 the measure command prints kvbench or Google Benchmark JSON on stdout.

Results: results/bisect-<UTC time>-<repo>-<old>..<new>/ with summary.txt (how it ended),
bisect.txt (the report), bisect.json, steps.jsonl (every series and its values), state.json,
build.log (and build.<slot>.log) and every run's JSON. Ctrl-C stops; --resume DIR continues without measuring the
finished steps again. Exit status (docs/cli.md): 0 found and confirmed; 4 not confirmed, could
not decide, or refused (old -> new is not such a change); 1 a failure (the commits left do not
build); 2 bad input; 130 interrupted. See docs/compare.md.
"""
from __future__ import annotations

import argparse
from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers import groups
from kvbtools.core import deps_json

# measure/bisect/state.WITNESSES, --witness' choices: that module loads the statistics, too
# much for `kvb bisect --help`. tests/scripts_test.py holds the two equal.
WITNESSES = ("auto", "time", "instructions")


def candidates(text: str) -> int:
    """--candidates: auto (0: by cost) or a count of at least 1."""
    if text == "auto":
        return 0
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(f"not 'auto' or a count of at least 1: {text!r}")
    return k


def register(sub: Any) -> None:
    p = command.add(sub, "bisect", __doc__, "main")
    p.add_argument("--repo", help="git repository of the library (never checked out by kvb)")
    p.add_argument("--old", "--good", dest="old", metavar="OLD",
                   help="the older commit, without the change (--good: the same)")
    p.add_argument("--new", "--bad", dest="new", metavar="NEW",
                   help="a later commit, with the change; OLD must be its ancestor (--bad: the "
                        "same)")
    p.add_argument("--find", choices=("slower", "faster"), default="slower",
                   help="the change to look for, in the metric's better direction: slower "
                        "(default) or faster")
    p.add_argument("--metric", help="metric to watch, as kvb compare --metric names it: kvbench "
                                    "ops_per_sec (default), p99, ...; Google Benchmark "
                                    "bytes_per_second (default), items_per_second, cpu_time, "
                                    "real_time")
    groups.add_judgement_arguments(p, "old -> new must differ by at least this much",
                                   "significance level of the confirmation")
    groups.add_budget_arguments(p, "rounds every series starts with (with --layouts K, whole "
                                   "cycles of the K seeds and at least 2K)", flag=False,
                                scope=" of each series (old and new, a step)",
                                builds="building its commits")
    groups.add_layouts_argument(p, "kvbench mode: lld --shuffle-sections, relinks only; generic "
                                   "mode: KVB_LAYOUT_SEED in the build's and the measure "
                                   "command's environment")
    groups.add_cpu_argument(p, "; kept by --resume (the generic measure command runs under "
                               "taskset -c N with KVB_CPU=N)", default=None)
    p.add_argument("--witness", choices=WITNESSES, default=None,
                   help="what decides a series: time; instructions (callgrind counts of a "
                        "portable build, kvbench_micro benchmarks); auto (default): time, and "
                        "the counts when time cannot decide within the budget")
    p.add_argument("--candidates", type=candidates, metavar="K|auto", default=None,
                   help="commits a step measures with old and new in the same rounds, cutting "
                        "the range into K+1 parts (1: git bisect's one); auto (default): the "
                        "K whose search costs least here, by the builds' and steps' seconds "
                        "measured so far and the cores; with --slurm, the measurement nodes "
                        "of the partition up, each measuring old, new and a candidate of its "
                        "own in rounds of its own (docs/compare.md, docs/fleet.md)")
    p.add_argument("--all-steps", action="store_true", default=None,
                   help="after the culprit, search the ranges before and after it whose ends "
                        "differ by --threshold or more, and so on: every step of the change")
    p.add_argument("--no-skip-identical", action="store_true",
                   help="measure a commit even when the files its build compiles are identical "
                        "to a judged commit's (when the measure command reads files the build "
                        "does not)")
    p.add_argument("--bench", help="kvbench mode: the workload (e.g. readrandom); generic mode: "
                                   "the benchmark name in the JSON (optional when there is one)")
    _mode_arguments(p)
    p.add_argument("--results-dir", help="parent of the results directory (default results/)")
    p.add_argument("--resume", metavar="DIR",
                   help="continue the interrupted bisect whose results directory is DIR "
                        "(no other options but --store/--no-store and --slurm/--slurm-config: "
                        "it may go on here or on a cluster)")
    groups.add_store_arguments(p, auto=True)
    groups.add_slurm_arguments(p)


def _mode_arguments(p: Any) -> None:
    """The arguments of kvbench mode and of generic mode."""
    g = p.add_argument_group("kvbench mode")
    g.add_argument("--dep", help=f"the library: {', '.join(deps_json.buildable())}")
    g.add_argument("--preset", help="configure preset (default: this host's gcc native; its "
                                    "portable one with --instructions on an AVX-512 host)")
    g.add_argument("--micro", metavar="NAME",
                   help="measure this kvbench_micro benchmark, e.g. lz4/compress/4096")
    g.add_argument("--instructions", action="store_true", default=None,
                   help="count instructions under valgrind's callgrind instead of timing: per "
                        "byte (--micro), per op of the workload's measured loop (--bench) "
                        "(deterministic; instructions are not time; a portable preset on an "
                        "AVX-512 host, the default there: docs/compare.md)")
    g.add_argument("--engine", help="kvbench engine (default: the dep if it is an engine, "
                                    "else the first engine of cmake/deps.json)")
    g.add_argument("--num", type=int,
                   help="kvbench --num (default 100000; 20000 with --instructions)")
    g.add_argument("--min-time", type=float, default=0.1,
                   help="kvbench_micro --benchmark_min_time (default 0.1)")
    g = p.add_argument_group("generic mode")
    g.add_argument("--build-cmd", help="shell command that builds the commit (cwd: worktree)")
    g.add_argument("--measure-cmd", help="shell command printing benchmark JSON on stdout")
    g.add_argument("--count-cmd",
                   help="shell command (cwd: the commit's worktree, which it builds as it "
                        "needs) whose last number on stdout is the commit's instruction count, "
                        "e.g. callgrind's total: the second witness (--witness)")
