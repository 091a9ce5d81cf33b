"""kvb bisect over its ranges: the culprit of old -> new, and with --all-steps every step.

The search of old -> new (bisect_search.Search) follows the change to the commit where it crosses
halfway and confirms it against its parent; the confirmation measures old, new, the parent and
the culprit in the same rounds, so it also tells how much of the change lies before the culprit
(old -> parent) and after it (culprit -> new). With --all-steps each of those ranges whose ends
differ by the threshold or more in the direction looked for is searched the same way, its own
ends measured again first, until no range left holds such a step (as Chromium's Pinpoint
reports every culprit with its effect). Each range's records follow its endpoints record in
steps.jsonl, so --resume replays them range by range.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from kvbtools.core import host
from kvbtools.core.errors import EXIT_UNDECIDED
from kvbtools.core.host import ROOT
from kvbtools.measure import bisect_judge as judge
from kvbtools.measure import pinning
from kvbtools.measure.runner import progress
from kvbtools.measure.bisect_records import Confirm, Endpoints, Record, Step
from kvbtools.measure.bisect_search import Ending, Search
from kvbtools.measure.bisect_state import KvbenchMode, State
from kvbtools.measure.bisect_trees import Workspace


@dataclass
class Found:
    """The outcome of one range's search."""
    search: Search
    ending: Ending
    blamed: str = ""
    conf: Confirm | None = None


@dataclass
class Ranges:
    """Every range searched in this bisect; the first is old -> new."""
    state: State
    records: list[Record]
    ws: Workspace = field(init=False)
    done: list[Found] = field(default_factory=list)
    pin_text: str = ""          # the CPU and the canary, as the report says them

    def __post_init__(self) -> None:
        s = self.state.settings
        self.ws = Workspace(s.repo, self.state.dir, self.state.mode, s.layouts)
        self._segments = _segments(self.records)
        self.canary: Callable[[], float | None] | None = None
        self.canaries = pinning.Canaries()
        self.current: Search | None = None
        self.pinned = False

    def pin(self) -> str:
        """Chooses the CPU every run of the bisect is pinned to (once; a resumed bisect keeps
        its own), and the canary each round runs on it: the binary the bisect measures (its
        first built commit's, which has --canary), else this tree's kvbench build (a generic
        bisect's command is the user's); returns what was chosen, for the progress line."""
        st = self.state
        # kvbench's KV runs are timed by the wall clock: a thread sharing the CPU slows them,
        # and the canary's wall clock shows it. Micro and generic bisects still read the best
        # window (their lz4 runs were measured so); kvb matrix reads the wall clock for all.
        by_wall = isinstance(st.mode, KvbenchMode) and not st.mode.plan.micro
        cpus = pinning.allowed_cpus()
        candidates = [self.ws.canary_binary(),
                      os.path.join(ROOT, "build", host.native_preset(), "src", "kvbench")]
        binary, first = pinning.find_canary(candidates, cpus[0] if cpus else None)
        got = [first] if first else []
        got += [r for r in (pinning.canary(binary, c) for c in cpus[1:]) if r] if binary else []
        if st.cpu is None or st.cpu not in cpus:
            if got and len(got) == len(cpus):
                st.cpu = pinning.choose_cpu(got, by_wall)
                shown = ", ".join(f"CPU {r.cpu} {r.value(by_wall):.3g} ns" for r in got)
                st.cpu_note = f"the fastest by the canary ({shown})"
            else:
                st.cpu = cpus[-1] if cpus else None
                st.cpu_note = "the last allowed CPU"
        if got and st.cpu is not None:
            cpu = st.cpu
            self.canary = lambda: (lambda r: r.value(by_wall) if r else None)(
                pinning.canary(binary, cpu))
            return (f"every run on CPU {st.cpu} ({st.cpu_note}); a canary ({binary} --canary) "
                    "before every round" + (", by its wall clock (KV rates are wall time)"
                                            if by_wall else ""))
        there = [c for c in candidates if c and os.path.isfile(c)]
        why = f"{' and '.join(there)} {'have' if len(there) > 1 else 'has'} no --canary" \
            if there else f"the measure command is the user's, and no kvbench build at " \
            f"{candidates[1]}"
        return (f"every run on CPU {st.cpu} ({st.cpu_note}); no canary ({why}): rounds are not "
                "checked for a CPU that changed speed" if st.cpu is not None else
                "no CPU to pin to (sched_getaffinity failed): runs are not pinned")

    def pin_once(self, search: Search) -> None:
        """Before `search`'s first series (its commits are built, so the binary it measures
        is there): the CPU and the canary, chosen once for the whole bisect."""
        if not self.pinned:
            self.pinned = True
            self.pin_text = self.pin()
            progress(self.pin_text)
        search.bench.canary = self.canary

    def cpu_text(self) -> str:
        """The CPU and the canary as the report says them: as pinned in this invocation, else
        as the state recorded them (no series ran in it)."""
        st = self.state
        return self.pin_text or (f"every run on CPU {st.cpu} ({st.cpu_note}); no round "
                                 "measured in this invocation" if st.cpu is not None else
                                 "no round measured in this invocation: nothing pinned")

    @property
    def main(self) -> Found:
        return self.done[0]

    def all_records(self) -> list[Record]:
        return [r for f in self.done for r in f.search.records]

    def steps_done(self) -> int:
        """Steps finished over every range, the one being searched included."""
        searches = [f.search for f in self.done]
        if self.current is not None and self.current not in searches:
            searches.append(self.current)
        return sum(len(x.recorded(Step)) for x in searches)

    def run(self) -> Found:
        """Searches old -> new, then (--all-steps) the ranges around each culprit."""
        s = self.state.settings
        queue = [(s.old, s.new)]
        while queue:
            lo, hi = queue.pop(0)
            recs = self._segments.pop(0) if self._segments and \
                _ends(self._segments[0]) == (lo, hi) else []
            search = Search(self.state, recs, self.ws, (lo, hi), 1 + self.steps_done())
            search.bench.canary, search.bench.canaries = self.canary, self.canaries
            search.before_series = lambda s=search: self.pin_once(s)
            self.current = search
            self.done.append(search_range(search))
            f = self.done[-1]
            if s.all_steps and f.conf is not None and (f.conf.confirmed or f is self.main):
                queue += around(search, f.conf)
        return self.main


def search_range(search: Search) -> Found:
    """How the search of one range ended, its culprit ("" when none) and its confirmation."""
    ending = search.endpoints() or search.replay()
    blamed = ""
    if ending is None:
        found = search.steps()
        if isinstance(found, Ending):
            ending = found
        else:
            blamed = found
    conf = search.confirmation(blamed) if blamed else None
    if conf is not None and conf.placement_effect:
        ending = Ending(EXIT_UNDECIDED, f"not confirmed: a code-placement effect: {blamed[:12]} "
                        "times differently from its parent but executes the same instructions")
    elif conf is not None:
        ending = Ending(0 if conf.confirmed else EXIT_UNDECIDED,
                        f"{'confirmed' if conf.confirmed else 'not confirmed'}: "
                        f"{blamed[:12]} is the first new commit{share_text(conf)}"
                        + ("" if conf.confirmed else "; " + "; ".join(conf.reasons)))
    assert ending is not None
    return Found(search, ending, blamed, conf)


def share_text(conf: Confirm) -> str:
    """' (explains 58%; 42% lies in a1b2..c3d4, before it)'."""
    cs = conf.series
    if cs is None or cs.explained is None:
        return ""
    out = f" (explains {cs.explained * 100:.0f}%"
    if cs.before is not None and abs(cs.before) >= 0.005:
        out += f"; {cs.before * 100:.0f}% lies in OLD..{conf.parent[:12]}, before it"
    after = cs.after
    if after is not None and abs(after) >= 0.005:
        out += f"; {after * 100:.0f}% in {conf.blamed[:12]}..NEW, after it"
    return out + ")"


def around(search: Search, conf: Confirm) -> list[tuple[str, str]]:
    """The ranges before and after the culprit whose ends differ, in the confirmation's rounds,
    by the threshold or more in the direction looked for."""
    if conf.series is None:
        return []
    v = conf.series.measured.levels()
    j = search.state.judgement
    out = []
    for a, b, lo, hi in (("old", "parent", search.old, conf.parent),
                         ("blamed", "new", conf.blamed, search.new)):
        if lo == hi:
            continue
        c = judge.check_change(v[a], v[b], sign=search.sign(), threshold=j.threshold)
        search.say(f"--all-steps: {lo[:12]}..{hi[:12]}: {b}/{a} {c.interval.estimate:.3f} "
                   f"[{c.interval.lo:.3f}, {c.interval.hi:.3f}] in the confirmation's rounds: "
                   + ("a step of the threshold or more, searched" if c.state != judge.SAME and
                      c.state != judge.OPPOSITE else "no step of the threshold"))
        if c.state not in (judge.SAME, judge.OPPOSITE):
            out.append((lo, hi))
    return out


def _segments(records: list[Record]) -> list[list[Record]]:
    """The records of each range: every range's start with its endpoints record."""
    out: list[list[Record]] = []
    for r in records:
        if isinstance(r, Endpoints) or not out:
            out.append([])
        out[-1].append(r)
    return out


def _ends(recs: list[Record]) -> tuple[str, str] | None:
    return (recs[0].old, recs[0].new) if recs and isinstance(recs[0], Endpoints) else None
