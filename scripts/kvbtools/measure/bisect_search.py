"""kvb bisect's search: the endpoints, the steps, the confirmation, each recorded as it ends.

Every series is measured by bisect_series (rounds on links, added where the variance is, on one
CPU, a canary per round) until its judgement (bisect_judge, on core/levels' unit) is made or its
budget is spent. The budget of a series follows what its builds cost: it may measure (and
relink) as long as building its commits took, at least FLOOR seconds; --max-time sets it.

When time cannot decide a series within its budget and the commits can be counted
(bisect_witness.counter), instruction counts decide (--witness auto, the default): the step
records which witness decided it. Once the ends were told apart only by their counts, or a step
could not be decided by time, every later step of the range is counted (a commit between the
same ends would spend a timed build and budget first, for nothing).

Each finished series is a record (bisect_records) and one line of steps.jsonl with all its
values, so --resume replays the finished ones (their verdicts narrow the range again) without
measuring them again. What the search knows besides is its State (bisect_state), rewritten to
state.json as it changes. A Search covers one range (`ends`): --all-steps searches the ranges
left before and after a culprit too (bisect_ranges).
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from kvbtools.core import levels, metrics, results
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.core.samples import Side, load_side
from kvbtools.measure import bisect_judge as judge
from kvbtools.measure import bisect_witness, placement, round_loop
from kvbtools.measure.bisect_records import (COUNTED, INSTRUCTIONS, MEASURED, SAME_SOURCES,
                                             Confirm, ConfirmSeries, Endpoints, Measured,
                                             Record, Step, StepSeries, iv_text, ivjson)
from kvbtools.measure.bisect_series import Bench, CommitCannotRun, Outcome, Plan, Series
from kvbtools.measure.bisect_state import GenericMode, KvbenchMode, State, Watched
from kvbtools.measure.bisect_trees import (RELINK_BATCH, Workspace, fingerprint, git, learn,
                                           tracer)
from kvbtools.measure.runner import BuildError, progress

# The least a series may measure (seconds) when its builds were quicker (round_loop says why).
FLOOR = round_loop.FLOOR


@dataclass
class Ending:
    """How the search ended: the exit status and a one-line summary (the report says more)."""
    code: int
    summary: str


class Refused(RunError):
    """old -> new is not a change to bisect (or no commit between them can be it): exit 4, the
    bisect has no answer (docs/cli.md)."""
    exit_status = EXIT_UNDECIDED


def _pct(x: float) -> str:
    return f"{x * 100 + 0.0:.0f}%".replace("-0%", "0%") if math.isfinite(x) else "?"


def step_line(rec: Step) -> str:
    """One step of the search, as the progress lines and the report show it."""
    sha = rec.commit[:12]
    if rec.how == SAME_SOURCES and rec.verdict == "skip":
        return (f"step {rec.step}: {sha} skipped: no build: it compiles the same sources "
                f"as {rec.same_as[:12]}, which does not build or run")
    if rec.how == SAME_SOURCES:
        return (f"step {rec.step}: {sha} like {rec.verdict}: no build, no run: it "
                f"compiles the same sources as {rec.same_as[:12]}")
    if rec.verdict == "skip" or (rec.series is None and not rec.counts):
        return f"step {rec.step}: {sha} skipped: {rec.how}: {rec.why[:300]}"
    word = "uncertain" if rec.verdict == judge.UNCERTAIN else f"like {rec.verdict}"
    line = f"step {rec.step}: {sha} {word}, at {_pct(rec.position)} of old -> new"
    s = rec.series
    if s is not None:
        rule = f" by the {s.rule}" if s.rule == judge.HALFWAY and rec.witness != INSTRUCTIONS \
            else ""
        line += (f"{rule}; time: this/old {iv_text(s.to_old)}, this/new {iv_text(s.to_new)}, "
                 f"new/old {iv_text(s.change)} ({s.unit or f'n={s.measured.n}'}"
                 + (f"; {s.spent.text()}" if s.spent else f", {s.seconds:.1f} s") + ")")
    if rec.counts:
        c = rec.counts
        line += (f"; instructions: old {c['old']:.4g}, new {c['new']:.4g}, this "
                 f"{c['this']:.4g}")
    return line + f"; decided by {'instructions' if rec.witness == INSTRUCTIONS else 'time'}" \
        if rec.verdict != judge.UNCERTAIN else line + "; undecided"


R = TypeVar("R", Endpoints, Step, Confirm)


class Search:
    """One invocation of the search over `state`, on the range `ends` (default: the bisect's
    old and new), after the finished series in `records` (this range's)."""

    def __init__(self, state: State, records: list[Record], ws: Workspace | None = None,
                 ends: tuple[str, str] | None = None, first_step: int = 1) -> None:
        self.state = state
        self.s = state.settings        # fixed for the whole bisect
        self.dir = state.dir
        self.records = records
        self.ws = ws or Workspace(self.s.repo, state.dir, state.mode, self.s.layouts)
        self.old, self.new = ends or (self.s.old, self.s.new)
        self.sub = ends is not None and ends != (self.s.old, self.s.new)
        self.first_step = first_step   # step numbers go on across ranges
        self.t0 = time.monotonic()
        self.known: dict[str, tuple[str, str]] = {}   # fingerprint -> (verdict, commit)
        self.new_ref = self.new         # the oldest commit known to be like new
        self.olds = [self.old]          # commits known to be like old
        self.skipped: set[str] = set()
        self.build_seconds: dict[str, float] = {}
        self.by_counts = self.s.witness == INSTRUCTIONS
        mode = state.mode
        # --instructions: the watched metric is itself a count, exact (core/levels)
        self.exact = isinstance(mode, KvbenchMode) and mode.plan.instructions
        self.bench = self.make_bench()
        self.before_series: Callable[[], None] | None = None   # called before every series

    # ---- bookkeeping -------------------------------------------------------------------------

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.t0)
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else \
            f"{s // 60}:{s % 60:02d}"

    def say(self, msg: str) -> None:
        progress(f"[{self.elapsed()}] {msg}")

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

    # ---- building, measuring, counting -------------------------------------------------------

    def build(self, sha: str, trace: bool = False) -> tuple[set[str], set[str]]:
        """Builds `sha` (BuildError when it does not build), timing it."""
        t = time.monotonic()
        reads = self.ws.build(sha, trace=trace)
        dt = time.monotonic() - t
        self.build_seconds[sha] = self.build_seconds.get(sha, 0.0) + dt
        self.state.totals.builds += 1
        self.state.totals.build_seconds += dt
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

    def make_bench(self) -> Bench:
        os.makedirs(os.path.join(self.dir, "runs"), exist_ok=True)
        generic = isinstance(self.state.mode, GenericMode)
        return Bench(self.ws.run, self.ws.relink, self.ws.links, self.pick, self.say,
                     self.state.totals, os.path.join(self.dir, "runs"),
                     relink_guess=2.0 if generic else 40.0,
                     batch=1 if generic else RELINK_BATCH)

    def plan(self, tag: str, shas: list[str], under_test: str = "", *, fixed: int = 0,
             links: int = 0, paid: list[str] | None = None) -> Plan:
        """The plan of a series: --layouts links (more added while it cannot decide, unless
        --layouts 1) with whole cycles of rounds, at least two on each link and --repeats in
        all; its budget follows what building the commits it was built for took (`paid`: old
        and new for the endpoints, the commit under test for a step; FLOOR at least) unless
        --max-time sets it. `fixed`: exactly that many rounds on `links` links."""
        k = links or self.layouts()
        per = round_loop.first_rounds(k, fixed or self.s.budget.first)
        building = sum(self.build_seconds.get(x, 0.0)
                       for x in dict.fromkeys(shas if paid is None else paid))
        seconds = round_loop.seconds(self.s.budget.max_seconds, building)
        return Plan(tag, shas, k, per, max(self.s.budget.max_rounds, k * per), seconds,
                    k > 1, bool(fixed), under_test, building)

    def series(self, plan: Plan, settled: Callable[[Measured], bool],
               rows: Callable[[Measured], list[levels.Components]]
               ) -> tuple[Series, Measured, Outcome]:
        if self.before_series is not None:
            self.before_series()   # bisect_ranges: the CPU and canary, once its commits built
        self.ws.cpu = self.state.cpu
        s = Series(self.bench, plan)
        m, out = s.run(settled, rows)
        self.save_state()
        return s, m, out

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
        return self.s.witness != "time" and bisect_witness.counter(self.state.mode)[0] is not None

    def counts(self, shas: list[str]) -> list[float]:
        """Instructions of each commit (bisect_witness), counted once per bisect (state)."""
        count, what = bisect_witness.counter(self.state.mode)
        assert count is not None, what
        for sha in shas:
            if sha not in self.state.counts:
                self.say(f"counting instructions of {sha[:12]} ({what})")
                self.ws.tree(sha)
                self.state.counts[sha] = count(self.ws.trees[sha], sha, self.dir)
                self.save_state()
        return [self.state.counts[x] for x in shas]

    def count_sign(self) -> int:
        """sign (bisect_judge) of the change looked for, in instructions: fewer is faster."""
        return judge.want_sign(self.s.find, False)

    # ---- what the build compiles -------------------------------------------------------------

    def learn_compiled(self, old: str, new: str) -> None:
        """Builds old and new, traced when that can work, and keeps the compiled set."""
        st = self.state
        why = tracer()
        trace = not why and st.compiled is None
        reads = []
        for label, sha in (("old", old), ("new", new)):
            if sha in self.ws.built:
                reads.append((set(), set()))
                continue
            self.say(f"building the {label} commit {sha[:12]}" + (" (traced)" if trace else ""))
            try:
                reads.append(self.build(sha, trace=trace))
            except BuildError as e:
                raise RunError(f"the {label} commit {sha[:12]} does not build: {e}") from None
        if trace:
            measure_cmd = st.mode.measure_cmd if isinstance(st.mode, GenericMode) else ""
            cset = learn(self.s.repo, [old, new], reads, measure_cmd)
            if cset.files:
                st.compiled = cset
            else:
                why = ("the traced builds of old and new read no file of the repository "
                       "(a build reused from a cache?)")
        if st.compiled is None:
            st.compiled_note = f"no commit is skipped for identical sources: {why}"
        elif not self.s.skip_identical:
            st.compiled_note = ("--no-skip-identical: every commit is measured, even when "
                                "it compiles the same sources as a judged one")
        self.save_state()

    def fingerprint(self, sha: str) -> str:
        cset = self.state.compiled
        return fingerprint(self.s.repo, sha, cset) if cset is not None else ""

    def same_sources_as(self, fp: str) -> tuple[str, str] | None:
        """(verdict, commit) of a judged commit that compiles the same sources, when skipping
        such commits is on."""
        return self.known.get(fp) if fp and self.s.skip_identical else None

    # ---- the endpoints -----------------------------------------------------------------------

    def endpoints(self) -> Ending | None:
        """Measures old against new until the change is established; an Ending when it is not
        (or when nothing compiled differs)."""
        old, new = self.old, self.new
        done = self.recorded(Endpoints)
        rec = done[0] if done else self.measure_endpoints(old, new)
        self.by_counts = self.by_counts or rec.witness == INSTRUCTIONS
        for sha, label in ((old, "old"), (new, "new")):
            fp = rec.fingerprints.get(sha)
            if fp:
                self.known[fp] = (label, sha)
        return self.endpoint_ending(rec)

    def measure_endpoints(self, old: str, new: str) -> Endpoints:
        if self.sub:
            for sha in (old, new):
                self.built(sha)
        else:
            self.learn_compiled(old, new)
        fo, fn = self.fingerprint(old), self.fingerprint(new)
        if fo and fo == fn and self.s.skip_identical:
            raise Refused(f"old {old[:12]} and new {new[:12]} compile identical sources "
                          "(the files their builds read hash alike): no commit between "
                          "them changes the compiled code, so the difference does not "
                          "come from it. --no-skip-identical measures every commit anyway")
        if self.by_counts:
            return self.counted_endpoints(old, new, {old: fo, new: fn}, None)
        self.say(f"measuring old {old[:12]} and new {new[:12]} in interleaved rounds")
        threshold = self.s.judgement.threshold

        def check(m: Measured) -> judge.ChangeCheck:
            v = m.levels()
            return judge.check_change(v["old"], v["new"], sign=self.sign(), threshold=threshold,
                                      exact=self.exact)

        roles = {"old": old, "new": new}
        series, m, out = self.series(
            self.plan("endpoints", [old, new]),
            lambda m: check(self.as_roles(m, roles)).state != judge.UNDECIDED,
            lambda m: _rows(self.as_roles(m, roles), [("old", "new")]))
        m = series.measured(roles)
        c = check(m)
        rec = Endpoints(old, new, c.state, out.rounds, out.why, m, ivjson(c.interval),
                        {old: fo, new: fn}, c.unit, out.spent)
        if c.state == judge.UNDECIDED and self.can_count():
            try:
                return self.counted_endpoints(old, new, {old: fo, new: fn}, rec)
            except (BuildError, RunError, UsageError) as e:
                self.say(f"counting the instructions of old and new failed: {e}")
        self.record(rec)
        return rec

    @staticmethod
    def as_roles(m: Measured, roles: dict[str, str]) -> Measured:
        return Measured({k: m.values[s] for k, s in roles.items()},
                        {k: m.seed_of(s) for k, s in roles.items()},
                        {k: m.round_of(s) for k, s in roles.items()}, m.disturbed)

    def counted_endpoints(self, old: str, new: str, fps: dict[str, str],
                          timed: Endpoints | None) -> Endpoints:
        """The ends told apart by their instruction counts (time could not, or --witness
        instructions); then every step is counted."""
        co, cn = self.counts([old, new])
        c = judge.check_change(levels.Sample.processes([co]), levels.Sample.processes([cn]),
                               sign=self.count_sign(), threshold=self.s.judgement.threshold,
                               exact=True)
        base = timed or Endpoints(old, new, c.state, 0, "counted", Measured({}),
                                  ivjson(c.interval), fps)
        rec = Endpoints(old, new, c.state, base.rounds, base.stopped_by, base.measured,
                        base.change, fps, base.unit, base.spent, INSTRUCTIONS,
                        {"old": co, "new": cn})
        self.by_counts = True
        self.record(rec)
        return rec

    def sign(self) -> int:
        """+1 or -1: see bisect_judge. REQUIRES: the first run named the metric."""
        assert self.state.watched is not None, "the direction is the watched metric's"
        return judge.want_sign(self.s.find, self.state.judgement.higher_is_better)

    def endpoint_ending(self, rec: Endpoints) -> Ending | None:
        if rec.state == judge.ESTABLISHED:
            return None
        j = self.state.judgement
        m = self.state.metric() if self.state.watched else None
        what = m.path if m else "the metric"
        if rec.witness == INSTRUCTIONS and rec.counts:
            c = rec.counts
            shown = (f"instructions new/old {c['new'] / c['old']:.3f}; time: new/old "
                     f"{iv_text(rec.change)}" if rec.measured.values else
                     f"instructions new/old {c['new'] / c['old']:.3f}")
            what, n = "instructions", rec.measured.n if rec.measured.values else 0
        else:
            shown = f"new/old {iv_text(rec.change)}"
            n = rec.measured.n
        find = self.s.find
        unit = f"; {rec.unit}" if rec.unit else ""
        if rec.state == judge.UNDECIDED:
            got = list(rec.measured.samples().values())
            noise = ("the code placement effect" if placement.spread(got)[0] > j.threshold
                     else "the noise")
            why = "; the instructions could not be counted" if self.s.witness != "time" \
                else ""
            return Ending(EXIT_UNDECIDED,
                          f"could not decide between old {rec.old[:12]} and new "
                          f"{rec.new[:12]}: the change is within {noise} at n={n} "
                          f"({shown}{unit}; {placement.spread_text(got)}){why}; nothing was "
                          "bisected")
        other = "faster" if find == "slower" else "slower"
        word = j.better_word if find == "slower" else j.worse_word
        if self.sub:
            return Ending(0, f"{rec.old[:12]}..{rec.new[:12]} holds no change of "
                             f"{j.threshold * 100:g}% or more {find} ({shown}{unit})")
        if rec.state == judge.OPPOSITE:
            raise Refused(f"old -> new is not {find} but {word} ({what}, {shown}, n={n}{unit}): "
                          f"to find that change, --find {other}")
        raise Refused(f"old -> new is not a change of {j.threshold * 100:g}% or more "
                      f"({what}, {shown}, n={n}{unit}): nothing to bisect")

    # ---- the steps ---------------------------------------------------------------------------

    def mark(self, verdict: str, sha: str) -> None:
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

    def replay(self) -> Ending | None:
        """Takes the verdicts of the recorded steps; an Ending when one of them ended the
        search."""
        for rec in self.recorded(Step):
            if rec.verdict == judge.UNCERTAIN:
                return self.undecided_ending(rec)
            self.mark(rec.verdict, rec.commit)
            if rec.fingerprint:
                self.known.setdefault(rec.fingerprint, (rec.verdict, rec.commit))
        return None

    def steps(self) -> Ending | str:
        """Bisects until the first new commit is known (returned) or the search ends."""
        while True:
            cands = self.candidates()
            rest = [c for c in cands if c != self.new_ref]
            testable = [c for c in rest if c not in self.skipped]
            if not rest:
                return self.new_ref
            if not testable:
                return Ending(1, "could not narrow it down: the commits left do not build or "
                                 "run; the first new commit is one of " +
                                 ", ".join(s[:12] for s in rest + [self.new_ref]))
            sha = testable[0]
            n = self.first_step + len(self.recorded(Step))
            about = n - 1 + max(1, math.ceil(math.log2(len(testable) + 1)))
            subject = git(self.s.repo, "log", "-1", "--format=%s", sha).stdout.strip()
            self.say(f"step {n} of about {about}: {sha[:12]} {subject[:60]} "
                     f"({len(cands)} commits left)")
            rec = self.step(n, sha)
            if self.sub:
                rec.ends = (self.old, self.new)
            self.record(rec)
            self.say(step_line(rec))
            if rec.verdict == judge.UNCERTAIN:
                return self.undecided_ending(rec)
            self.mark(rec.verdict, sha)

    def step(self, n: int, sha: str) -> Step:
        fp = self.fingerprint(sha)
        same = self.same_sources_as(fp)
        if same:
            verdict, like = same
            return Step(n, sha, fp, verdict, SAME_SOURCES, same_as=like)
        if self.by_counts:
            return self.counted_step(n, sha, fp, None)
        try:
            self.build(sha)
        except BuildError as e:
            if fp:
                self.known[fp] = ("skip", sha)
            return Step(n, sha, fp, "skip", "does not build",
                        why=str(e).replace(self.dir + os.sep, ""))
        try:
            rec = self.timed_step(n, sha, fp)
        except CommitCannotRun as e:
            return Step(n, sha, fp, "skip", "does not run", why=str(e))
        if rec.verdict == judge.UNCERTAIN and self.can_count():
            counted = self.counted_step(n, sha, fp, rec.series)
            if counted.witness == INSTRUCTIONS:
                # Time could not place a commit between these ends within a budget; the next
                # commit lies between them too: count the rest rather than spend a timed
                # build and budget on each first.
                self.by_counts = True
                self.say(f"step {n}: time could not decide within its budget; the steps left "
                         "are decided by instruction counts")
            return counted
        if fp and rec.verdict != judge.UNCERTAIN:
            self.known[fp] = (rec.verdict, sha)
        return rec

    def timed_step(self, n: int, sha: str, fp: str) -> Step:
        old, new = self.old, self.new
        self.built(old)
        self.built(new)
        roles = {"old": old, "new": new, "this": sha}
        t = time.monotonic()

        def call(m: Measured, final: bool = False) -> judge.StepCall:
            v = self.as_roles(m, roles).levels()
            return judge.classify(v["old"], v["new"], v["this"], final=final, exact=self.exact)

        series, m, out = self.series(
            self.plan(f"step{n}", [old, new, sha], under_test=sha, paid=[sha]),
            lambda m: call(m).settled,
            lambda m: _rows(self.as_roles(m, roles), [("old", "this"), ("new", "this")]))
        c = call(m, final=True)
        st = StepSeries(out.rounds, out.why, c.narrow, round(time.monotonic() - t, 3),
                        series.measured(roles), ivjson(c.to_old), ivjson(c.to_new),
                        ivjson(c.change), c.position, c.unit, c.rule, out.spent)
        return Step(n, sha, fp, c.verdict, MEASURED, series=st)

    def counted_step(self, n: int, sha: str, fp: str, timed: StepSeries | None) -> Step:
        """The step decided by instruction counts: the halfway rule on exact values."""
        try:
            co, cn, ct = self.counts([self.old, self.new, sha])
        except (BuildError, RunError, UsageError) as e:
            if timed is not None:
                return Step(n, sha, fp, judge.UNCERTAIN, MEASURED, series=timed,
                            why=f"counting instructions failed: {e}")
            return Step(n, sha, fp, "skip", "does not count", why=str(e))
        p = levels.Sample.processes
        c = judge.classify(p([co]), p([cn]), p([ct]), final=True, exact=True)
        if fp and c.verdict != judge.UNCERTAIN:
            self.known[fp] = (c.verdict, sha)
        return Step(n, sha, fp, c.verdict, MEASURED if timed else COUNTED, series=timed,
                    witness=INSTRUCTIONS, counts={"old": co, "new": cn, "this": ct})

    def undecided_ending(self, rec: Step) -> Ending:
        a, b = self.newest_old(), self.new_ref
        pos = rec.position
        where = f"it sits {pos * 100:.0f}% of the way from old to new" \
            if math.isfinite(pos) else ""
        n = rec.series.measured.n if rec.series else 0
        spent = f", {rec.series.spent.text()}" if rec.series and rec.series.spent else ""
        why = (f"the change is within the noise at n={n}{spent} (step {rec.step}, "
               f"{rec.commit[:12]}" + (f": {where}" if where else "") + ")")
        if rec.why:
            why += f"; {rec.why}"
        elif self.s.witness != "time" and not self.can_count():
            why += f"; no instruction counts: {bisect_witness.counter(self.state.mode)[1]}"
        return Ending(EXIT_UNDECIDED,
                      f"could not decide between {a[:12]} and {b[:12]}: {why}; the first new "
                      f"commit is in {a[:12]}..{b[:12]} ({len(self.candidates())} commit(s) "
                      "left)" + self.placement_caveat(a, b))

    def placement_caveat(self, a: str, b: str) -> str:
        """Honest ranges (docs/placement.md): a range bounded by verdicts measured on
        one link per commit holds the change only if those verdicts were not placement effects.
        Names them and the range that holds the change either way (old or new in their place).
        Verdicts taken by content hash or by counts, and those made over several links, are not
        sensitive."""
        if self.layouts() > 1:
            return ""
        judged = {r.commit: r for r in self.recorded(Step)}
        sensitive = [x for x in (a, b) if x in judged and judged[x].how == MEASURED
                     and judged[x].witness != INSTRUCTIONS]
        if not sensitive:
            return ""
        lo = self.s.old if a in sensitive else a
        hi = self.s.new if b in sensitive else b
        return ("; placement-sensitive: " + ", ".join(
            f"step {judged[x].step} ({x[:12]} like {judged[x].verdict})" for x in sensitive)
            + f" was judged on one link per commit (--layouts 1) and may be a code-placement "
              f"effect; if so the first new commit is in {lo[:12]}..{hi[:12]}")

    def newest_old(self) -> str:
        """Of the commits known to be like old, the one with the most history."""
        depth = {s: int(git(self.s.repo, "rev-list", "--count", s).stdout.strip() or 0)
                 for s in self.olds}
        return max(self.olds, key=lambda s: depth[s])

    # ---- the confirmation --------------------------------------------------------------------

    def confirmation(self, blamed: str) -> Confirm:
        done = self.recorded(Confirm)
        if done:
            return done[0]
        old, new = self.old, self.new
        parent = git(self.s.repo, "rev-parse", f"{blamed}^").stdout.strip()
        same = self.state.compiled is not None and \
            self.fingerprint(parent) == self.fingerprint(blamed)
        rec = Confirm(blamed, parent, same)
        for sha in (parent, blamed):
            if sha not in self.ws.built:
                self.say(f"building {sha[:12]} for the confirmation")
                try:
                    self.build(sha)
                except BuildError as e:
                    rec.reasons = [f"{sha[:12]} does not build: {e}"]
                    self.record(rec)
                    return rec
        self.built(old)
        self.built(new)
        links, n = self.confirm_size()
        self.say(f"confirming {blamed[:12]} against its parent {parent[:12]}: {n} rounds on "
                 f"{links} link(s) with old and new")
        roles = {"parent": parent, "blamed": blamed, "old": old, "new": new}
        series, _, out = self.series(self.plan("confirm", list(roles.values()), fixed=n,
                                               links=links), lambda m: True, lambda m: [])
        m = series.measured(roles)
        v = m.levels()
        j = self.state.judgement
        c = judge.confirm(v["parent"], v["blamed"], v["old"], v["new"], sign=self.sign(),
                          alpha=j.alpha, threshold=j.threshold, same_sources=same,
                          exact=self.exact)
        rec.series = ConfirmSeries(
            out.rounds, m, ivjson(c.ratio), c.p, ivjson(c.change),
            c.explained if math.isfinite(c.explained) else None,
            c.before if math.isfinite(c.before) else None, c.unit, out.spent)
        rec.reasons = list(c.reasons)
        self.witness(rec, parent, blamed)
        self.record(rec)
        return rec

    def confirm_size(self) -> tuple[int, int]:
        """(links, rounds) of the confirmation, fixed before any of its values is seen, so its p
        stays a p-value: the most links any series of this range reached, and twice the rounds
        of the longest (at least twice --repeats), as many as the budget of a series buys at
        the pace of the series so far (a round of four commits for 4/3 of one of three)."""
        series = [r for r in self.records if r.measured and r.measured.values]
        links = max([self.layouts()] + [r.measured.links for r in series])
        rounds = 2 * max([self.s.budget.first] + [r.rounds_taken for r in self.records])
        spent = [r.spent for r in series if getattr(r, "spent", None)] + \
            [r.series.spent for r in series if isinstance(r, Step) and r.series and
             r.series.spent]
        paced = [(x.measuring, x.links * x.rounds_per_link) for x in spent
                 if x.links * x.rounds_per_link > 0]
        if paced:
            per_round = 4 / 3 * sum(t for t, _ in paced) / sum(n for _, n in paced)
            seconds = self.plan("confirm", [self.old, self.new], paid=[]).seconds
            rounds = min(rounds, max(int(seconds / per_round), 2 * self.s.budget.first))
        rounds = max(rounds, 2 * links if links > 1 else rounds)
        return links, -(-rounds // links) * links

    def witness(self, rec: Confirm, parent: str, blamed: str) -> None:
        """Instruction counts of parent and blamed (bisect_witness). Time says changed but the
        instructions are the same: a code-placement effect, not confirmed. Time cannot tell the
        commit from its parent but the counts change by the threshold in the direction looked
        for (--witness auto or instructions): confirmed by the counts."""
        count, why = bisect_witness.counter(self.state.mode)
        if count is None:
            rec.witness_note = why if bisect_witness.counted(self.state.mode) else ""
            return
        try:
            cp, cb = self.counts([parent, blamed])
        except (BuildError, RunError, UsageError) as e:
            rec.witness_note = f"counting instructions failed: {e}"
            return
        mode = bisect_witness.counted(self.state.mode)
        preset = (bisect_witness.witness_preset(mode.preset) or "") if mode else ""
        w = bisect_witness.Witness(cp, cb, preset)
        rec.witness = w
        if w.same and not rec.reasons:
            rec.placement_effect = True
            rec.reasons.append(f"a code-placement effect: time differs but the {w.text()}")
            return
        moved = self.count_sign() * math.log(cb / cp) if cp > 0 and cb > 0 else 0.0
        timing = [x for x in rec.reasons if "does not differ significantly" in x]
        if self.s.witness != "time" and timing and \
                moved >= math.log1p(self.s.judgement.threshold):
            rec.reasons.remove(timing[0])
            rec.witness_decided = True


def _rows(m: Measured, pairs: list[tuple[str, str]]) -> list[levels.Components]:
    """The variance components of the series' comparisons (those that can be split yet)."""
    v = m.levels()
    out = [levels.components(v[a], v[b]) for a, b in pairs]
    return [c for c in out if c is not None]
