"""kvb bisect's search: the endpoints, the steps, the confirmation, each recorded as it ends.

Every series is measured in interleaved rounds (every commit of the series once per round, the
order rotating) and grows through kvbtools.measure.rounds until its judgement (bisect_judge) is
made or the budget is spent. Each finished series is a record (bisect_records) and one line of
steps.jsonl with all its values, so --resume replays the finished ones (their verdicts narrow
the range again) without measuring them again. What the search knows besides is its State
(bisect_state), rewritten to state.json as it changes.
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from kvbtools.measure import bisect_judge as judge
from kvbtools.measure import bisect_witness
from kvbtools.core import metrics, results
from kvbtools.measure import placement, rounds
from kvbtools.measure.bisect_records import (MEASURED, SAME_SOURCES, Confirm, ConfirmSeries,
                                             Endpoints, Measured, Record, Step, StepSeries,
                                             iv_text, ivjson)
from kvbtools.measure.bisect_state import GenericMode, State, Watched
from kvbtools.measure.bisect_trees import Workspace, fingerprint, git, learn, tracer
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.measure.rounds import Budget
from kvbtools.measure.runner import BuildError, progress
from kvbtools.core.samples import Side, load_side


@dataclass
class Ending:
    """How the search ended: the exit status and a one-line summary (the report says more)."""
    code: int
    summary: str


class Refused(RunError):
    """old -> new is not a change to bisect (or no commit between them can be it): exit 4, the
    bisect has no answer (docs/cli.md)."""
    exit_status = EXIT_UNDECIDED


class CommitCannotRun(Exception):
    """The commit under test built but its measurement failed: skip it, as git bisect does."""


def step_line(rec: Step) -> str:
    """One step of the search, as the progress lines and the report show it."""
    sha = rec.commit[:12]
    if rec.how == SAME_SOURCES and rec.verdict == "skip":
        return (f"step {rec.step}: {sha} skipped: no build: it compiles the same sources "
                f"as {rec.same_as[:12]}, which does not build or run")
    if rec.how == SAME_SOURCES:
        return (f"step {rec.step}: {sha} like {rec.verdict}: no build, no run: it "
                f"compiles the same sources as {rec.same_as[:12]}")
    if rec.verdict == "skip" or rec.series is None:
        return f"step {rec.step}: {sha} skipped: {rec.how}: {rec.why[:300]}"
    s = rec.series
    word = "uncertain" if rec.verdict == judge.UNCERTAIN else f"like {rec.verdict}"
    return (f"step {rec.step}: {sha} {word} (n={s.measured.n}, {s.seconds:.1f} s): this/old "
            f"{iv_text(s.to_old)}, this/new {iv_text(s.to_new)}, new/old "
            f"{iv_text(s.change)}")


R = TypeVar("R", Endpoints, Step, Confirm)


class Search:
    """One invocation of the search over `state`, after the finished series in `records`."""

    def __init__(self, state: State, records: list[Record]) -> None:
        self.state = state
        self.s = state.settings        # fixed for the whole bisect
        self.dir = state.dir
        self.records = records
        self.ws = Workspace(self.s.repo, state.dir, state.mode, self.s.layouts)
        self.t0 = time.monotonic()
        self.known: dict[str, tuple[str, str]] = {}   # fingerprint -> (verdict, commit)
        self.new_ref = self.s.new       # the oldest commit known to be like new
        self.olds = [self.s.old]        # commits known to be like old
        self.skipped: set[str] = set()

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

    def budget(self, first: int | None = None) -> Budget:
        """At least --repeats rounds; with K links a commit, whole cycles of the seeds and at
        least two rounds on each."""
        first = first or self.s.budget.first
        k = self.layouts()
        if k > 1:
            first = max(2 * k, -(-first // k) * k)
        most = max(self.s.budget.max_rounds, first)
        return Budget(first, most, self.s.budget.max_seconds)

    # ---- measuring ---------------------------------------------------------------------------

    def built(self, sha: str) -> None:
        """Builds `sha` for this invocation unless it is built (a commit that built once must
        build again: a failure now is a failure of the run, not the commit's)."""
        if sha not in self.ws.built:
            self.say(f"building {sha[:12]}")
            try:
                self.ws.build(sha)
            except BuildError as e:
                raise RunError(f"{sha[:12]} built before but does not build now: {e}") from None
            self.state.totals.builds += 1

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

    def series(self, tag: str, shas: list[str], budget: Budget, settled: Callable[
            [dict[str, placement.Sample]], bool], under_test: str = "") -> tuple[
            dict[str, placement.Sample], rounds.Outcome]:
        """Interleaved rounds of `shas` until `settled(samples)` or the budget is spent; every
        commit runs on the same layout seed in a round, the seeds rotating (placement.py). A run
        of `under_test` that fails raises CommitCannotRun; of any other commit, RunError."""
        shas = list(dict.fromkeys(shas))
        shown = re.sub(r"^step(\d+)$", r"step \1", tag)
        values: dict[str, list[float]] = {s: [] for s in shas}
        seeds: dict[str, list[int]] = {s: [] for s in shas}
        totals = self.state.totals
        os.makedirs(os.path.join(self.dir, "runs"), exist_ok=True)

        def samples() -> dict[str, placement.Sample]:
            return {s: placement.Sample(tuple(values[s]), tuple(seeds[s])) for s in shas}

        def one_round(r: int) -> None:
            k = (r - 1) % len(shas)
            seed = placement.seed_of_round(r, self.layouts())
            for sha in shas[k:] + shas[:k]:
                out = os.path.join(self.dir, "runs", f"{tag}.{sha[:12]}.r{r}.json")
                t = time.monotonic()
                try:
                    self.ws.run(sha, out, seed)
                except BuildError as e:
                    if sha == under_test:
                        raise CommitCannotRun(str(e)) from None
                    raise RunError(f"{sha[:12]} ran before but fails now: {e}") from None
                totals.measure_seconds += time.monotonic() - t
                totals.runs += 1
                got = self.pick(out, sha[:12])
                values[sha] += got
                seeds[sha] += [seed] * len(got)
            totals.rounds += 1
            self.say(f"{shown}: round {r} done ({len(shas)} runs"
                     + (f", layout seed {seed})" if self.layouts() > 1 else ")"))

        outcome = rounds.run(budget, one_round, lambda r: settled(samples()))
        return samples(), outcome

    # ---- what the build compiles -------------------------------------------------------------

    def learn_compiled(self, old: str, new: str) -> None:
        """Builds old and new, traced when that can work, and keeps the compiled set."""
        st = self.state
        why = tracer()
        trace = not why and st.compiled is None
        reads = []
        for label, sha in (("old", old), ("new", new)):
            self.say(f"building the {label} commit {sha[:12]}" + (" (traced)" if trace else ""))
            try:
                reads.append(self.ws.build(sha, trace=trace))
            except BuildError as e:
                raise RunError(f"the {label} commit {sha[:12]} does not build: {e}") from None
            st.totals.builds += 1
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
        old, new = self.s.old, self.s.new
        done = self.recorded(Endpoints)
        rec = done[0] if done else self.measure_endpoints(old, new)
        for sha, label in ((old, "old"), (new, "new")):
            fp = rec.fingerprints.get(sha)
            if fp:
                self.known[fp] = (label, sha)
        return self.endpoint_ending(rec)

    def measure_endpoints(self, old: str, new: str) -> Endpoints:
        self.learn_compiled(old, new)
        fo, fn = self.fingerprint(old), self.fingerprint(new)
        if fo and fo == fn and self.s.skip_identical:
            raise Refused(f"old {old[:12]} and new {new[:12]} compile identical sources "
                          "(the files their builds read hash alike): no commit between "
                          "them changes the compiled code, so the difference does not "
                          "come from it. --no-skip-identical measures every commit anyway")
        self.say(f"measuring old {old[:12]} and new {new[:12]} in interleaved rounds")
        threshold = self.s.judgement.threshold

        def settled(v: dict[str, placement.Sample]) -> bool:
            return judge.check_change(v[old], v[new], sign=self.sign(),
                                      threshold=threshold).state != judge.UNDECIDED

        values, out = self.series("endpoints", [old, new], self.budget(), settled)
        check = judge.check_change(values[old], values[new], sign=self.sign(),
                                   threshold=threshold)
        rec = Endpoints(old, new, check.state, out.rounds, out.why,
                        Measured.of({"old": values[old], "new": values[new]}),
                        ivjson(check.interval), {old: fo, new: fn})
        self.record(rec)
        return rec

    def sign(self) -> int:
        """+1 or -1: see bisect_judge. REQUIRES: the first run named the metric."""
        assert self.state.watched is not None, "the direction is the watched metric's"
        return judge.want_sign(self.s.find, self.state.judgement.higher_is_better)

    def endpoint_ending(self, rec: Endpoints) -> Ending | None:
        if rec.state == judge.ESTABLISHED:
            return None
        m = self.state.metric()
        j = self.state.judgement
        est, lo, hi = rec.change
        shown = f"new/old {est:.3f} [{lo:.3f}, {hi:.3f}]" if lo else f"new/old {est:.3f}"
        n = rec.measured.n
        find = self.s.find
        if rec.state == judge.UNDECIDED:
            got = list(rec.measured.samples().values())
            noise = ("the code placement effect" if placement.spread(got)[0] > j.threshold
                     else "the noise")
            return Ending(EXIT_UNDECIDED,
                          f"could not decide between old {rec.old[:12]} and new "
                          f"{rec.new[:12]}: the change is within {noise} at n={n} "
                          f"({shown}; {placement.spread_text(got)}); nothing was bisected")
        other = "faster" if find == "slower" else "slower"
        word = j.better_word if find == "slower" else j.worse_word
        if rec.state == judge.OPPOSITE:
            raise Refused(f"old -> new is not {find} but {word} ({m.path}, {shown}, n={n}): "
                          f"to find that change, --find {other}")
        raise Refused(f"old -> new is not a change of {j.threshold * 100:g}% or more "
                      f"({m.path}, {shown}, n={n}): nothing to bisect")

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
            n = len(self.recorded(Step)) + 1
            about = n - 1 + max(1, math.ceil(math.log2(len(testable) + 1)))
            subject = git(self.s.repo, "log", "-1", "--format=%s", sha).stdout.strip()
            self.say(f"step {n} of about {about}: {sha[:12]} {subject[:60]} "
                     f"({len(cands)} commits left)")
            rec = self.step(n, sha)
            self.record(rec)
            self.report_step(rec)
            if rec.verdict == judge.UNCERTAIN:
                return self.undecided_ending(rec)
            self.mark(rec.verdict, sha)

    def step(self, n: int, sha: str) -> Step:
        old, new = self.s.old, self.s.new
        fp = self.fingerprint(sha)
        same = self.same_sources_as(fp)
        if same:
            verdict, like = same
            return Step(n, sha, fp, verdict, SAME_SOURCES, same_as=like)
        try:
            self.ws.build(sha)
            self.state.totals.builds += 1
        except BuildError as e:
            if fp:
                self.known[fp] = ("skip", sha)
            return Step(n, sha, fp, "skip", "does not build",
                        why=str(e).replace(self.dir + os.sep, ""))
        self.built(old)
        self.built(new)
        t = time.monotonic()
        try:
            values, out = self.series(f"step{n}", [old, new, sha], self.budget(),
                                      lambda v: judge.classify(v[old], v[new], v[sha]).settled,
                                      under_test=sha)
        except CommitCannotRun as e:
            return Step(n, sha, fp, "skip", "does not run", why=str(e))
        call = judge.classify(values[old], values[new], values[sha])
        series = StepSeries(out.rounds, out.why, call.narrow, round(time.monotonic() - t, 3),
                            Measured.of({"old": values[old], "new": values[new],
                                         "this": values[sha]}),
                            ivjson(call.to_old), ivjson(call.to_new), ivjson(call.change),
                            call.position)
        if fp and call.verdict != judge.UNCERTAIN:
            self.known[fp] = (call.verdict, sha)
        return Step(n, sha, fp, call.verdict, MEASURED, series=series)

    def report_step(self, rec: Step) -> None:
        self.say(step_line(rec))

    def undecided_ending(self, rec: Step) -> Ending:
        """REQUIRES: `rec` is a measured step (only a series leaves a commit uncertain)."""
        assert rec.series is not None
        a, b = self.newest_old(), self.new_ref
        n = rec.series.measured.n
        pos = rec.series.position
        where = (f"it sits {pos * 100:.0f}% of the way from old to new"
                 if isinstance(pos, float) and math.isfinite(pos) else "")
        if rec.series.narrow:
            why = (f"{rec.commit[:12]} measures between them ({where}, n={n}): the change "
                   "may be spread over several commits")
        else:
            why = (f"the change is within the noise at n={n} (step {rec.step}, "
                   f"{rec.commit[:12]}" + (f": {where}" if where else "") + ")")
        return Ending(EXIT_UNDECIDED,
                      f"could not decide between {a[:12]} and {b[:12]}: {why}; the first new "
                      f"commit is in {a[:12]}..{b[:12]} ({len(self.candidates())} commit(s) "
                      "left)" + self.placement_caveat(a, b))

    def placement_caveat(self, a: str, b: str) -> str:
        """Honest ranges (docs/placement.md): a range bounded by verdicts measured on
        one link per commit holds the change only if those verdicts were not placement effects.
        Names them and the range that holds the change either way (old or new in their place).
        Verdicts taken by content hash, and those made over several links, are not sensitive."""
        if self.layouts() > 1:
            return ""
        judged = {r.commit: r for r in self.recorded(Step)}
        sensitive = [x for x in (a, b) if x in judged and judged[x].how == MEASURED]
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
        old, new = self.s.old, self.s.new
        parent = git(self.s.repo, "rev-parse", f"{blamed}^").stdout.strip()
        same = self.state.compiled is not None and \
            self.fingerprint(parent) == self.fingerprint(blamed)
        rec = Confirm(blamed, parent, same)
        for sha in (parent, blamed):
            if sha not in self.ws.built:
                self.say(f"building {sha[:12]} for the confirmation")
                try:
                    self.ws.build(sha)
                    self.state.totals.builds += 1
                except BuildError as e:
                    rec.reasons = [f"{sha[:12]} does not build: {e}"]
                    self.record(rec)
                    return rec
        self.built(old)
        self.built(new)
        # More rounds than any step took, fixed before a value is seen: p stays a p-value.
        n = 2 * max([self.s.budget.first] + [r.rounds_taken for r in self.records])
        self.say(f"confirming {blamed[:12]} against its parent {parent[:12]}: {n} rounds "
                 "with old and new")
        values, out = self.series("confirm", [parent, blamed, old, new], self.budget(n),
                                  lambda v: True)
        c = judge.confirm(values[parent], values[blamed], values[old], values[new],
                          sign=self.sign(), alpha=self.state.judgement.alpha,
                          same_sources=same)
        rec.series = ConfirmSeries(
            out.rounds, Measured.of({"parent": values[parent], "blamed": values[blamed],
                                     "old": values[old], "new": values[new]}),
            ivjson(c.ratio), c.p, ivjson(c.change),
            c.explained if math.isfinite(c.explained) else None)
        rec.reasons = list(c.reasons)
        self.witness(rec, parent, blamed)
        self.record(rec)
        return rec

    def witness(self, rec: Confirm, parent: str, blamed: str) -> None:
        """Instruction counts of parent and blamed (bisect_witness). Time says changed but the
        instructions are the same: a code-placement effect, not confirmed."""
        if bisect_witness.counted(self.state.mode) is not None:
            self.say(f"counting instructions of {parent[:12]} and {blamed[:12]} (callgrind)")
        w, why = bisect_witness.witness(self.state, self.ws.trees, parent, blamed)
        if w is None:
            rec.witness_note = why
            return
        rec.witness = w
        if w.same and not rec.reasons:
            rec.placement_effect = True
            rec.reasons.append(f"a code-placement effect: time differs but the "
                               f"{w.text()}")
