"""kvb bisect, run: what the command does with its arguments. Its command line and
--help: commands/parsers/bisect.py (kvb's start: docs/kvbtools.md).
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shlex
import statistics
import sys
from dataclasses import dataclass, fields
from typing import Any

from kvbtools.commands import arguments
from kvbtools.commands.parsers import groups
from kvbtools.core import manifest, output, placement, results, store
from kvbtools.core.stats import Judgement
from kvbtools.measure import callgrind, pinning
from kvbtools.measure.bisect import records as bisect_records, state as bisect_state
from kvbtools.measure.bisect import witness as bisect_witness
from kvbtools.measure.bisect.ranges import Found, Ranges, share_text
from kvbtools.core.presets import load_presets, select_presets
from kvbtools.pages import result_pages
from kvbtools.measure.bisect.records import (Confirm, Endpoints, MultiStep, Record, Step,
                                             iv_text)
from kvbtools.measure.bisect.search import Refused, Search
from kvbtools.measure.bisect.steps import multi_lines, step_line
from kvbtools.measure.bisect.state import GenericMode, KvbenchMode, Mode, Settings, State
from kvbtools.measure.bisect.trees import git
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.plan import Budget
from kvbtools.measure.runner import Workload
from kvbtools.core.table import fmt_value

# ---- the command line -> a request -> the state of a search ---------------------------------

# The options --resume takes from state.json instead.
SEARCH_OPTIONS = ("repo", "old", "new", "metric", "bench", "dep", "micro", "build_cmd",
                  "measure_cmd", "count_cmd", "max_rounds", "max_time", "preset", "engine",
                  "instructions", "layouts", "witness", "candidates", "all_steps", "cpu")


@dataclass(frozen=True)
class BisectRequest:
    """kvb bisect's command line, parsed (each field is the option of its name); the search
    is built from it, never from the argparse Namespace."""
    repo: str | None
    old: str | None
    new: str | None
    find: str
    metric: str | None
    layouts: int | None
    bench: str | None
    dep: str | None
    preset: str | None
    micro: str | None
    instructions: bool | None
    engine: str | None
    num: int | None           # None: 100000 (20000 with --instructions)
    min_time: float
    build_cmd: str | None
    measure_cmd: str | None
    count_cmd: str | None
    results_dir: str | None
    resume: str | None
    witness: str | None           # None: auto
    candidates: int | None        # None or 0: auto (by cost)
    all_steps: bool | None
    cpu: str | None               # None: auto (a resumed bisect: the CPU it chose)
    store: str | None
    no_store: bool
    slurm: str | None             # --slurm PARTITION (a resumed bisect may take it or not)
    slurm_config: str | None
    skip_identical: bool          # not --no-skip-identical
    judgement: Judgement          # --threshold, --alpha
    budget: Budget                # --repeats, --max-rounds, --max-time as one budget
    given: tuple[str, ...]        # the SEARCH_OPTIONS given (--resume takes none)

    @staticmethod
    def from_args(args: argparse.Namespace) -> "BisectRequest":
        own = ("skip_identical", "judgement", "budget", "given")
        same = {f.name: getattr(args, f.name) for f in fields(BisectRequest)
                if f.name not in own}
        return BisectRequest(
            **same, skip_identical=not args.no_skip_identical,
            judgement=arguments.judgement(args),
            budget=arguments.budget(args.repeats, args.max_rounds, args.max_time),
            given=tuple(n for n in SEARCH_OPTIONS if getattr(args, n) is not None))


def _resolve(repo: str, ref: str, what: str) -> str:
    p = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    if p.returncode != 0:
        raise UsageError(f"{what} {ref!r} is not a commit in {repo}")
    return p.stdout.strip()


def _mode(req: BisectRequest) -> tuple[Mode, str | None]:
    """How a commit is built and measured, and the metric to watch (None: the default)."""
    generic = bool(req.build_cmd or req.measure_cmd)
    if generic and not (req.build_cmd and req.measure_cmd):
        raise UsageError("generic mode needs both --build-cmd and --measure-cmd")
    if generic and req.dep:
        raise UsageError("--dep (kvbench mode) and --build-cmd/--measure-cmd (generic mode) "
                         "exclude each other")
    if not generic and not req.dep:
        raise UsageError("give --dep DEP (kvbench mode) or --build-cmd and --measure-cmd")
    if req.count_cmd and not generic:
        raise UsageError("--count-cmd is generic mode's (kvbench mode counts under callgrind "
                         "itself)")
    if req.build_cmd and req.measure_cmd:
        return GenericMode(req.build_cmd, req.measure_cmd, req.bench,
                           req.count_cmd or ""), req.metric
    assert req.dep is not None
    lib = manifest.check_buildable(req.dep)
    preset = req.preset or callgrind.default_preset(bool(req.instructions))
    _, skipped = select_presets([preset])
    if skipped:
        raise UsageError(f"preset {preset} cannot be built here: {skipped[0][1]}")
    micro = req.micro is not None
    if not micro and not req.bench:
        raise UsageError("kvbench mode needs --bench WORKLOAD or --micro NAME")
    engine = req.engine or (lib.name if lib.engine else manifest.default_engine())
    metric = req.metric
    if req.instructions:
        callgrind.require_valgrind()
        callgrind.check_presets([(preset, load_presets()[preset].cache)])
        metric = metric or callgrind.default_metrics(micro)[0]
    plan = Workload(micro=micro, micro_filter=f"^{req.micro}$" if micro else "",
                min_time=req.min_time, engines=[engine], workloads=req.bench or "",
                num=req.num or (callgrind.KV_NUM if req.instructions else 100000),
                instructions=bool(req.instructions))
    return KvbenchMode(lib.name, preset, "" if micro else engine, plan,
                       req.micro if req.micro is not None else f"{engine} {req.bench}"), metric


def new_state(req: BisectRequest) -> State:
    """The search's settings from the command line; UsageError for anything wrong, before any
    directory is made."""
    for name in ("repo", "old", "new"):
        if not getattr(req, name):
            raise UsageError(f"--{name} is required (or --resume DIR)")
    if req.budget.first < 4:
        raise UsageError("--repeats must be at least 4: a 95% interval needs 4 rounds")
    assert req.repo and req.old and req.new
    repo = os.path.abspath(req.repo)
    if not os.path.isdir(repo) or git(repo, "rev-parse", "--git-dir", check=False).returncode:
        raise UsageError(f"{req.repo} is not a git repository")
    old = _resolve(repo, req.old, "--old")
    new = _resolve(repo, req.new, "--new")
    if old == new:
        raise UsageError("--old and --new are the same commit")
    if git(repo, "merge-base", "--is-ancestor", old, new, check=False).returncode != 0:
        if git(repo, "merge-base", "--is-ancestor", new, old, check=False).returncode == 0:
            raise UsageError(f"--old {req.old} is newer than --new {req.new}: swap them "
                             "(--find faster looks for a speed-up from old to new)")
        raise UsageError(f"--old {req.old} is not an ancestor of --new {req.new}")
    mode, metric = _mode(req)
    layouts = req.layouts or (1 if req.instructions else groups.DEFAULT_LAYOUTS)
    if req.instructions and layouts > 1:
        raise UsageError("--instructions counts instructions, which do not depend on where the "
                         "linker puts the code: leave out --layouts")
    witness = req.witness or "auto"
    if witness == "instructions" and bisect_witness.counter(mode)[0] is None:
        raise UsageError(f"--witness instructions: {bisect_witness.counter(mode)[1]}")
    if req.slurm is None:   # a node checks its own (pinning.choose_pin)
        pinning.check_cpu(req.cpu or "auto")
    return State(Settings(repo, old, new, req.find, req.judgement, req.budget, layouts,
                          req.skip_identical, metric, witness, bool(req.all_steps),
                          req.cpu or "auto", req.candidates or 0), mode)


def load_resume(req: BisectRequest) -> tuple[State, list[Record]]:
    """The state and the finished series of the results directory --resume names."""
    if req.given:
        raise UsageError(f"--resume continues with the options the bisect started with; "
                         f"leave out --{req.given[0].replace('_', '-')}")
    assert req.resume is not None
    d = os.path.abspath(req.resume)
    try:
        with open(os.path.join(d, "state.json"), encoding="utf-8") as f:
            doc = json.load(f)
        lines = []
        with open(os.path.join(d, "steps.jsonl"), encoding="utf-8") as f:
            for line in f:
                try:
                    lines.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # a line cut short by the interruption: that series runs again
    except FileNotFoundError:
        raise UsageError(f"{req.resume} is not the results directory of a kvb bisect that "
                         "started measuring (no state.json or steps.jsonl)") from None
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"{req.resume}: cannot read the bisect's state: {e}") from None
    state = bisect_state.from_json(doc, f"{req.resume}/state.json")
    state.dir = d
    return state, [bisect_records.from_json(r, f"{req.resume}/steps.jsonl line {i}")
                   for i, r in enumerate(lines, 1)]


# ---- running ---------------------------------------------------------------------------------

def main(args: argparse.Namespace) -> int:
    """The command: its arguments as a request, run (its parser names this function)."""
    return run(BisectRequest.from_args(args))


def run(req: BisectRequest) -> int:
    output.check_outputs([("--results-dir", req.results_dir, ())],  # exit 2 before any work
                         [("--repo", req.repo, ()), ("--resume", req.resume, ())])
    on = arguments.fleet_of(req.slurm, req.slurm_config)
    if req.resume:
        state, records = load_resume(req)
    else:
        state, records = new_state(req), []
        s = state.settings
        state.dir = output.new_results_dir(
            "bisect", f"{os.path.basename(s.repo)}-{s.old[:8]}..{s.new[:8]}", req.results_dir)
        results.write_json(os.path.join(state.dir, "state.json"), state.to_json())
        output.write_text(os.path.join(state.dir, "steps.jsonl"), "")
    outdir = state.dir
    ranges = Ranges(state, records, on)
    try:
        return _search(ranges, req)   # the CPU and the canary: before the first series
    except KeyboardInterrupt:
        n = ranges.steps_done()
        output.write_summary(outdir, f"interrupted after {n} finished step(s), which are kept "
                                     f"in steps.jsonl; continue with: kvb bisect --resume "
                                     f"{outdir}")
        print(f"kvb: interrupted; the {n} finished step(s) are kept: kvb bisect --resume "
              f"{output.shown(outdir)} continues", file=sys.stderr, flush=True)
        return 130
    except (RunError, UsageError) as e:
        output.write_summary(outdir, ("refused: " if isinstance(e, Refused) else "failed: ")
                             + str(e))
        _store_runs(state, req)
        raise
    finally:
        ranges.ws.cleanup()


def _store_runs(state: State, req: BisectRequest) -> None:
    """The results store's hook (kvbtools.store): every run so far, in kvbench mode with the
    library commit it measured (runs/<series>.<commit>.r<round>.json)."""
    runs = sorted(glob.glob(os.path.join(state.dir, "runs", "*.json")))
    mode = state.mode
    attrs = {r: {f"lib.{mode.dep}.commit": os.path.basename(r).split(".")[1]}
             for r in runs} if isinstance(mode, KvbenchMode) else None
    if not req.no_store:
        store.auto_store(runs, req.store, attrs)


def _culprit_json(f: Found) -> dict[str, Any]:
    cs = f.conf.series if f.conf else None
    return {"commit": f.blamed or None, "old": f.search.old, "new": f.search.new,
            "confirmed": bool(f.conf and f.conf.confirmed), "ending": f.ending.summary,
            "explains": cs.explained if cs else None, "before": cs.before if cs else None,
            "after": cs.after if cs else None, "unit": cs.unit if cs else None}


def _search(ranges: Ranges, req: BisectRequest) -> int:
    main = ranges.run()
    ending, blamed, conf, search = main.ending, main.blamed, main.conf, main.search
    text = report(ranges)
    print(text)
    outdir = search.dir
    output.write_text(os.path.join(outdir, "bisect.txt"), text + "\n")
    st, s = search.state, search.s
    records = ranges.all_records()
    results.write_json(os.path.join(outdir, "bisect.json"), {
        "schema": "kvb-bisect", "schema_version": 4, "repo": s.repo, "old": s.old,
        "new": s.new, "find": s.find, "metric": st.metric_name,
        "benchmark": st.bench_key, "threshold": s.judgement.threshold,
        "alpha": s.judgement.alpha, "first_new": blamed or None,
        "confirmed": bool(conf and conf.confirmed), "ending": ending.summary,
        "exit": ending.code, "witness": s.witness, "all_steps": s.all_steps,
        "cpu": st.cpu, "cpu_note": ranges.cpu_text(),
        "culprits": [_culprit_json(f) for f in ranges.done if f.blamed],
        "totals": st.to_json()["totals"],
        "compiled": st.compiled.to_json() if st.compiled else None,
        "records": [r.to_json() for r in records],
        "values_by_commit": values_by_commit(records, s.old, s.new)})
    output.write_summary(outdir, ending.summary)
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    print(f"results: {output.shown(outdir)}/")
    _store_runs(st, req)
    return ending.code


# ---- the report ------------------------------------------------------------------------------

def values_by_commit(records: list[Record], old: str, new: str) -> dict[str, list[float]]:
    """Every value measured, by commit, over all series."""
    out: dict[str, list[float]] = {}
    for r in records:
        if isinstance(r, Endpoints):   # the range the records that follow belong to
            old, new = r.old, r.new
        m = r.measured
        if m is None:
            continue
        who = r.roles(old, new)
        seen: set[str] = set()
        for role, vals in m.values.items():
            sha = who.get(role) or role
            if sha not in seen:  # the parent may be old itself, the blamed commit new
                seen.add(sha)
                out.setdefault(sha, []).extend(vals)
    return out


def _commit_facts(search: Search, sha: str, parent: str) -> list[str]:
    repo = search.s.repo
    subject, date = (git(repo, "log", "-1", "--format=%s%n%aI", sha).stdout.split("\n") + [""])[:2]
    changed = git(repo, "diff-tree", "-r", "--name-only", "--no-commit-id", "-z", parent,
                  sha).stdout.split("\0")
    changed = [c for c in changed if c]
    lines = [f"  {subject}", f"  author date: {date}"]
    cset = search.state.compiled
    if cset is None:
        lines.append(f"  files it changed (which of them the build compiles is unknown: "
                     f"{search.state.compiled_note}): {', '.join(changed) or 'none'}")
    else:
        compiled = [c for c in changed if cset.covers(c)]
        lines.append(f"  files it changed that the build compiles: "
                     f"{', '.join(compiled) or 'none'}"
                     + (f" (and {len(changed) - len(compiled)} it does not)"
                        if len(changed) > len(compiled) else ""))
    return lines


def _confirmation_lines(search: Search, conf: Confirm) -> list[str]:
    b, p = conf.blamed, conf.parent
    lines = [f"first new commit: {b}", *_commit_facts(search, b, p)]
    cs = conf.series
    if cs is not None:
        word = _direction_word(search, cs.ratio[0], cs.p)
        links = cs.measured.links
        lines.append(f"confirmation: against its parent {p[:12]}, {cs.rounds} "
                     f"interleaved rounds on {links} link{'s' if links != 1 else ''} with old "
                     f"and new (n={cs.measured.n}"
                     + (f"; {cs.spent.text()}" if cs.spent else "") + "):")
        lines.append(f"  time: this/parent {iv_text(cs.ratio)}, p={cs.p:.3g} (Yuen's trimmed "
                     f"t, two-sided, on {cs.unit or 'the rounds'}): {word}")
        shares = share_text(conf).strip(" ()")
        lines.append(f"  new/old in the same rounds {iv_text(cs.change)}; this commit "
                     + (shares or "carries a share that cannot be said"))
    if conf.witness is not None:
        lines.append(f"  {conf.witness.text()}")
        lines += _count_shares(search, conf)
        if conf.witness_note:
            lines.append(f"  {conf.witness_note}: the counts decide nothing here")
    elif conf.witness_note:
        lines.append(f"  instructions not counted: {conf.witness_note}")
    if conf.witness_decided:
        lines.append("  time could not tell it from its parent; the instruction counts did")
    lines.append("confirmed" if conf.confirmed else
                 "not confirmed: " + "; ".join(conf.reasons))
    return lines


def _count_shares(search: Search, conf: Confirm) -> list[str]:
    """The commit's share of old -> new in instructions, when old, new, its parent and it were
    all counted (exact, where time's shares have intervals)."""
    c = search.state.counts
    shas = (search.old, search.new, conf.parent, conf.blamed)
    if not all(x in c and c[x] > 0 for x in shas) or c[search.new] == c[search.old]:
        return []
    total = math.log(c[search.new] / c[search.old])
    this = math.log(c[conf.blamed] / c[conf.parent]) / total
    before = math.log(c[conf.parent] / c[search.old]) / total
    return [f"  in instructions it explains {round(this * 100) + 0}% of old -> new; "
            f"{round(before * 100) + 0}% lies before it, {round((1 - this - before) * 100) + 0}% "
            "after it"]


def _head_lines(search: Search) -> list[str]:
    st, s = search.state, search.s
    m = st.metric() if st.watched and st.watched.unit else None
    if m is None:
        return []
    k = search.layouts()
    return [f"search: old {s.old[:12]} .. new {s.new[:12]}, --find {s.find}; {st.bench_key} "
            f"{m.path} [{m.shown_unit}], {'higher' if m.higher_is_better else 'lower'} is "
            f"better; threshold {s.judgement.threshold * 100:g}%; 95% intervals on paired "
            f"rounds" + (f" (Yuen's trimmed t over link pairs; series start with {k} links, "
                         "more added where the variance is: docs/placement.md)" if k > 1 else
                         " (one link a commit)") + f"; witness {s.witness}; "
            + _candidates_plan(search)]


def _candidates_plan(search: Search) -> str:
    """How the plan line says k is chosen (sections.how_many)."""
    if search.s.candidates:
        return f"{search.s.candidates} candidate(s) a step"
    if search.fleet is not None:
        return ("a candidate a step on each measurement node of "
                f"{search.fleet.config.partition} up (--candidates auto with --slurm)")
    return "candidates a step by cost (--candidates auto)"


def _range_lines(f: Found, scale: float) -> list[str]:
    search = f.search
    lines = []
    for r in search.recorded(Endpoints):
        what = "old -> new" if not search.sub else f"range {r.old[:12]}..{r.new[:12]}"
        if r.measured.values:
            med = {k: fmt_value(statistics.median(v) * scale)
                   for k, v in r.measured.values.items()}
            lines.append(f"{what}: new/old {iv_text(r.change)} ({r.unit or f'n={r.measured.n}'}"
                         f"; medians old {med['old']}, new {med['new']}"
                         + (f"; {r.spent.text()}" if r.spent else "") + ")")
        if r.counts:
            lines.append(f"{what}: instructions new/old {r.counts['new'] / r.counts['old']:.3f}"
                         + ("; decided by instructions" if r.witness == "instructions" else ""))
    for r in search.records:
        if isinstance(r, MultiStep):
            lines += multi_lines(r, search.measured)
        elif isinstance(r, Step):
            lines.append(step_line(r, measured=search.measured))
    if search.sub:
        lines.append(f"  -> {f.ending.summary}")
    return lines


def report(ranges: Ranges) -> str:
    main = ranges.main
    search = main.search
    st = search.state
    m = st.metric() if st.watched and st.watched.unit else None
    lines = _confirmation_lines(search, main.conf) if main.conf is not None else \
        [main.ending.summary]
    hint = instructions_hint(st) if main.ending.code != 0 else ""
    if hint:
        lines.append(hint)
    elif search.refuted and instructions_command(st):
        lines.append("the instructions changed by another commit (they are not a witness of "
                     f"this change); the bisect that names it: {instructions_command(st)}")
    found = [f for f in ranges.done if f.blamed]
    if st.settings.all_steps:
        lines.append(f"--all-steps: {len(found)} step(s) found:")
        lines += [f"  {f.blamed[:12]} {f.ending.summary.split(': ', 1)[0]} in "
                  f"{f.search.old[:12]}..{f.search.new[:12]} (OLD..NEW there)"
                  f"{share_text(f.conf) if f.conf else ''}" for f in found]
    lines.append("")
    lines += _head_lines(search)
    for f in ranges.done:
        lines += _range_lines(f, m.scale if m else 1)
    if search.layouts() > 1:
        lines.append(placement_line(ranges))
    lines.append(ranges.cpu_text())
    if st.compiled_note:
        lines.append(f"note: {st.compiled_note}")
    how = ("in the commit's slot, its objects linked again" if isinstance(st.mode, KvbenchMode)
           else "the build command once per KVB_LAYOUT_SEED")
    lines.append(f"cost: {st.totals.text()}; relinks: {how}; {candidates_text(ranges)}; this "
                 f"invocation {search.elapsed()}")
    return "\n".join(x for x in lines if x is not None)


def candidates_text(ranges: Ranges) -> str:
    """'k=1 a step' or 'k=3, 2, 1 in its 3 steps' (the candidates each step measured)."""
    ks = [len(r.steps) if isinstance(r, MultiStep) else 1 for r in ranges.all_records()
          if isinstance(r, (Step, MultiStep))]
    if not ks or len(set(ks)) == 1:
        return f"k={ks[0] if ks else 1} candidate(s) a step"
    return f"k={', '.join(map(str, ks))} candidates in its {len(ks)} steps"


def instructions_command(state: State) -> str:
    """The kvb bisect command that decides by instruction counts (deterministic): kvbench mode
    counts them itself (--instructions, --micro only); generic mode by --count-cmd."""
    mode, s = state.mode, state.settings
    if isinstance(mode, GenericMode) and mode.count_cmd:
        return " ".join(shlex.quote(a) for a in [
            "scripts/kvb", "bisect", "--repo", s.repo, "--old", s.old[:12], "--new",
            s.new[:12], "--build-cmd", mode.build_cmd, "--measure-cmd", mode.measure_cmd,
            "--count-cmd", mode.count_cmd, *(["--bench", mode.bench] if mode.bench else []),
            "--find", s.find, "--witness", "instructions"])
    if not isinstance(mode, KvbenchMode) or not mode.plan.micro:
        return ""
    preset = bisect_witness.witness_preset(mode.preset) or "x86-gcc-portable"
    return " ".join(shlex.quote(a) for a in [
        "scripts/kvb", "bisect", "--repo", s.repo, "--old", s.old[:12], "--new", s.new[:12],
        "--dep", mode.dep, "--micro", mode.bench_key, "--find", s.find, "--preset", preset,
        "--instructions"])


def instructions_hint(state: State) -> str:
    cmd = instructions_command(state)
    return (f"instruction counts can decide (deterministic, blind to placement): {cmd}"
            if cmd else "")


def placement_line(ranges: Ranges) -> str:
    """'placement: +-4.1% over 3 links', pooled over every commit of every series, beside the
    drift of old (its medians from series to series)."""
    samples, olds = [], []
    for r in ranges.all_records():
        got = r.measured.levels(True) if r.measured and r.measured.values else {}
        samples += got.values()
        if "old" in got and isinstance(r, (Endpoints, Step, MultiStep)) and \
                not (isinstance(r, (Step, MultiStep)) and r.ends):
            olds.append(statistics.median(got["old"].values))
    drift = (f"; drift of old between series: {(max(olds) / min(olds) - 1) * 100:.1f}%"
             if len(olds) > 1 and min(olds) > 0 else "")
    return placement.spread_text(samples) + drift


def _direction_word(search: Search, ratio: float, p: float) -> str:
    j = search.state.judgement
    if not math.isfinite(ratio) or p >= j.alpha:
        return "not significant"
    return j.word((ratio > 1) == j.higher_is_better)
