"""kvb bisect over its ranges: the culprit of old -> new, and with --all-steps every step.

The confirmation measures old, new, the parent and the culprit in the same rounds, so it tells how
much of the change lies before the culprit and after it; with --all-steps each of those ranges
whose ends differ by the threshold or more in the direction looked for is searched the same way
(its ends measured again first) until none is left, as Chromium's Pinpoint reports every
culprit. Each range's records follow its endpoints record in steps.jsonl; --resume replays them
range by range. The bisect's CPU and canary are chosen here, once.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field

from kvbtools.core.errors import EXIT_UNDECIDED
from kvbtools.measure import pinning
from kvbtools.measure.bisect import confirm, endpoints, judge, steps
from kvbtools.measure.bisect.records import Confirm, Endpoints, Record
from kvbtools.measure.bisect.search import Ending, Search
from kvbtools.measure.bisect.series import choose_pin
from kvbtools.measure.bisect.state import State
from kvbtools.measure.bisect.trees import Workspace
from kvbtools.measure.fleet import Fleet, arch
from kvbtools.core.output import progress


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
    on: Fleet | None = None      # --slurm: builds and rounds as jobs (measure/fleet.py)
    ws: Workspace = field(init=False)
    done: list[Found] = field(default_factory=list)

    def __post_init__(self) -> None:
        s = self.state.settings
        # On a cluster the workspace is in the results directory, which every node shares.
        self.ws = Workspace(s.repo, self.state.dir, self.state.mode, s.layouts, self.state.spend,
                            tempfile.mkdtemp(prefix="workspace.", dir=self.state.dir)
                            if self.on else "")
        if self.on:
            self.ws.launcher = self.on.build_wrap(arch(getattr(self.state.mode, "preset", "")),
                                                  self.ws.tmp, "bisect")
        self._segments = _segments(self.records)
        self.watch = pinning.Watch(pinning.Pin((), "", "not pinned"))
        self.current: Search | None = None
        self.pinned = False

    def pin(self) -> pinning.Pin:
        """Chooses the CPU every run of the bisect is pinned to, once (a resumed bisect keeps
        the one it chose), by --cpu as kvb matrix does, and the canary around every round
        (series.choose_pin)."""
        st = self.state
        cpu, given = st.settings.cpu, "--cpu"
        if st.cpu is not None and st.cpu in pinning.allowed_cpus():
            cpu, given = str(st.cpu), st.cpu_note or "chosen when the bisect started"
        pin = choose_pin(self.ws, cpu, given)
        st.cpu = pin.cpus[0] if pin.cpus else None
        st.cpu_note = pin.chosen
        self.watch = pinning.Watch(pin)
        return pin

    def pin_once(self, search: Search) -> None:
        """Before `search`'s first series (its commits are built, so the binary it measures
        is there): the CPU and the canary, chosen once for the whole bisect; on a cluster, by
        each node, once (measure/fleet.py)."""
        search.fleet = self.on
        if self.on is not None:
            self.pinned = True
            self.watch = pinning.Watch(pinning.Pin((), "", f"chosen on each node (--cpu "
                                                           f"{self.state.settings.cpu})"))
        elif not self.pinned:
            self.pinned = True
            progress(self.pin().text)
        search.canary, search.pin = self.watch, self.watch.pin

    def cpu_text(self) -> str:
        """The CPU and the canary as the report says them: as pinned in this invocation, else
        as the state recorded them (no series ran in it)."""
        st = self.state
        if self.on is not None and self.on.nodes:
            return self.on.pin_text()
        return self.watch.pin.text if self.pinned else (
            f"every run on CPU {st.cpu} ({st.cpu_note}); no round measured in this invocation"
            if st.cpu is not None else "no round measured in this invocation: nothing pinned")

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
        return sum(x.step_count() for x in searches)

    def run(self) -> Found:
        """Searches old -> new, then (--all-steps) the ranges around each culprit."""
        s = self.state.settings
        queue = [(s.old, s.new)]
        while queue:
            lo, hi = queue.pop(0)
            recs = self._segments.pop(0) if self._segments and \
                _ends(self._segments[0]) == (lo, hi) else []
            search = Search(self.state, recs, self.ws, (lo, hi), 1 + self.steps_done())
            search.before_series = lambda s=search: self.pin_once(s)
            self.current = search
            self.done.append(search_range(search))
            f = self.done[-1]
            if s.all_steps and f.conf is not None and (f.conf.confirmed or f is self.main):
                queue += around(search, f.conf)
        return self.main


def search_range(search: Search) -> Found:
    """How the search of one range ended, its culprit ("" when none) and its confirmation."""
    ending = endpoints.endpoints(search) or steps.replay(search)
    blamed = ""
    if ending is None:
        found = steps.steps(search)
        if isinstance(found, Ending):
            ending = found
        else:
            blamed = found
    conf = confirm.confirmation(search, blamed) if blamed else None
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
