"""kvb bisect's search of one range: what its phases share (endpoints.py, steps.py,
confirm.py; ranges.py over the ranges around a culprit). A Search holds the bisect's State
(state.py, rewritten to state.json as it changes), this range's finished records (records.py,
steps.jsonl, replayed by --resume), the workspace (trees.py), what is known of the range (the
commits like old, the oldest like new, the verdicts by compiled sources) and the primitives:
build a commit, measure a plan of commits on the engine (series.py) until its judgement
(judge.py) is made or its budget is spent (as long as building its commits took, plan.FLOOR at
least; --max-time), count a commit's instructions (witness.py: they decide when time cannot,
--witness auto, where they agree with time: agreement.py; then every later step of the range is
counted). A verdict taken by compiled sources is the same witness's: a commit decided by time
lends its verdict to a step decided by time, one decided by counts to a counted step; old and new
lend theirs to both.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from kvbtools.core import levels, metrics, results
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.core.samples import Side, load_side
from kvbtools.measure import pinning
from kvbtools.measure.bisect import judge, witness
from kvbtools.measure.bisect.records import (INSTRUCTIONS, TIME, Confirm, Endpoints, Measured,
                                             MultiStep, Record, Step)
from kvbtools.measure.bisect.series import CommitRunner, Commits, Values
from kvbtools.measure.bisect.state import GenericMode, KvbenchMode, State, Watched
from kvbtools.measure.bisect.trees import Workspace, build_many, fingerprint, git
from kvbtools.measure.executor import Executor, LocalExecutor
from kvbtools.measure.fleet import Fleet, SlurmExecutor, arch
from kvbtools.measure.loop import Loop, Outcome
from kvbtools.measure.plan import Budget, Plan, Variant
from kvbtools.measure.runner import BuildError
from kvbtools.core.output import progress


@dataclass
class Ending:
    """How the search ended: the exit status and a one-line summary (the report says more)."""
    code: int
    summary: str


class Refused(RunError):
    """old -> new is not a change to bisect (or no commit between them can be it): exit 4, the
    bisect has no answer (docs/cli.md)."""
    exit_status = EXIT_UNDECIDED


R = TypeVar("R", Endpoints, Step, MultiStep, Confirm)


class Search:
    """One invocation of the search over `state`, on the range `ends` (default: the bisect's
    old and new), after the finished series in `records` (this range's)."""

    def __init__(self, state: State, records: list[Record], ws: Workspace | None = None,
                 ends: tuple[str, str] | None = None, first_step: int = 1,
                 canary: pinning.Watch | None = None) -> None:
        self.state = state
        self.s = state.settings        # fixed for the whole bisect
        self.dir = state.dir
        self.records = records
        self.ws = ws or Workspace(self.s.repo, state.dir, state.mode, self.s.layouts,
                                  state.spend)
        self.old, self.new = ends or (self.s.old, self.s.new)
        self.sub = ends is not None and ends != (self.s.old, self.s.new)
        self.first_step = first_step   # step numbers go on across ranges
        self.t0 = time.monotonic()
        # fingerprint -> (verdict, commit, witness: TIME, INSTRUCTIONS, or "" for old, new and
        # the commits that do not build, whose verdicts hold for either witness)
        self.known: dict[str, tuple[str, str, str]] = {}
        self.new_ref = self.new         # the oldest commit known to be like new
        self.olds = [self.old]          # commits known to be like old
        self.skipped: set[str] = set()
        self.build_seconds: dict[str, float] = {}
        self.build_width: dict[str, int] = {}   # sha -> builds that ran at once with it
        self.by_counts = self.s.witness == INSTRUCTIONS
        self.refuted = ""               # why the counts are not a witness of this range's change
        self.forced: Step | None = None  # a candidate time could not place: measured on next
        mode = state.mode
        # --instructions: the watched metric is itself a count, exact (core/levels)
        self.exact = isinstance(mode, KvbenchMode) and mode.plan.instructions
        # the CPU of every run and the canary around every round: ranges.py chooses them
        # before the first series (before_series), when the binary measured is built
        self.canary = canary or pinning.Watch(pinning.Pin((), "", "not pinned"))
        self.pin = self.canary.pin
        self.before_series: Callable[[], None] | None = None
        self.fleet: Fleet | None = None   # ranges.py: the Slurm cluster of --slurm

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.t0)
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else \
            f"{s // 60}:{s % 60:02d}"

    def say(self, msg: str) -> None:
        progress(f"[{self.elapsed()}] {msg}")

    @property
    def measured(self) -> str:
        """What the series measure, as the lines name it (metrics.series_word)."""
        return metrics.series_word(self.state.metric_name)

    def save_state(self) -> None:
        results.write_json(os.path.join(self.dir, "state.json"), self.state.to_json())

    def record(self, rec: Record) -> None:
        self.records.append(rec)
        with open(os.path.join(self.dir, "steps.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(rec.to_json()) + "\n")
        self.save_state()

    def recorded(self, kind: type[R]) -> list[R]:
        return [r for r in self.records if isinstance(r, kind)]

    def layouts(self) -> int:
        return self.s.layouts

    def judged(self) -> list[Step]:
        """Every commit judged in this range, in order: the steps' and each candidate of a
        step of several."""
        return [s for r in self.records if isinstance(r, (Step, MultiStep))
                for s in (r.steps if isinstance(r, MultiStep) else [r])]

    def step_count(self) -> int:
        """Steps finished in this range (a step of several candidates is one)."""
        return sum(1 for r in self.records if isinstance(r, (Step, MultiStep)))

    def node_arch(self) -> str:
        """The architecture of the nodes that build and measure on a cluster (fleet.arch)."""
        return arch(getattr(self.state.mode, "preset", ""))

    def build_room(self) -> tuple[int, int]:
        """(builds that fit side by side where they run, the CPUs of each): on a cluster its
        build partition's nodes up (Fleet.build_slots); (0, 0) here (a core each)."""
        return self.fleet.build_slots(self.node_arch()) if self.fleet is not None else (0, 0)

    def build_many(self, shas: list[str]) -> dict[str, BuildError]:
        """Builds `shas` side by side while they fit the cores, or a cluster's build partition
        (trees.build_many), timing each; what failed, by commit."""
        room, cpus = self.build_room()
        slots = self.ws.build_slots(len(shas), room)
        took, failed = build_many(self.ws, shas, slots, cpus)
        for sha, dt in took.items():   # the totals: each build's `spend` (Workspace.build)
            self.build_seconds[sha] = self.build_seconds.get(sha, 0.0) + dt
            self.build_width[sha] = min(slots, len(shas)) if not room else 1
        return failed

    def build(self, sha: str, trace: bool = False) -> tuple[set[str], set[str]]:
        """Builds `sha` (BuildError when it does not build), timing it."""
        t = time.monotonic()
        reads = self.ws.build(sha, trace=trace)   # its cost joins the totals (state.spend)
        dt = time.monotonic() - t
        self.build_seconds[sha] = self.build_seconds.get(sha, 0.0) + dt
        return reads

    def built(self, sha: str) -> None:
        """Builds `sha` for this invocation unless it is built (a commit that built once must
        build again: a failure now is a failure of the run, not the commit's)."""
        if sha not in self.ws.built:
            self.say(f"building {sha[:12]}")
            try:
                self.build(sha)
            except BuildError as e:
                raise RunError(f"{sha[:12]} built before but does not build now: {e}") from None

    def plan(self, name: str, shas: list[str], *, fixed: int = 0, links: int = 0,
             paid: list[str] | None = None) -> Plan:
        """The plan of a series (its runs' files named by `name`, 'step3'): --layouts links
        (more added while it cannot decide, unless --layouts 1) and the budget of --repeats,
        --max-rounds and --max-time; its seconds follow what building the commits it was built
        for took (`paid`: old and new for the endpoints, the commit under test for a step; FLOOR
        at least) unless --max-time sets them. `fixed`: exactly that many rounds on `links`
        links."""
        if self.before_series is not None:
            self.before_series()   # ranges.py: the CPU and the canary, once commits are built
        k = links or self.layouts()
        budget = Budget(fixed, fixed, self.s.budget.max_seconds) if fixed else self.s.budget
        paid = list(dict.fromkeys(shas if paid is None else paid))
        return Plan(name, tuple(Variant(sha[:12], sha) for sha in dict.fromkeys(shas)), k,
                    budget, self.pin, sum(self.build_seconds.get(x, 0.0) for x in paid),
                    len(paid), bool(fixed))

    def series(self, plan: Plan, roles: dict[str, str], settled: Callable[[Measured], bool],
               rows: Callable[[Measured], Sequence[levels.Components]],
               under_test: str | Sequence[str] = "", prior: Measured | None = None
               ) -> tuple[Measured, Outcome]:
        """The plan measured on the engine (series.py), by role (role -> commit); what it
        spent joins the totals (its builds are counted where they are built). `under_test`:
        the commits whose failure skips them (CommitCannotRun); `prior`: the values of the
        series this one measures on (agreement.py), judged with the new ones."""
        runs = os.path.join(self.dir, "runs")
        os.makedirs(runs, exist_ok=True)
        values = Values(roles, self.pick, settled, rows, prior)
        generic = isinstance(self.state.mode, GenericMode)
        tested = [under_test] if isinstance(under_test, str) else list(under_test)
        made = CommitRunner(self.ws, runs, tested)
        executor: Executor = LocalExecutor(made, self.canary) if self.fleet is None else \
            SlurmExecutor(self.fleet, made, self.s.cpu, self.node_arch(),
                          os.path.join(self.dir, "fleet"))
        out = Loop(plan, executor, Commits(self.ws, generic, tested), values, self.say).run()
        self.state.totals += dataclasses.replace(out.spent, builds=0, building=0.0)
        self.save_state()
        return values.measured(), out

    def pick(self, path: str, label: str) -> list[float]:
        """The values of the watched benchmark and metric in one run's JSON; the first run
        names them (watch)."""
        side = load_side(label, [path])
        w = self.state.watched or self.watch(side)
        key = (w.benchmark, w.metric)
        if key not in side.values:
            names = [b for b, mk in side.order if mk == w.metric]
            raise UsageError(f"benchmark {w.benchmark!r} is not in the measured JSON; it "
                             f"has: {', '.join(names[:20])}")
        return side.values[key]

    def watch(self, side: Side) -> Watched:
        """Which metric (and its better direction) and benchmark the bisect watches, from the
        first run's JSON; kept in the state."""
        default = "ops_per_sec" if side.kind == results.KVBENCH else "bytes_per_second"
        m = next(iter(metrics.select(side.metrics, [self.s.metric or default],
                                     side.kind).values()))
        bench = self.state.mode.bench
        if bench is None:
            names = [b for b, mk in side.order if mk == m.path]
            if len(names) != 1:
                raise UsageError(f"the JSON has {len(names)} benchmarks; name one with "
                                 f"--bench: {', '.join(names[:20])}")
            bench = names[0]
        self.state.watched = Watched(m.path, m.unit, m.better, side.kind, bench)
        self.save_state()
        return self.state.watched

    def can_count(self) -> bool:
        return self.s.witness != "time" and witness.counter(self.state.mode)[0] is not None

    def counts(self, shas: list[str]) -> list[float]:
        """Instructions of each commit (witness.py), counted once per bisect (state): those
        not counted yet side by side (witness.count_many). Raises the first commit's failure
        (BuildError, RunError, UsageError) once the others are counted."""
        count, what = witness.counter(self.state.mode)
        assert count is not None, what
        todo = [x for x in dict.fromkeys(shas) if x not in self.state.counts]
        if todo:
            self.say(f"counting instructions of {', '.join(x[:12] for x in todo)} ({what})")
            got = count(self.ws, todo, self.dir, self.say)
            self.state.counts.update(got.values)
            self.state.spend(got.spent)
            self.save_state()
            if got.failed is not None:
                raise got.failed
        return [self.state.counts[x] for x in shas]

    def count_sign(self) -> int:
        """sign (judge.py) of the change looked for, in instructions: fewer is faster."""
        return judge.want_sign(self.s.find, False)

    def sign(self) -> int:
        """+1 or -1: see judge.py. REQUIRES: the first run named the metric."""
        assert self.state.watched is not None, "the direction is the watched metric's"
        return judge.want_sign(self.s.find, self.state.judgement.higher_is_better)

    def fingerprint(self, sha: str) -> str:
        cset = self.state.compiled
        return fingerprint(self.s.repo, sha, cset) if cset is not None else ""

    def witness(self) -> str:
        """The witness that decides this range's next step: TIME or INSTRUCTIONS."""
        return INSTRUCTIONS if self.by_counts else TIME

    def same_sources_as(self, fp: str) -> tuple[str, str, str] | None:
        """(verdict, commit, witness) of a judged commit that compiles the same sources, when
        skipping such commits is on and its verdict is the witness's of the next step (never
        inherited from the other witness: the module doc)."""
        got = self.known.get(fp) if fp and self.s.skip_identical else None
        return got if got and got[2] in ("", self.witness()) else None

    def know(self, fp: str, verdict: str, sha: str, witness: str) -> None:
        """A judged commit's verdict, for the commits that compile the same sources."""
        if fp and verdict != judge.UNCERTAIN:
            self.known[fp] = (verdict, sha, "" if verdict == "skip" else witness)

    def mark(self, verdict: str, sha: str) -> None:
        """A commit's verdict narrows the range: like new, the oldest like new; like old, one
        more commit the search leaves out with its history; else skipped."""
        if verdict == judge.NEW:
            self.new_ref = sha
        elif verdict == judge.OLD:
            self.olds.append(sha)
        else:
            self.skipped.add(sha)

    def candidates(self) -> list[str]:
        """The commits that may be the first new one (new_ref included), best to test first:
        `git rev-list --bisect-all`, git bisect's own choice, without its state."""
        out = git(self.s.repo, "rev-list", "--bisect-all", self.new_ref, "--not",
                  *self.olds).stdout
        return [line.split()[0] for line in out.splitlines() if line.strip()]

    def newest_old(self) -> str:
        """Of the commits known to be like old, the one with the most history."""
        depth = {s: int(git(self.s.repo, "rev-list", "--count", s).stdout.strip() or 0)
                 for s in self.olds}
        return max(self.olds, key=lambda s: depth[s])



def rows(m: Measured, pairs: list[tuple[str, str]]) -> list[levels.Components]:
    """The variance components of the series' comparisons (those that can be split yet)."""
    v = m.levels()
    out = [levels.components(v[a], v[b]) for a, b in pairs]
    return [c for c in out if c is not None]
