"""The records of kvb bisect's finished series: the endpoints, each step, the confirmation.

Each is one line of steps.jsonl, written when its series ends, and one entry of bisect.json's
"records"; --resume reads them back and replays them. Their JSON is the same since schema 1 of
state.json (kvb report reads them as plain dicts too: pages/compare_figures.tested_commits), so
to_json writes exactly the keys, in the order, that the record has always had.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from kvbtools.core.errors import UsageError
from kvbtools.measure import placement
from kvbtools.measure.bisect_witness import Witness
from kvbtools.measure.rounds import Interval

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
    with the layout seed of its round; `seeds` None for values recorded before layouts
    existed (one placement)."""
    values: dict[str, list[float]]
    seeds: dict[str, list[int]] | None = None

    @staticmethod
    def of(samples: dict[str, placement.Sample]) -> "Measured":
        return Measured({k: list(v.values) for k, v in samples.items()},
                        {k: list(v.seeds) for k, v in samples.items()})

    def samples(self) -> dict[str, placement.Sample]:
        seeds = self.seeds or {}
        return {k: placement.sample(v, seeds.get(k)) for k, v in self.values.items()}

    @property
    def n(self) -> int:
        """Values of the role with the fewest."""
        return min(len(v) for v in self.values.values())

    def to_json(self) -> dict[str, Any]:
        return {"values": self.values} | ({"seeds": self.seeds} if self.seeds is not None
                                          else {})

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Measured":
        return Measured(d["values"], d.get("seeds"))


@dataclass
class Endpoints:
    """old against new: is old -> new the change looked for (bisect_judge.check_change)?"""
    old: str
    new: str
    state: str                  # bisect_judge: ESTABLISHED, SAME, OPPOSITE or UNDECIDED
    rounds: int
    stopped_by: str             # rounds.Outcome.why
    measured: Measured          # roles old, new
    change: IvJson              # new / old
    fingerprints: dict[str, str]   # commit -> fingerprint of its compiled sources ("": none)

    @property
    def rounds_taken(self) -> int:
        return self.rounds

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": self.old, "new": self.new}

    def to_json(self) -> dict[str, Any]:
        return {"kind": "endpoints", "old": self.old, "new": self.new, "state": self.state,
                "rounds": self.rounds, "stopped_by": self.stopped_by, **self.measured.to_json(),
                "change": self.change, "fingerprints": self.fingerprints}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Endpoints":
        return Endpoints(d["old"], d["new"], d["state"], d["rounds"], d["stopped_by"],
                         Measured.from_json(d), d["change"], d["fingerprints"])


@dataclass
class StepSeries:
    """A measured step's series and its classification (bisect_judge.classify)."""
    rounds: int
    stopped_by: str
    narrow: bool                # uncertain with intervals too narrow for more rounds to help
    seconds: float
    measured: Measured          # roles old, new, this
    to_old: IvJson              # this / old
    to_new: IvJson              # this / new
    change: IvJson              # new / old in the same rounds
    position: float             # 0 like old, 1 like new (NaN: unknown)

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "stopped_by": self.stopped_by, "narrow": self.narrow,
                "seconds": self.seconds, **self.measured.to_json(), "to_old": self.to_old,
                "to_new": self.to_new, "change": self.change, "position": self.position}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "StepSeries":
        return StepSeries(d["rounds"], d["stopped_by"], d["narrow"], d["seconds"],
                          Measured.from_json(d), d["to_old"], d["to_new"], d["change"],
                          d["position"])


MEASURED, SAME_SOURCES = "measured", "same sources"


@dataclass
class Step:
    """One commit judged: by its series (how MEASURED), by the verdict of a commit that
    compiles the same sources (SAME_SOURCES, `same_as`), or skipped ("skip": how is "does not
    build" or "does not run", `why`)."""
    step: int
    commit: str
    fingerprint: str            # of its compiled sources; "" when unknown
    verdict: str                # bisect_judge OLD, NEW, UNCERTAIN, or "skip"
    how: str
    same_as: str = ""
    why: str = ""
    series: StepSeries | None = None   # how == MEASURED

    @property
    def measured(self) -> Measured | None:
        return self.series.measured if self.series else None

    @property
    def rounds_taken(self) -> int:
        return self.series.rounds if self.series else 0

    def roles(self, old: str, new: str) -> dict[str, str]:
        return {"old": old, "new": new, "this": self.commit}

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": "step", "step": self.step, "commit": self.commit,
                             "fingerprint": self.fingerprint, "verdict": self.verdict,
                             "how": self.how}
        if self.how == SAME_SOURCES:
            d["same_as"] = self.same_as
        elif self.series is not None:
            d.update(self.series.to_json())
        else:
            d["why"] = self.why
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Step":
        return Step(d["step"], d["commit"], d.get("fingerprint", ""), d["verdict"], d["how"],
                    d.get("same_as", ""), d.get("why", ""),
                    StepSeries.from_json(d) if d["how"] == MEASURED else None)


@dataclass
class ConfirmSeries:
    """The confirmation's series and its test (bisect_judge.confirm)."""
    rounds: int
    measured: Measured          # roles parent, blamed, old, new
    ratio: IvJson               # blamed / parent
    p: float
    change: IvJson              # new / old in the same rounds
    explained: float | None     # the share of old -> new; None when it cannot be said

    def to_json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, **self.measured.to_json(), "ratio": self.ratio,
                "p": self.p, "change": self.change, "explained": self.explained}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "ConfirmSeries":
        return ConfirmSeries(d["rounds"], Measured.from_json(d), d["ratio"], d["p"],
                             d["change"], d.get("explained"))


@dataclass
class Confirm:
    """The first new commit against its parent. Confirmed when `reasons` is empty."""
    blamed: str
    parent: str
    same_sources: bool          # parent and blamed compile the same sources
    reasons: list[str] = field(default_factory=list)   # why not confirmed
    series: ConfirmSeries | None = None   # None: parent or blamed did not build
    witness: Witness | None = None        # instruction counts (bisect_witness)
    witness_note: str = ""                # why there are none, where they apply
    placement_effect: bool = False        # time differs, instructions do not

    @property
    def measured(self) -> Measured | None:
        return self.series.measured if self.series else None

    @property
    def rounds_taken(self) -> int:
        return self.series.rounds if self.series else 0

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
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Confirm":
        w = d.get("instructions")
        return Confirm(d["blamed"], d["parent"], d["same_sources"], list(d["reasons"]),
                       ConfirmSeries.from_json(d) if "ratio" in d else None,
                       Witness(w["parent"], w["blamed"], w["preset"]) if w else None,
                       d.get("instructions_note", ""), bool(d.get("placement_effect")))


Record = Union[Endpoints, Step, Confirm]
_KINDS = {"endpoints": Endpoints.from_json, "step": Step.from_json,
          "confirm": Confirm.from_json}


def from_json(d: Any, where: str) -> Record:
    """A line of steps.jsonl; UsageError naming `where` when it is not a bisect's record."""
    try:
        return _KINDS[d["kind"]](d)
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{where}: not a kvb bisect record: {type(e).__name__} {e}") from None
