"""kvb bisect's state: what it searches, how it builds and measures a commit, the metric it
watches, what its builds compile and what it has spent; state.json (SCHEMA, VERSION), rewritten
as it changes and read back by --resume. A state of schema_version 3 (no --candidates: a step of
one), 2 (no witness, --all-steps, CPU or counts either) or 1 (a flat dict) is converted; any
other version is refused (exit 2). The
finished series are in steps.jsonl (records.py); docs/compare.md describes both files.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Union

from kvbtools.core import metrics
from kvbtools.core.errors import UsageError
from kvbtools.core.stats import Judgement
from kvbtools.measure.plan import Budget
from kvbtools.measure.runner import Workload
from kvbtools.measure.spent import Spent

_TOTALS = threading.Lock()   # State.spend: builds and counts side by side add their costs
SCHEMA = "kvb-bisect-state"
VERSION = 4
READS = (1, 2, 3, 4)    # the schema versions --resume reads
WITNESSES = ("auto", "time", "instructions")

# Files whose content is compiled when they sit in a directory the build listed (a glob).
SOURCE_EXT = (".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inc", ".inl",
              ".ipp", ".tcc", ".s", ".S", ".asm")


@dataclass(frozen=True)
class Settings:
    """What the bisect looks for, fixed when it starts."""
    repo: str                 # the repository, an absolute path
    old: str                  # full commit ids; old is an ancestor of new
    new: str
    find: str                 # "slower" or "faster", in the metric's better direction
    judgement: Judgement      # threshold and alpha (the direction: State.judgement)
    budget: Budget            # of each series: first = --repeats (before whole layout cycles);
    #                           max_seconds None: as long as the series' builds took (>= FLOOR)
    layouts: int              # links each series starts with (seeds 0..layouts-1); 1: only one
    skip_identical: bool      # a commit compiling a judged commit's sources takes its verdict
    metric: str | None        # as asked (--metric); None: the document kind's default
    witness: str = "auto"     # --witness: what decides a step (WITNESSES)
    all_steps: bool = False   # --all-steps: every step of at least the threshold
    cpu: str = "auto"         # --cpu: auto, none or a CPU (State.cpu: the one chosen)
    candidates: int = 1       # --candidates: commits a step measures; 0: by cost (sections.py)


@dataclass(frozen=True)
class KvbenchMode:
    """The library built from the commit's worktree into kvbench (or kvbench_micro)."""
    dep: str
    preset: str
    engine: str               # "" for a micro benchmark
    plan: Workload
    bench_key: str            # the micro benchmark, or "ENGINE WORKLOAD"

    @property
    def bench(self) -> str | None:
        return self.bench_key


@dataclass(frozen=True)
class GenericMode:
    """Shell commands run in the commit's worktree; the measure command prints benchmark
    JSON; the count command (optional) prints the commit's instruction count (witness.py)."""
    build_cmd: str
    measure_cmd: str
    bench: str | None         # --bench; None: the JSON's only benchmark
    count_cmd: str = ""       # --count-cmd; "": none (the counts cannot witness)


Mode = Union[KvbenchMode, GenericMode]


@dataclass(frozen=True)
class Watched:
    """The metric and benchmark the first run named; every later value is theirs."""
    metric: str               # the metric's path in the document
    unit: str
    better: str               # "higher" or "lower"
    kind: str                 # the document kind (core/results: kvbench or gbench)
    benchmark: str

    def as_metric(self) -> metrics.Metric:
        return metrics.Metric(self.metric, self.unit, self.better)


@dataclass
class CompiledSet:
    """What the builds of old and new read of the repository (trees.learn)."""
    files: set[str] = field(default_factory=set)    # repository paths the build read
    dirs: set[str] = field(default_factory=set)     # repository directories the build listed

    def covers(self, path: str) -> bool:
        return path in self.files or (os.path.dirname(path) in self.dirs
                                      and path.endswith(SOURCE_EXT))

    def to_json(self) -> dict[str, list[str]]:
        return {"files": sorted(self.files), "dirs": sorted(self.dirs)}

    @staticmethod
    def from_json(d: dict[str, list[str]] | None) -> "CompiledSet | None":
        return None if d is None else CompiledSet(set(d["files"]), set(d["dirs"]))


@dataclass
class State:
    settings: Settings
    mode: Mode
    watched: Watched | None = None        # None until the first run named the metric
    compiled: CompiledSet | None = None   # None: not learnt (yet), or it could not be
    compiled_note: str = ""               # why no commit is skipped for identical sources
    totals: Spent = field(default_factory=Spent)   # over every invocation (--resume adds)
    cpu: int | None = None                # every run pinned to it (None: not chosen yet)
    cpu_note: str = ""                    # how it was chosen; whether rounds have a canary
    counts: dict[str, float] = field(default_factory=dict)   # commit -> instructions (witness)
    dir: str = ""                         # the results directory (not written: it holds it)

    def spend(self, s: Spent) -> None:
        """Adds what a build or a count cost to the totals (from any thread)."""
        with _TOTALS:
            self.totals += s

    @property
    def bench_key(self) -> str | None:
        """The benchmark watched; before the first run, the one named on the command line."""
        return self.watched.benchmark if self.watched else self.mode.bench

    @property
    def metric_name(self) -> str | None:
        """The metric watched; before the first run, the one asked for."""
        return self.watched.metric if self.watched else self.settings.metric

    def metric(self) -> metrics.Metric:
        """REQUIRES: the first run named the metric (watched)."""
        assert self.watched is not None, "no run has named the metric yet"
        return self.watched.as_metric()

    @property
    def judgement(self) -> Judgement:
        """The settings' threshold and alpha, with the watched metric's direction and words."""
        j = self.settings.judgement
        return j.for_metric(self.watched.as_metric()) if self.watched else j

    def to_json(self) -> dict[str, Any]:
        """state.json (schema_version 4). metric, unit and better keep their schema-1 places
        and meaning at the top, where kvb report reads them while a bisect runs: metric is the
        watched one, or until the first run names it, the one asked for (asked_metric)."""
        s, w = self.settings, self.watched
        return {
            "schema": SCHEMA, "schema_version": VERSION, "repo": s.repo, "old": s.old,
            "new": s.new, "find": s.find, "judgement": dataclasses.asdict(self.judgement),
            "budget": s.budget.to_json(),
            "layouts": s.layouts, "skip_identical": s.skip_identical, "witness": s.witness,
            "all_steps": s.all_steps, "cpu_request": s.cpu, "candidates": s.candidates,
            "mode": mode_json(self.mode), "asked_metric": s.metric,
            "metric": self.metric_name, "unit": w.unit if w else None,
            "better": w.better if w else None, "kind": w.kind if w else None,
            "benchmark": w.benchmark if w else None,
            "compiled": self.compiled.to_json() if self.compiled else None,
            "compiled_note": self.compiled_note, "totals": self.totals.to_json(),
            "cpu": self.cpu, "cpu_note": self.cpu_note, "instruction_counts": self.counts}


def mode_json(mode: Mode) -> dict[str, Any]:
    if isinstance(mode, GenericMode):
        return {"name": "generic", "build_cmd": mode.build_cmd, "measure_cmd": mode.measure_cmd,
                "bench": mode.bench} | ({"count_cmd": mode.count_cmd} if mode.count_cmd else {})
    return {"name": "kvbench", "dep": mode.dep, "preset": mode.preset, "engine": mode.engine,
            "bench": mode.bench_key, "plan": dataclasses.asdict(mode.plan)}


def mode_from_json(m: dict[str, Any]) -> Mode:
    """The mode mode_json wrote."""
    return (GenericMode(m["build_cmd"], m["measure_cmd"], m["bench"],
                        str(m.get("count_cmd") or "")) if m["name"] == "generic"
            else KvbenchMode(m["dep"], m["preset"], m["engine"], Workload(**m["plan"]),
                             m["bench"]))


def from_json(doc: Any, where: str) -> State:
    """The record of a state.json (`where` names it in messages): schema_version 4 as written,
    1 to 3 converted; any other version, or not a bisect's state, is a UsageError."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UsageError(f"{where} is not a kvb bisect state")
    version = doc.get("schema_version")
    if version not in READS:
        known = f"{', '.join(map(str, READS[:-1]))} and {READS[-1]}"
        raise UsageError(f"{where} is a kvb bisect state of schema_version {version}; this kvb "
                         f"reads versions {known}: resume it with the kvb that started it")
    try:
        return _from_v2(doc) if version in (2, 3, 4) else _from_v1(doc)
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{where}: cannot read the bisect's state (schema_version {version}): "
                         f"{type(e).__name__} {e}") from None


def _watched(doc: dict[str, Any], benchmark: str | None) -> Watched | None:
    if doc.get("unit") is None:
        return None
    return Watched(doc["metric"], doc["unit"], doc["better"], doc["kind"], str(benchmark))


def _from_v2(doc: dict[str, Any]) -> State:
    """schema_version 4 as written; 3 without candidates (a bisect started before them goes on
    with a commit a step), 2 without witness, all_steps, cpu and counts either (it goes on with
    --witness auto, one culprit, a CPU chosen now)."""
    j, b, m = doc["judgement"], doc["budget"], doc["mode"]
    settings = Settings(doc["repo"], doc["old"], doc["new"], doc["find"],
                        Judgement(float(j["threshold"]), float(j["alpha"])),
                        Budget.from_json(b),
                        int(doc["layouts"]), bool(doc["skip_identical"]), doc["asked_metric"],
                        str(doc.get("witness", "auto")), bool(doc.get("all_steps", False)),
                        str(doc.get("cpu_request", "auto")), int(doc.get("candidates", 1)))
    mode = mode_from_json(m)
    if settings.witness not in WITNESSES:
        raise ValueError(f"witness {settings.witness!r}")
    return State(settings, mode, _watched(doc, doc.get("benchmark")),
                 CompiledSet.from_json(doc.get("compiled")), doc.get("compiled_note", ""),
                 Spent.from_json(doc.get("totals")) or Spent(), cpu=doc.get("cpu"),
                 cpu_note=doc.get("cpu_note", ""),
                 counts={k: float(v) for k, v in (doc.get("instruction_counts") or {}).items()})


def _from_v1(doc: dict[str, Any]) -> State:
    """schema_version 1: one flat dict, read as schema 2; "metric" was the asked metric until
    the first run replaced it with the watched one (then "unit" was set), "bench_key" likewise."""
    mode = {"name": doc["mode"], "bench": doc["bench_key"]} | {
        k: doc[k] for k in ("build_cmd", "measure_cmd", "dep", "preset", "engine", "plan")
        if k in doc}
    return _from_v2(dict(doc, judgement=doc, budget=doc, mode=mode, asked_metric=doc["metric"],
                         layouts=doc.get("layouts", 1), benchmark=doc["bench_key"],
                         compiled_note=doc.get("compiled_note") or ""))
