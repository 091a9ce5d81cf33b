"""The records of kvb bisect's finished series: the endpoints, each step, the confirmation. Each
is a line of steps.jsonl, written when its series ends, and an entry of bisect.json's "records";
--resume replays them, and kvb report reads them as dicts (pages/compare_figures). Schema 3 added
keys beside those of 1 and 2 (`round_of`, `disturbed`, `unit`, `witness`, `instructions`,
`spent`: spent.py's one shape, the keys of before read back); a record without them reads back
as before: value i measured in round i + 1, decided by time. Schema 4 added the step of several
candidates (MultiStep, kind "multistep": one series, a Step per candidate) and a step's `note`
(why instructions were not its witness).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

from kvbtools.core import levels
from kvbtools.core.errors import UsageError
from kvbtools.measure.bisect.witness import Witness
from kvbtools.measure.spent import Spent
from kvbtools.core.stats import Interval

IvJson = list  # a recorded interval: [estimate, lo, hi], lo and hi None when unbounded


def ivjson(iv: Interval) -> IvJson:
    return [iv.estimate, iv.lo if iv.finite else None, iv.hi if iv.finite else None]


def iv_text(x: IvJson | None) -> str:
    """A recorded [estimate, lo, hi] as '0.770 [0.752, 0.781]'."""
    if not x:
        return "-"
    est, lo, hi = x
    return f"{est:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None else f"{est:.3f} [unbounded]"


@dataclass
class Measured:
    """The values of one series by role (old and new; and this, or parent and blamed), each
    with the layout seed and the round that measured it; `seeds` None for values recorded
    before layouts existed (one placement), `rounds` None before schema 3 (value i in round
    i + 1). `disturbed`: rounds whose canary moved, kept here but set apart from the verdicts."""
    values: dict[str, list[float]]
    seeds: dict[str, list[int]] | None = None
    rounds: dict[str, list[int]] | None = None
    disturbed: list[int] = field(default_factory=list)

    def round_of(self, role: str) -> list[int]:
        got = (self.rounds or {}).get(role)
        return list(got) if got is not None else list(range(1, len(self.values[role]) + 1))

    def seed_of(self, role: str) -> list[int]:
        got = (self.seeds or {}).get(role)
        return list(got) if got is not None else [0] * len(self.values[role])

    def levels(self, disturbed: bool = False) -> dict[str, levels.Sample]:
        """By role, as core/levels judges them: one process per round, each on its link (the
        role's: two commits' links are two placements, which levels trims as such), the
        disturbed rounds left out unless `disturbed` (the placement spread takes every value)."""
        out = {}
        for k, v in self.values.items():
            rounds, seeds = self.round_of(k), self.seed_of(k)
            keep = [i for i in range(len(v)) if disturbed or rounds[i] not in self.disturbed]
            out[k] = levels.Sample.rounds([v[i] for i in keep], [rounds[i] for i in keep],
                                          [f"{k} seed {seeds[i]}" for i in keep])
        return out

    def view(self, roles: dict[str, str]) -> "Measured":
        """The values of some roles under other names (new name -> role here), in the rounds
        that measured every one of them: one candidate's series out of a step of several, as
        role `this` (on a cluster, the rounds of its node: each candidate has rounds of its
        own, multistep.py)."""
        picked = [r for r in dict.fromkeys(roles.values()) if r in self.values]
        common = set.intersection(*(set(self.round_of(r)) for r in picked)) if picked \
            else set()
        keep = {r: [i for i, x in enumerate(self.round_of(r)) if x in common] for r in picked}

        def pick(d: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
            return None if d is None else {k: [d[r][i] for i in keep[r]]
                                           for k, r in roles.items() if r in d and r in keep}
        return Measured(pick(self.values) or {}, pick(self.seeds), pick(self.rounds),
                        list(self.disturbed))

    def joined(self, more: "Measured") -> "Measured":
        """These values and `more`'s, measured after them: its rounds renumbered after the
        last of these (a series measured on, with the same roles)."""
        last = max((r for k in self.values for r in self.round_of(k)), default=0)
        roles = [k for k in self.values if k in more.values]
        return Measured({k: self.values[k] + more.values[k] for k in roles},
                        {k: self.seed_of(k) + more.seed_of(k) for k in roles},
                        {k: self.round_of(k) + [r + last for r in more.round_of(k)]
                         for k in roles},
                        self.disturbed + [r + last for r in more.disturbed])

    @property
    def n(self) -> int:
        """Values of the role with the fewest."""
        return min(len(v) for v in self.values.values())

    @property
    def links(self) -> int:
        """Links (layout seeds) the series ran."""
        return len({s for k in self.values for s in self.seed_of(k)})

    def to_json(self) -> dict[str, Any]:
        return ({"values": self.values}
                | ({"seeds": self.seeds} if self.seeds is not None else {})
                | ({"round_of": self.rounds} if self.rounds is not None else {})
                | ({"disturbed": self.disturbed} if self.disturbed else {}))

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Measured":
        return Measured(d["values"], d.get("seeds"), d.get("round_of"),
                        list(d.get("disturbed") or []))


TIME, INSTRUCTIONS = "time", "instructions"   # the witness that decided a verdict



class _WithSeries:
    """A step's, a step of several's or the confirmation's: its series (None when it was not
    measured)."""
    series: Any

    @property
    def measured(self) -> Measured | None:
        return self.series.measured if self.series else None

    @property
    def rounds_taken(self) -> int:
        return self.series.rounds if self.series else 0


@dataclass
class Endpoints:
    """old against new: is old -> new the change looked for (judge.check_change)?"""
    old: str
    new: str
    state: str                  # judge.py: ESTABLISHED, SAME, OPPOSITE or UNDECIDED
    rounds: int
    stopped_by: str             # measure/loop.py: settled, max rounds, max time, fixed
    measured: Measured          # roles old, new
    change: IvJson              # new / old
    fingerprints: dict[str, str]   # commit -> fingerprint of its compiled sources ("": none)
    unit: str = ""              # what the verdict rested on (core/levels), "" before schema 3
    spent: Spent | None = None
    witness: str = TIME         # TIME, or INSTRUCTIONS when the counts decided
    counts: dict[str, float] | None = None   # instructions by role (old, new)

    @property
    def rounds_taken(self) -> int:
        return self.rounds

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": self.old, "new": self.new}

    def to_json(self) -> dict[str, Any]:
        return {"kind": "endpoints", "old": self.old, "new": self.new, "state": self.state,
                "rounds": self.rounds, "stopped_by": self.stopped_by, **self.measured.to_json(),
                "change": self.change, "fingerprints": self.fingerprints,
                **_extra(self.unit, self.spent, self.witness, self.counts)}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Endpoints":
        return Endpoints(d["old"], d["new"], d["state"], d["rounds"], d["stopped_by"],
                         Measured.from_json(d), d["change"], d["fingerprints"],
                         d.get("unit", ""), Spent.from_json(d.get("spent")),
                         d.get("witness", TIME), d.get("instructions"))



def _extra(unit: str, spent: Spent | None, witness: str, counts: dict[str, float] | None
           ) -> dict[str, Any]:
    """The keys schema 3 added, where they have a value (a record of before reads back and
    writes as it was: no unit, decided by time)."""
    return (({"unit": unit} if unit else {}) | ({"spent": spent.to_json()} if spent else {})
            | ({"witness": witness} if unit or witness != TIME else {})
            | ({"instructions": counts} if counts else {}))


@dataclass
class StepSeries:
    """A measured step's series and its classification (judge.classify)."""
    rounds: int
    stopped_by: str
    narrow: bool                # uncertain with intervals too narrow for more rounds to help
    seconds: float
    measured: Measured          # roles old, new, this
    to_old: IvJson              # this / old
    to_new: IvJson              # this / new
    change: IvJson              # new / old in the same rounds
    position: float             # 0 like old, 1 like new (NaN: unknown)
    unit: str = ""              # what the verdicts rested on (core/levels)
    rule: str = ""              # how time judged it (judge.py: CLEAR, HALFWAY, "")
    spent: Spent | None = None

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "stopped_by": self.stopped_by, "narrow": self.narrow,
                "seconds": self.seconds, **self.measured.to_json(), "to_old": self.to_old,
                "to_new": self.to_new, "change": self.change, "position": self.position,
                **({"unit": self.unit} if self.unit else {}),
                **({"rule": self.rule} if self.rule else {}),
                **({"spent": self.spent.to_json()} if self.spent else {})}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "StepSeries":
        return StepSeries(d["rounds"], d["stopped_by"], d["narrow"], d["seconds"],
                          Measured.from_json(d), d["to_old"], d["to_new"], d["change"],
                          d["position"], d.get("unit", ""), d.get("rule", ""),
                          Spent.from_json(d.get("spent")))


MEASURED, SAME_SOURCES, COUNTED = "measured", "same sources", "counted"


@dataclass
class Step(_WithSeries):
    """One commit judged: by its series (how MEASURED; decided by time, or by instruction counts
    when time could not), by counts alone (COUNTED: --witness instructions, or a search whose
    ends only the counts told apart), by the verdict of a commit that compiles the same sources
    (SAME_SOURCES, `same_as`), or skipped ("skip": how is "does not build" or "does not run",
    `why`)."""
    step: int
    commit: str
    fingerprint: str            # of its compiled sources; "" when unknown
    verdict: str                # judge.py OLD, NEW, UNCERTAIN, or "skip"
    how: str
    same_as: str = ""
    why: str = ""
    series: StepSeries | None = None   # how == MEASURED
    witness: str = TIME         # what decided: TIME, or INSTRUCTIONS (when time could not)
    counts: dict[str, float] | None = None   # instructions by role (old, new, this)
    ends: tuple[str, str] | None = None      # --all-steps: the old and new of its range
    note: str = ""              # why the instruction counts were not its witness

    @property
    def position(self) -> float:
        """0 like old, 1 like new: by the counts when they decided, else by time."""
        c = self.counts
        if self.witness == INSTRUCTIONS and c and c["new"] != c["old"] and \
                min(c.values()) > 0:
            return math.log(c["this"] / c["old"]) / math.log(c["new"] / c["old"])
        return self.series.position if self.series else math.nan

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": old, "new": new, "this": self.commit}

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "step", "step": self.step, "commit": self.commit,
                             "fingerprint": self.fingerprint, "verdict": self.verdict,
                             "how": self.how}
        if self.ends is not None:
            d["old"], d["new"] = self.ends
        if self.how == SAME_SOURCES:
            d["same_as"] = self.same_as
        elif self.series is not None:
            d.update(self.series.to_json())
        elif self.why:
            d["why"] = self.why
        if self.witness != TIME or (self.series is not None and self.series.unit):
            d["witness"] = self.witness
        if self.counts:
            d["instructions"] = self.counts
        if self.note:
            d["note"] = self.note
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Step":
        ends = (d["old"], d["new"]) if "old" in d else None
        return Step(d["step"], d["commit"], d.get("fingerprint", ""), d["verdict"], d["how"],
                    d.get("same_as", ""), d.get("why", ""),
                    StepSeries.from_json(d) if "to_old" in d else None,
                    d.get("witness", TIME), d.get("instructions"), ends, d.get("note", ""))


# The keys of a multistep record that are its one series', not a candidate's.
_SHARED = ("rounds", "stopped_by", "seconds", "values", "seeds", "round_of", "disturbed",
           "change", "unit", "spent", "kind", "old", "new")


@dataclass
class MultiStep(_WithSeries):
    """A step of several candidates (multisection, docs/compare.md): one series measures old,
    new and each candidate measured (role c1, c2, ...) in the same rounds, and each candidate is
    a Step of its own (its verdict, how, witness), its series the view of the shared one with its
    role as `this`. A candidate that took a verdict without a run has no role ("")."""
    step: int
    steps: list[Step]
    roles_of: list[str]                 # each candidate's role in the series, "" when none
    series: StepSeries | None = None    # the shared series (its to_old ... of no candidate)
    ends: tuple[str, str] | None = None
    # On a cluster: the node(s) each candidate's kept rounds ran on, by role (each candidate
    # measured with old and new on a node of its own, in rounds of its own); {} here.
    nodes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def variants(self) -> int:
        """Commits a round of its series runs: old, new and the candidates measured."""
        return 2 + sum(1 for r in self.roles_of if r)

    @property
    def paced(self) -> int:
        """Commits its measuring is paced as, against a step of one's three: a round of every
        variant here; on a cluster a node's round of three, as many times as the candidates
        took turns on the nodes."""
        if not self.nodes:
            return self.variants
        hosts = len({n for ns in self.nodes.values() for n in ns})
        return 3 * math.ceil((self.variants - 2) / max(1, hosts))

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": old, "new": new} | {r: s.commit for r, s in zip(self.roles_of, self.steps)
                                           if r}

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "multistep", "step": self.step, "k": len(self.steps)}
        if self.ends is not None:
            d["old"], d["new"] = self.ends
        if self.series is not None:
            whole = self.series.to_json()
            d.update({k: v for k, v in whole.items() if k in _SHARED})
        if self.nodes:
            d["nodes"] = self.nodes
        d["candidates"] = [{"role": r} | {k: v for k, v in s.to_json().items()
                                          if k not in _SHARED}
                           for r, s in zip(self.roles_of, self.steps)]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "MultiStep":
        shared = {k: v for k, v in d.items() if k in _SHARED and k != "kind"}
        series = None
        if "values" in d:
            series = StepSeries.from_json(dict(shared, narrow=False, to_old=None, to_new=None,
                                               position=math.nan))
        steps, roles = [], []
        for c in d["candidates"]:
            role = c.get("role", "")
            one = dict(c)
            if role and series is not None and "to_old" in c:
                view = series.measured.view({"old": "old", "new": "new", "this": role})
                one.update({k: v for k, v in shared.items()
                            if k not in ("values", "seeds", "round_of", "disturbed")}
                           | view.to_json())
            one.setdefault("step", d["step"])
            steps.append(Step.from_json(one))
            roles.append(role)
        return MultiStep(d["step"], steps, roles, series,
                         (d["old"], d["new"]) if "old" in d else None,
                         {k: list(v) for k, v in (d.get("nodes") or {}).items()})


@dataclass
class ConfirmSeries:
    """The confirmation's series and its test (judge.confirm)."""
    rounds: int
    measured: Measured          # roles parent, blamed, old, new
    ratio: IvJson               # blamed / parent
    p: float
    change: IvJson              # new / old in the same rounds
    explained: float | None     # the share of old -> new; None when it cannot be said
    before: float | None = None   # the share of old -> new in old..parent
    unit: str = ""
    spent: Spent | None = None

    @property
    def after(self) -> float | None:
        """The share of old -> new in blamed..new."""
        if self.explained is None or self.before is None:
            return None
        return 1.0 - self.before - self.explained

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, **self.measured.to_json(), "ratio": self.ratio,
                "p": self.p, "change": self.change, "explained": self.explained,
                **({"before": self.before} if self.before is not None else {}),
                **({"unit": self.unit} if self.unit else {}),
                **({"spent": self.spent.to_json()} if self.spent else {})}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "ConfirmSeries":
        return ConfirmSeries(d["rounds"], Measured.from_json(d), d["ratio"], d["p"],
                             d["change"], d.get("explained"), d.get("before"),
                             d.get("unit", ""), Spent.from_json(d.get("spent")))


@dataclass
class Confirm(_WithSeries):
    """The first new commit against its parent. Confirmed when `reasons` is empty."""
    blamed: str
    parent: str
    same_sources: bool          # parent and blamed compile the same sources
    reasons: list[str] = field(default_factory=list)   # why not confirmed
    series: ConfirmSeries | None = None   # None: parent or blamed did not build
    witness: Witness | None = None        # instruction counts (witness.py)
    witness_note: str = ""                # why there are none, where they apply
    placement_effect: bool = False        # time differs, instructions do not
    witness_decided: bool = False         # time could not tell it from its parent; the counts did

    @property
    def confirmed(self) -> bool:
        return not self.reasons

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": old, "new": new, "parent": self.parent, "blamed": self.blamed}

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "confirm", "blamed": self.blamed, "parent": self.parent,
                             "same_sources": self.same_sources}
        if self.series is not None:
            d.update(self.series.to_json())
        d["reasons"] = self.reasons
        if self.witness_note:
            d["instructions_note"] = self.witness_note
        if self.witness is not None:
            w = self.witness
            d["instructions"] = {"parent": w.parent, "blamed": w.blamed, "preset": w.preset,
                                 "text": w.text()}
        if self.placement_effect:
            d["placement_effect"] = True
        if self.witness_decided:
            d["decided_by"] = INSTRUCTIONS
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Confirm":
        w = d.get("instructions")
        return Confirm(d["blamed"], d["parent"], d["same_sources"], list(d["reasons"]),
                       ConfirmSeries.from_json(d) if "ratio" in d else None,
                       Witness(w["parent"], w["blamed"], w["preset"]) if w else None,
                       d.get("instructions_note", ""), bool(d.get("placement_effect")),
                       d.get("decided_by") == INSTRUCTIONS)


Record = Union[Endpoints, Step, MultiStep, Confirm]
_KINDS = {"endpoints": Endpoints.from_json, "step": Step.from_json,
          "multistep": MultiStep.from_json, "confirm": Confirm.from_json}


def from_json(d: Any, where: str) -> Record:
    """A line of steps.jsonl; UsageError naming `where` when it is not a bisect's record."""
    try:
        return _KINDS[d["kind"]](d)
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{where}: not a kvb bisect record: {type(e).__name__} {e}") from None
