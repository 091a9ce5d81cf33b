"""kvb bisect's search: the endpoints, the steps, the confirmation, each recorded as it ends.

Every series is measured in interleaved rounds (every commit of the series once per round, the
order rotating) and grows through kvbtools.measure.rounds until its judgement (bisect_judge) is
made or the budget is spent. Each finished series is one line of steps.jsonl with all its values, so
--resume replays the finished ones (their verdicts narrow the range again) without measuring
them again.
"""
from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

from kvbtools.measure import bisect_judge as judge
from kvbtools.measure import bisect_witness
from kvbtools.core import metrics, results
from kvbtools.measure import placement, rounds
from kvbtools.measure.bisect_trees import CompiledSet, Workspace, fingerprint, git, learn, tracer
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.measure.rounds import Budget, Interval
from kvbtools.measure.runner import BuildError, progress
from kvbtools.core.samples import load_side


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


def ivjson(iv: Interval) -> list[float | None]:
    return [iv.estimate, iv.lo if iv.finite else None, iv.hi if iv.finite else None]


def iv_text(x: list[float | None] | None) -> str:
    """A recorded [estimate, lo, hi] as '0.770 [0.752, 0.781]'."""
    if not x:
        return "-"
    est, lo, hi = x
    return f"{est:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{est:.3f} [unbounded]"


def recorded_values(samples: dict[str, placement.Sample]) -> dict[str, Any]:
    """A record's "values" (role -> values) and "seeds" (role -> each value's layout seed)."""
    return {"values": {k: list(v.values) for k, v in samples.items()},
            "seeds": {k: list(v.seeds) for k, v in samples.items()}}


def record_samples(rec: dict[str, Any]) -> dict[str, placement.Sample]:
    """A record's samples by role; values recorded before layouts existed are one placement."""
    seeds = rec.get("seeds") or {}
    return {k: placement.sample(v, seeds.get(k)) for k, v in (rec.get("values") or {}).items()}


def step_line(rec: dict[str, Any]) -> str:
    """One step of the search, as the progress lines and the report show it."""
    sha = rec["commit"][:12]
    how = rec["how"]
    if how == "same sources" and rec["verdict"] == "skip":
        return (f"step {rec['step']}: {sha} skipped: no build: it compiles the same sources "
                f"as {rec['same_as'][:12]}, which does not build or run")
    if how == "same sources":
        return (f"step {rec['step']}: {sha} like {rec['verdict']}: no build, no run: it "
                f"compiles the same sources as {rec['same_as'][:12]}")
    if rec["verdict"] == "skip":
        return f"step {rec['step']}: {sha} skipped: {how}: {rec['why'][:300]}"
    n = min(len(v) for v in rec["values"].values())
    word = "uncertain" if rec["verdict"] == "uncertain" else f"like {rec['verdict']}"
    return (f"step {rec['step']}: {sha} {word} (n={n}, {rec['seconds']:.1f} s): this/old "
            f"{iv_text(rec['to_old'])}, this/new {iv_text(rec['to_new'])}, new/old "
            f"{iv_text(rec['change'])}")


class Search:
    def __init__(self, state: dict[str, Any], records: list[dict[str, Any]]) -> None:
        self.st = state
        self.dir = state["dir"]
        self.records = records
        self.ws = Workspace(state)
        self.t0 = time.monotonic()
        self.known: dict[str, tuple[str, str]] = {}   # fingerprint -> (verdict, commit)
        self.cset = CompiledSet.from_json(state.get("compiled"))
        self.new_ref = state["new"]     # the oldest commit known to be like new
        self.olds = [state["old"]]      # commits known to be like old
        self.skipped: set[str] = set()

    # ---- bookkeeping -------------------------------------------------------------------------

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.t0)
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else \
            f"{s // 60}:{s % 60:02d}"

    def say(self, msg: str) -> None:
        progress(f"[{self.elapsed()}] {msg}")

    def save_state(self) -> None:
        results.write_json(os.path.join(self.dir, "state.json"), self.st)

    def record(self, rec: dict[str, Any]) -> None:
        self.records.append(rec)
        with open(os.path.join(self.dir, "steps.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
        self.save_state()

    def recorded(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == kind]

    def count(self, key: str, n: float) -> None:
        self.st["totals"][key] = self.st["totals"].get(key, 0) + n

    def layouts(self) -> int:
        return int(self.st.get("layouts", 1))

    def budget(self, first: int | None = None) -> Budget:
        """At least --repeats rounds; with K links a commit, whole cycles of the seeds and at
        least two rounds on each."""
        first = first or self.st["repeats"]
        k = self.layouts()
        if k > 1:
            first = max(2 * k, -(-first // k) * k)
        most = max(self.st["max_rounds"], first)
        return Budget(first, most, self.st["max_seconds"])

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
            self.count("builds", 1)

    def pick(self, path: str, label: str) -> list[float]:
        """The values of the watched benchmark and metric in one run's JSON. The first run
        fixes which metric (and its better direction) that is."""
        side = load_side(label, [path])
        st = self.st
        if st.get("unit") is None:
            default = "ops_per_sec" if side.kind == results.KVBENCH else "bytes_per_second"
            m = next(iter(metrics.select(side.metrics, [st["metric"] or default],
                                         side.kind).values()))
            st.update(metric=m.path, unit=m.unit, better=m.better, kind=side.kind)
            names = [b for b, mk in side.order if mk == m.path]
            if st["bench_key"] is None:
                if len(names) != 1:
                    raise UsageError(f"the JSON has {len(names)} benchmarks; name one with "
                                     f"--bench: {', '.join(names[:20])}")
                st["bench_key"] = names[0]
            self.save_state()
        key = (st["bench_key"], st["metric"])
        if key not in side.values:
            names = [b for b, mk in side.order if mk == st["metric"]]
            raise UsageError(f"benchmark {st['bench_key']!r} is not in the measured JSON; it "
                             f"has: {', '.join(names[:20])}")
        return side.values[key]

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
                self.count("measure_seconds", time.monotonic() - t)
                self.count("runs", 1)
                got = self.pick(out, sha[:12])
                values[sha] += got
                seeds[sha] += [seed] * len(got)
            self.count("rounds", 1)
            self.say(f"{shown}: round {r} done ({len(shas)} runs"
                     + (f", layout seed {seed})" if self.layouts() > 1 else ")"))

        outcome = rounds.run(budget, one_round, lambda r: settled(samples()))
        return samples(), outcome

    # ---- what the build compiles -------------------------------------------------------------

    def learn_compiled(self, old: str, new: str) -> None:
        """Builds old and new, traced when that can work, and keeps the compiled set."""
        st = self.st
        why = tracer()
        trace = not why and self.cset is None
        reads = []
        for label, sha in (("old", old), ("new", new)):
            self.say(f"building the {label} commit {sha[:12]}" + (" (traced)" if trace else ""))
            try:
                reads.append(self.ws.build(sha, trace=trace))
            except BuildError as e:
                raise RunError(f"the {label} commit {sha[:12]} does not build: {e}") from None
            self.count("builds", 1)
        if trace:
            cset = learn(st["repo"], [old, new], reads, st.get("measure_cmd") or "")
            if cset.files:
                self.cset = cset
                st["compiled"] = cset.to_json()
            else:
                why = ("the traced builds of old and new read no file of the repository "
                       "(a build reused from a cache?)")
        if self.cset is None:
            st["compiled_note"] = f"no commit is skipped for identical sources: {why}"
        elif not st["skip_identical"]:
            st["compiled_note"] = ("--no-skip-identical: every commit is measured, even when "
                                   "it compiles the same sources as a judged one")
        self.save_state()

    def fingerprint(self, sha: str) -> str:
        return fingerprint(self.st["repo"], sha, self.cset) if self.cset else ""

    def same_sources_as(self, fp: str) -> tuple[str, str] | None:
        """(verdict, commit) of a judged commit that compiles the same sources, when skipping
        such commits is on."""
        return self.known.get(fp) if fp and self.st["skip_identical"] else None

    # ---- the endpoints -----------------------------------------------------------------------

    def endpoints(self) -> Ending | None:
        """Measures old against new until the change is established; an Ending when it is not
        (or when nothing compiled differs)."""
        st = self.st
        old, new = st["old"], st["new"]
        done = self.recorded("endpoints")
        if done:
            rec = done[0]
        else:
            self.learn_compiled(old, new)
            fo, fn = self.fingerprint(old), self.fingerprint(new)
            if fo and fo == fn and st["skip_identical"]:
                raise Refused(f"old {old[:12]} and new {new[:12]} compile identical sources "
                               "(the files their builds read hash alike): no commit between "
                               "them changes the compiled code, so the difference does not "
                               "come from it. --no-skip-identical measures every commit anyway")
            self.say(f"measuring old {old[:12]} and new {new[:12]} in interleaved rounds")

            def settled(v: dict[str, list[float]]) -> bool:
                return judge.check_change(v[old], v[new], sign=self.sign(),
                                          threshold=st["threshold"]).state != judge.UNDECIDED

            values, out = self.series("endpoints", [old, new], self.budget(), settled)
            check = judge.check_change(values[old], values[new], sign=self.sign(),
                                       threshold=st["threshold"])
            rec = {"kind": "endpoints", "old": old, "new": new, "state": check.state,
                   "rounds": out.rounds, "stopped_by": out.why,
                   **recorded_values({"old": values[old], "new": values[new]}),
                   "change": ivjson(check.interval), "fingerprints": {old: fo, new: fn}}
            self.record(rec)
        for sha, label in ((old, "old"), (new, "new")):
            fp = rec["fingerprints"].get(sha)
            if fp:
                self.known[fp] = (label, sha)
        return self.endpoint_ending(rec)

    def sign(self) -> int:
        """+1 or -1: see bisect_judge. Known once the first run has named the metric."""
        return judge.want_sign(self.st["find"], self.st["better"] == "higher")

    def endpoint_ending(self, rec: dict[str, Any]) -> Ending | None:
        state = rec["state"]
        if state == judge.ESTABLISHED:
            return None
        m = self.metric()
        est, lo, hi = rec["change"]
        shown = f"new/old {est:.3f} [{lo:.3f}, {hi:.3f}]" if lo else f"new/old {est:.3f}"
        n = min(len(rec["values"]["old"]), len(rec["values"]["new"]))
        find = self.st["find"]
        if state == judge.UNDECIDED:
            got = record_samples(rec)
            spread = placement.spread(list(got.values()))[0]
            noise = ("the code placement effect" if spread > self.st["threshold"]
                     else "the noise")
            return Ending(EXIT_UNDECIDED,
                          f"could not decide between old {rec['old'][:12]} and new "
                          f"{rec['new'][:12]}: the change is within {noise} at n={n} "
                          f"({shown}; {placement.spread_text(list(got.values()))}); nothing "
                          "was bisected")
        other = "faster" if find == "slower" else "slower"
        word = m.better_word if find == "slower" else m.worse_word
        if state == judge.OPPOSITE:
            raise Refused(f"old -> new is not {find} but {word} ({m.path}, {shown}, n={n}): "
                           f"to find that change, --find {other}")
        raise Refused(f"old -> new is not a change of {self.st['threshold'] * 100:g}% or more "
                       f"({m.path}, {shown}, n={n}): nothing to bisect")

    def metric(self) -> metrics.Metric:
        return metrics.Metric(self.st["metric"], self.st["unit"], self.st["better"])

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
        out = git(self.st["repo"], "rev-list", "--bisect-all", self.new_ref, "--not",
                  *self.olds).stdout
        return [line.split()[0] for line in out.splitlines() if line.strip()]

    def replay(self) -> Ending | None:
        """Takes the verdicts of the recorded steps; an Ending when one of them ended the
        search."""
        for rec in self.recorded("step"):
            if rec["verdict"] == judge.UNCERTAIN:
                return self.undecided_ending(rec)
            self.mark(rec["verdict"], rec["commit"])
            if rec.get("fingerprint"):
                self.known.setdefault(rec["fingerprint"], (rec["verdict"], rec["commit"]))
        return None

    def steps(self) -> Ending | str:
        """Bisects until the first new commit is known (returned) or the search ends."""
        st = self.st
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
            n = len(self.recorded("step")) + 1
            about = n - 1 + max(1, math.ceil(math.log2(len(testable) + 1)))
            subject = git(st["repo"], "log", "-1", "--format=%s", sha).stdout.strip()
            self.say(f"step {n} of about {about}: {sha[:12]} {subject[:60]} "
                     f"({len(cands)} commits left)")
            rec = self.step(n, sha)
            self.record(rec)
            self.report_step(rec)
            if rec["verdict"] == judge.UNCERTAIN:
                return self.undecided_ending(rec)
            self.mark(rec["verdict"], sha)

    def step(self, n: int, sha: str) -> dict[str, Any]:
        st = self.st
        old, new = st["old"], st["new"]
        rec: dict[str, Any] = {"kind": "step", "step": n, "commit": sha}
        fp = self.fingerprint(sha)
        rec["fingerprint"] = fp
        same = self.same_sources_as(fp)
        if same:
            verdict, like = same
            rec.update(verdict=verdict, how="same sources", same_as=like)
            return rec
        try:
            self.ws.build(sha)
            self.count("builds", 1)
        except BuildError as e:
            rec.update(verdict="skip", how="does not build",
                       why=str(e).replace(self.dir + os.sep, ""))
            if fp:
                self.known[fp] = ("skip", sha)
            return rec
        self.built(old)
        self.built(new)
        t = time.monotonic()
        try:
            values, out = self.series(f"step{n}", [old, new, sha], self.budget(),
                                      lambda v: judge.classify(v[old], v[new], v[sha]).settled,
                                      under_test=sha)
        except CommitCannotRun as e:
            rec.update(verdict="skip", how="does not run", why=str(e))
            return rec
        call = judge.classify(values[old], values[new], values[sha])
        rec.update(verdict=call.verdict, how="measured", rounds=out.rounds, stopped_by=out.why,
                   narrow=call.narrow, seconds=round(time.monotonic() - t, 3),
                   **recorded_values({"old": values[old], "new": values[new],
                                      "this": values[sha]}),
                   to_old=ivjson(call.to_old), to_new=ivjson(call.to_new),
                   change=ivjson(call.change), position=call.position)
        if fp and call.verdict != judge.UNCERTAIN:
            self.known[fp] = (call.verdict, sha)
        return rec

    def report_step(self, rec: dict[str, Any]) -> None:
        self.say(step_line(rec))

    def undecided_ending(self, rec: dict[str, Any]) -> Ending:
        a, b = self.newest_old(), self.new_ref
        n = min(len(v) for v in rec["values"].values())
        pos = rec.get("position")
        where = (f"it sits {pos * 100:.0f}% of the way from old to new"
                 if isinstance(pos, float) and math.isfinite(pos) else "")
        if rec.get("narrow"):
            why = (f"{rec['commit'][:12]} measures between them ({where}, n={n}): the change "
                   "may be spread over several commits")
        else:
            why = (f"the change is within the noise at n={n} (step {rec['step']}, "
                   f"{rec['commit'][:12]}" + (f": {where}" if where else "") + ")")
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
        judged = {r["commit"]: r for r in self.recorded("step")}
        sensitive = [s for s in (a, b) if judged.get(s, {}).get("how") == "measured"]
        if not sensitive:
            return ""
        lo = self.st["old"] if a in sensitive else a
        hi = self.st["new"] if b in sensitive else b
        return ("; placement-sensitive: " + ", ".join(
            f"step {judged[s]['step']} ({s[:12]} like {judged[s]['verdict']})" for s in sensitive)
            + f" was judged on one link per commit (--layouts 1) and may be a code-placement "
              f"effect; if so the first new commit is in {lo[:12]}..{hi[:12]}")

    def newest_old(self) -> str:
        """Of the commits known to be like old, the one with the most history."""
        depth = {s: int(git(self.st["repo"], "rev-list", "--count", s).stdout.strip() or 0)
                 for s in self.olds}
        return max(self.olds, key=lambda s: depth[s])

    # ---- the confirmation --------------------------------------------------------------------

    def confirmation(self, blamed: str) -> dict[str, Any]:
        done = self.recorded("confirm")
        if done:
            return done[0]
        st = self.st
        old, new = st["old"], st["new"]
        parent = git(st["repo"], "rev-parse", f"{blamed}^").stdout.strip()
        same = bool(self.cset) and self.fingerprint(parent) == self.fingerprint(blamed)
        rec: dict[str, Any] = {"kind": "confirm", "blamed": blamed, "parent": parent,
                               "same_sources": same}
        for sha in (parent, blamed):
            if sha not in self.ws.built:
                self.say(f"building {sha[:12]} for the confirmation")
                try:
                    self.ws.build(sha)
                    self.count("builds", 1)
                except BuildError as e:
                    rec.update(reasons=[f"{sha[:12]} does not build: {e}"])
                    self.record(rec)
                    return rec
        self.built(old)
        self.built(new)
        # More rounds than any step took, fixed before a value is seen: p stays a p-value.
        n = 2 * max([st["repeats"]] + [r.get("rounds", 0) for r in self.records])
        self.say(f"confirming {blamed[:12]} against its parent {parent[:12]}: {n} rounds "
                 "with old and new")
        values, out = self.series("confirm", [parent, blamed, old, new], self.budget(n),
                                  lambda v: True)
        c = judge.confirm(values[parent], values[blamed], values[old], values[new],
                          sign=self.sign(), alpha=st["alpha"], same_sources=same)
        rec.update(rounds=out.rounds, **recorded_values({"parent": values[parent],
                                                         "blamed": values[blamed],
                                                         "old": values[old], "new": values[new]}),
                   ratio=ivjson(c.ratio), p=c.p, change=ivjson(c.change),
                   explained=c.explained if math.isfinite(c.explained) else None,
                   reasons=list(c.reasons))
        self.witness(rec, parent, blamed)
        self.record(rec)
        return rec

    def witness(self, rec: dict[str, Any], parent: str, blamed: str) -> None:
        """Instruction counts of parent and blamed (bisect_witness). Time says changed but the
        instructions are the same: a code-placement effect, not confirmed."""
        st = self.st
        if st.get("mode") == "kvbench" and not st["plan"].get("instructions") and \
                st["plan"].get("micro"):
            self.say(f"counting instructions of {parent[:12]} and {blamed[:12]} (callgrind)")
        w, why = bisect_witness.witness(st, self.ws.trees, parent, blamed)
        if w is None:
            if why:
                rec["instructions_note"] = why
            return
        rec["instructions"] = {"parent": w.parent, "blamed": w.blamed, "preset": w.preset,
                               "text": w.text()}
        if w.same and not rec["reasons"]:
            rec["placement_effect"] = True
            rec["reasons"].append(f"a code-placement effect: time differs but the "
                                  f"{w.text()}")
