"""The typed values of the argument groups several kvb commands share: a command's run module
turns the parsed namespace into its frozen request (PlanRequest, Selection, DbbenchRequest, a
Judgement, a Budget) here; below commands/ only those values travel (docs/kvbtools.md). The
groups themselves, add_*_arguments(parser), are commands/parsers/groups.py's (kvb's start).

Not a command itself: cli.py registers none of it, and every command may import it.
"""
from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import dataclass

from kvbtools.commands.parsers import groups
from kvbtools.core import host, output, stats, store
from kvbtools.core.series import Series, select
from kvbtools.core.errors import UsageError
from kvbtools.measure import slurm
from kvbtools.measure.fleet import Fleet
from kvbtools.measure.plan import MAX_ROUNDS, Budget
from kvbtools.core.dbbench_args import BENCHMARKS


def store_input(arg: str | None) -> output.Named:
    """The store a command reads (--store, $KVBENCH_STORE or the default), as check_outputs
    names it: its file, none for PostgreSQL."""
    return ("the store", store.sqlite_file(store.location(arg)))


def judgement(args: argparse.Namespace) -> stats.Judgement:
    """--threshold and --alpha as one value (the direction and words come from each metric)."""
    return stats.Judgement(args.threshold, args.alpha)


def budget(first: int, max_rounds: int | None, max_time: float | None) -> Budget:
    """The one budget every command makes of --repeats (`first`), --max-rounds and --max-time:
    --repeats rounds first, at most --max-rounds (default plan.MAX_ROUNDS; never below
    --repeats), --max-time seconds of measuring and relinking (None: as the builds took)."""
    most = max_rounds if max_rounds is not None else MAX_ROUNDS
    return Budget(first, max(most, first), max_time)


@dataclass(frozen=True)
class PlanRequest:
    """add_plan_arguments as values: what every series runs (workloads, engines, micro filter),
    how it is judged (the judgement, the metrics, --layouts), how many rounds, and where the
    results go."""
    workloads: str
    engines: str | None          # comma-separated, as given; None: the command's default
    num: int | None              # None: 100000 (20000 with --instructions)
    kvbench_args: tuple[str, ...]
    profile: bool
    repeats: int
    min_time: float
    filter: str | None
    judgement: stats.Judgement
    metrics: tuple[str, ...]     # () = the headline ones
    until_resolved: bool
    max_rounds: int | None
    max_time: float | None
    instructions: bool
    control: bool
    fail_on_regression: bool
    dry_run: bool
    layouts: int | None          # None: the default (4; 1 with --instructions)
    cpu: str                     # auto, none or a CPU number
    results_dir: str | None
    store: str | None
    no_store: bool
    slurm: str | None = None         # --slurm PARTITION: on a Slurm cluster
    slurm_config: str | None = None  # --slurm-config FILE

    @staticmethod
    def of(args: argparse.Namespace) -> "PlanRequest":
        return PlanRequest(
            workloads=args.workloads, engines=args.engines, num=args.num,
            kvbench_args=tuple(args.kvbench_arg), profile=args.profile, repeats=args.repeats,
            min_time=args.min_time, filter=args.filter, judgement=judgement(args),
            metrics=tuple(args.metric or ()), until_resolved=args.until_resolved,
            max_rounds=args.max_rounds, max_time=args.max_time, instructions=args.instructions,
            control=not args.no_control, fail_on_regression=args.fail_on_regression,
            dry_run=args.dry_run, layouts=args.layouts, cpu=args.cpu,
            results_dir=args.results_dir,
            store=args.store, no_store=args.no_store, slurm=args.slurm,
            slurm_config=args.slurm_config)

    def budget(self) -> Budget:
        """--repeats rounds first, then up to --max-rounds and --max-time."""
        return budget(self.repeats, self.max_rounds, self.max_time)

    def links(self) -> int:
        """The links every build starts with: --layouts, else groups.DEFAULT_LAYOUTS (1 with
        --instructions: counts do not depend on placement)."""
        return self.layouts or (1 if self.instructions else groups.DEFAULT_LAYOUTS)

    def fleet(self) -> Fleet | None:
        """The Slurm cluster of --slurm and --slurm-config (None: here); fleet_of checks it."""
        return fleet_of(self.slurm, self.slurm_config)


def fleet_of(partition: str | None, config: str | None) -> Fleet | None:
    """--slurm PARTITION with --slurm-config FILE (or $KVB_SLURM_CONFIG), checked before any
    work: a config file that cannot be read, or Slurm's commands missing or slurmctld not
    answering, is bad input (exit 2); --slurm-config alone too. None without --slurm."""
    if partition is None:
        if config is not None:
            raise UsageError("--slurm-config is read with --slurm PARTITION")
        return None
    got = Fleet(slurm.load_config(partition, config))
    slurm.check_installed()
    return got


@dataclass(frozen=True)
class Selection:
    """add_selection_arguments as values: the store and which of its series (core/series.py)."""
    store: str | None
    filters: tuple[str, ...]     # NAME=VALUE, as given
    metrics: tuple[str, ...]     # () = each row's primary metric
    by: tuple[str, ...]

    @staticmethod
    def of(args: argparse.Namespace) -> "Selection":
        return Selection(args.store, tuple(args.filter or ()), tuple(args.metric or ()),
                         tuple(args.by or ()))

    def series(self, metrics: tuple[str, ...] = ()) -> tuple[str, list[Series]]:
        """Where the store is, and its series this selection names (core/series.select; the
        metrics --metric names, else `metrics`, else each row's primary one); a UsageError when
        there is none."""
        st, found = select(self.store, list(self.filters), list(self.metrics or metrics),
                           list(self.by))
        with st:
            where = store.shown(st.loc)
        if not found:
            raise UsageError(f"no series in {where}" + (" matches the filters" if self.filters
                                                        else ""))
        return where, found


# What the dbbench commands make in --workdir (measure/dbbench_runs.py): each tool's database and
# JSON by its name, the base database.
WORKDIR_ENTRIES = ("db_bench*", "kvbench*", "base", "base.json")


@dataclass(frozen=True)
class DbbenchRequest:
    """add_dbbench_arguments as values; `checked` resolves and checks them."""
    num: int
    cache_size: int
    benchmarks: tuple[str, ...]
    kvbench: str | None
    db_bench: str
    workdir: str | None

    @staticmethod
    def of(args: argparse.Namespace) -> "DbbenchRequest":
        return DbbenchRequest(args.num, args.cache_size,
                              tuple(b for b in args.benchmarks.split(",") if b), args.kvbench,
                              args.db_bench, args.workdir)

    def checked(self, *tools: str) -> "DbbenchRequest":
        """The same request with kvbench resolved. A tool (db_bench, or one of `tools`, e.g.
        valgrind) that is not there, or a --workdir that cannot be one, is a UsageError."""
        output.check_outputs([("--workdir", self.workdir, WORKDIR_ENTRIES)],
                             [("--kvbench", host.binary_path("kvbench", self.kvbench)),
                              ("--db-bench", shutil.which(self.db_bench))])
        unknown = [b for b in self.benchmarks if b not in BENCHMARKS]
        if unknown or not self.benchmarks:
            raise UsageError(f"--benchmarks: unknown {', '.join(unknown) or 'empty list'}; "
                             f"valid: {', '.join(BENCHMARKS)}")
        if self.num < 1 or self.cache_size < 0:
            raise UsageError("--num must be positive and --cache-size not negative")
        kvbench = host.binary("kvbench", self.kvbench, "--kvbench")
        for tool in (self.db_bench, *tools):
            if not shutil.which(tool) and not os.access(tool, os.X_OK):
                raise UsageError(f"{tool} not found (apt-get install rocksdb-tools valgrind)")
        return DbbenchRequest(self.num, self.cache_size, self.benchmarks, kvbench,
                              self.db_bench, self.workdir)
