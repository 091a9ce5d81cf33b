"""kvb bisect: the commit of a library that made a benchmark slower (or faster), noise and all.

  kvb bisect --repo DIR --old OLD --new NEW [--find slower|faster] (kvbench or generic mode)

OLD must be an ancestor of NEW (--good/--bad are the same options under their git names). Each
commit is built in a worktree of its own in a temporary directory; the user's checkout never
moves, no ref is written, and the worktrees are removed however the bisect ends.

1. old and new are built (traced, to learn which files of the repository the build compiles)
   and measured in interleaved rounds until old -> new is established as a change of at least
   --threshold in the --find direction (the metric's better direction honoured), or refused.
2. git's bisection (`git rev-list --bisect-all`, what `git bisect` runs) picks commits. A commit
   whose compiled sources hash like an already judged commit's takes that verdict without a
   build or a run; one that does not build (or run) is skipped.
   Any other is measured in interleaved rounds together with old and new, re-measured in the
   same rounds, and judged like old, like new, or uncertain; uncertain adds rounds until it is
   decided or --max-rounds/--max-time are spent, and then the bisect stops: "could not decide".
3. The first new commit is measured against its parent, with old and new, in a final series of
   twice as many rounds as the longest step took (at least twice --repeats): confirmed when it
   differs significantly in the direction looked for, explains at least half of old -> new and
   changes something the build compiles; otherwise "not confirmed" (exit 4).

Two ways to build and measure a commit:
  kvbench mode:  --dep DEP [--preset P] (--bench WORKLOAD | --micro NAME): the library is built
                 with the preset's toolchain through -DKVBENCH_<DEP>_SOURCE_DIR=<worktree>, then
                 kvbench (or kvbench_micro) against it, in build/kvb/bisect-<preset>-<dep>.
  generic mode:  --build-cmd CMD --measure-cmd CMD: shell commands run in the commit's worktree;
                 the measure command prints kvbench or Google Benchmark JSON on stdout.

Results: results/bisect-<UTC time>-<repo>-<old>..<new>/ with summary.txt (how it ended),
bisect.txt (the report), bisect.json, steps.jsonl (every series and its values), state.json,
build.log and every run's JSON. Ctrl-C stops; --resume DIR continues without measuring the
finished steps again. Exit status (docs/cli.md): 0 found and confirmed; 4 not confirmed, could
not decide, or refused (old -> new is not such a change); 1 a failure (the commits left do not
build); 2 bad input; 130 interrupted. See docs/compare.md.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
from dataclasses import dataclass, fields
from typing import Any

from kvbtools.commands import arguments, command
from kvbtools.core import host, manifest, output, results, store
from kvbtools.core.stats import Judgement
from kvbtools.measure import bisect_records, bisect_state, bisect_witness, callgrind, placement
from kvbtools.measure import rounds, runner
from kvbtools.measure.presets import load_presets, select_presets
from kvbtools.pages import result_pages
from kvbtools.measure.bisect_records import Confirm, Endpoints, Record, Step, iv_text
from kvbtools.measure.bisect_search import Ending, Refused, Search, step_line
from kvbtools.measure.bisect_state import GenericMode, KvbenchMode, Mode, Settings, State
from kvbtools.measure.bisect_trees import git
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.measure.runner import Plan
from kvbtools.core.table import fmt_value

DEFAULT_LAYOUTS = 3


def register(sub: Any) -> None:
    p = command.add(sub, "bisect", __doc__, run)
    p.add_argument("--repo", help="git repository of the library (never checked out by kvb)")
    p.add_argument("--old", "--good", dest="old", metavar="OLD",
                   help="the older commit, without the change (--good: the same)")
    p.add_argument("--new", "--bad", dest="new", metavar="NEW",
                   help="a later commit, with the change; OLD must be its ancestor (--bad: the "
                        "same)")
    p.add_argument("--find", choices=("slower", "faster"), default="slower",
                   help="the change to look for, in the metric's better direction: slower "
                        "(default) or faster")
    p.add_argument("--metric", help="metric to watch, as kvb compare --metric names it: kvbench "
                                    "ops_per_sec (default), p99, ...; Google Benchmark "
                                    "bytes_per_second (default), items_per_second, cpu_time, "
                                    "real_time")
    p.add_argument("--threshold", type=arguments.parse_threshold,
                   default=arguments.parse_threshold("5%"),
                   help="old -> new must differ by at least this much (default 5%%)")
    p.add_argument("--alpha", type=arguments.parse_alpha, default=0.05,
                   help="significance level of the confirmation (default 0.05)")
    p.add_argument("--repeats", type=int, default=5,
                   help="rounds every series starts with (default 5; with --layouts K, whole "
                        "cycles of the K seeds and at least 2K)")
    p.add_argument("--layouts", type=arguments.positive_int, metavar="K",
                   help=f"link every commit K times with different code placement (seeds "
                        f"0..K-1; kvbench mode: lld --shuffle-sections, relinks only; generic "
                        f"mode: KVB_LAYOUT_SEED in the build's and the measure command's "
                        f"environment) and judge with placement as a random effect (default "
                        f"{DEFAULT_LAYOUTS}; 1 with --instructions; docs/placement.md)")
    arguments.add_budget_arguments(p, flag=False, scope=" of each series (old and new, a step)")
    p.add_argument("--no-skip-identical", action="store_true",
                   help="measure a commit even when the files its build compiles are identical "
                        "to a judged commit's (when the measure command reads files the build "
                        "does not)")
    p.add_argument("--bench", help="kvbench mode: the workload (e.g. readrandom); generic mode: "
                                   "the benchmark name in the JSON (optional when there is one)")
    g = p.add_argument_group("kvbench mode")
    g.add_argument("--dep", help=f"the library: {', '.join(manifest.buildable())}")
    g.add_argument("--preset", help="configure preset (default: this host's gcc native)")
    g.add_argument("--micro", metavar="NAME",
                   help="measure this kvbench_micro benchmark, e.g. lz4/compress/4096")
    g.add_argument("--instructions", action="store_true", default=None,
                   help="with --micro: count instructions per byte under valgrind's callgrind "
                        "instead of timing (deterministic; instructions are not time; needs a "
                        "portable preset on an AVX-512 host: docs/compare.md)")
    g.add_argument("--engine", help="kvbench engine (default: the dep if it is an engine, "
                                    "else the first engine of cmake/deps.json)")
    g.add_argument("--num", type=int, default=100000, help="kvbench --num (default 100000)")
    g.add_argument("--min-time", type=float, default=0.1,
                   help="kvbench_micro --benchmark_min_time (default 0.1)")
    g = p.add_argument_group("generic mode")
    g.add_argument("--build-cmd", help="shell command that builds the commit (cwd: worktree)")
    g.add_argument("--measure-cmd", help="shell command printing benchmark JSON on stdout")
    p.add_argument("--results-dir", help="parent of the results directory (default results/)")
    p.add_argument("--resume", metavar="DIR",
                   help="continue the interrupted bisect whose results directory is DIR "
                        "(no other options but --store/--no-store)")
    arguments.add_store_arguments(p, auto=True)


# ---- the command line -> a request -> the state of a search ---------------------------------

# The options --resume takes from state.json instead.
SEARCH_OPTIONS = ("repo", "old", "new", "metric", "bench", "dep", "micro", "build_cmd",
                  "measure_cmd", "max_rounds", "max_time", "preset", "engine", "instructions",
                  "layouts")


@dataclass(frozen=True)
class BisectRequest:
    """kvb bisect's command line, parsed (each field is the option of its name); the search
    is built from it, never from the argparse Namespace."""
    repo: str | None
    old: str | None
    new: str | None
    find: str
    metric: str | None
    threshold: float
    alpha: float
    repeats: int
    layouts: int | None
    max_rounds: int | None        # as given; None: the default
    max_time: float | None        # seconds, as given
    bench: str | None
    dep: str | None
    preset: str | None
    micro: str | None
    instructions: bool | None
    engine: str | None
    num: int
    min_time: float
    build_cmd: str | None
    measure_cmd: str | None
    results_dir: str | None
    resume: str | None
    skip_identical: bool          # not --no-skip-identical
    budget: rounds.Budget         # --repeats, --max-rounds, --max-time as one budget

    @staticmethod
    def from_args(args: argparse.Namespace) -> "BisectRequest":
        same = {f.name: getattr(args, f.name) for f in fields(BisectRequest)
                if f.name not in ("skip_identical", "budget")}
        return BisectRequest(**same, skip_identical=not args.no_skip_identical,
                             budget=arguments.budget(args.repeats, args.max_rounds,
                                                     args.max_time))


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
    if req.build_cmd and req.measure_cmd:
        return GenericMode(req.build_cmd, req.measure_cmd, req.bench), req.metric
    assert req.dep is not None
    lib = manifest.check_buildable(req.dep)
    preset = req.preset or host.native_preset()
    _, skipped = select_presets([preset])
    if skipped:
        raise UsageError(f"preset {preset} cannot be built here: {skipped[0][1]}")
    micro = req.micro is not None
    if not micro and not req.bench:
        raise UsageError("kvbench mode needs --bench WORKLOAD or --micro NAME")
    engine = req.engine or (lib.name if lib.engine else manifest.default_engine())
    metric = req.metric
    if req.instructions:
        if not micro:
            raise UsageError("--instructions counts a kvbench_micro benchmark (--micro NAME)")
        callgrind.require_valgrind()
        callgrind.check_presets([(preset, load_presets()[preset].cache)])
        metric = metric or "instructions_per_byte"
    plan = Plan(micro=micro, micro_filter=f"^{req.micro}$" if micro else "",
                min_time=req.min_time, engines=[engine], workloads=req.bench or "",
                num=req.num, instructions=bool(req.instructions))
    return KvbenchMode(lib.name, preset, "" if micro else engine, plan,
                       req.micro if req.micro is not None else f"{engine} {req.bench}"), metric


def new_state(req: BisectRequest) -> State:
    """The search's settings from the command line; UsageError for anything wrong, before any
    directory is made."""
    for name in ("repo", "old", "new"):
        if not getattr(req, name):
            raise UsageError(f"--{name} is required (or --resume DIR)")
    if req.repeats < 4:
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
    layouts = req.layouts or (1 if req.instructions else DEFAULT_LAYOUTS)
    if req.instructions and layouts > 1:
        raise UsageError("--instructions counts instructions, which do not depend on where the "
                         "linker puts the code: leave out --layouts")
    b = req.budget
    return State(Settings(repo, old, new, req.find, Judgement(req.threshold, req.alpha),
                          bisect_state.budget(req.repeats, b.max_rounds, b.max_seconds),
                          layouts, req.skip_identical, metric), mode)


def load_resume(req: BisectRequest) -> tuple[State, list[Record]]:
    """The state and the finished series of the results directory --resume names."""
    given = [n for n in SEARCH_OPTIONS if getattr(req, n) is not None]
    if given:
        raise UsageError(f"--resume continues with the options the bisect started with; "
                         f"leave out --{given[0].replace('_', '-')}")
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

def run(args: argparse.Namespace) -> int:
    req = BisectRequest.from_args(args)
    output.check_directory(req.results_dir, "--results-dir")  # exit 2 before any work
    if req.resume:
        state, records = load_resume(req)
    else:
        state, records = new_state(req), []
        s = state.settings
        state.dir = runner.new_results_dir(
            "bisect", f"{os.path.basename(s.repo)}-{s.old[:8]}..{s.new[:8]}", req.results_dir)
        results.write_json(os.path.join(state.dir, "state.json"), state.to_json())
        output.write_text(os.path.join(state.dir, "steps.jsonl"), "")
    outdir = state.dir
    search = Search(state, records)
    try:
        return _search(search, args)
    except KeyboardInterrupt:
        n = len(search.recorded(Step))
        runner.write_summary(outdir, f"interrupted after {n} finished step(s), which are kept "
                                     f"in steps.jsonl; continue with: kvb bisect --resume "
                                     f"{outdir}")
        print(f"kvb: interrupted; the {n} finished step(s) are kept: kvb bisect --resume "
              f"{runner.shown(outdir)} continues", file=sys.stderr, flush=True)
        return 130
    except (RunError, UsageError) as e:
        runner.write_summary(outdir, ("refused: " if isinstance(e, Refused) else "failed: ")
                             + str(e))
        _store_runs(state, args)
        raise
    finally:
        search.ws.cleanup()


def _store_runs(state: State, args: argparse.Namespace) -> None:
    """The results store's hook (kvbtools.store): every run so far, in kvbench mode with the
    library commit it measured (runs/<series>.<commit>.r<round>.json)."""
    runs = sorted(glob.glob(os.path.join(state.dir, "runs", "*.json")))
    mode = state.mode
    attrs = {r: {f"lib.{mode.dep}.commit": os.path.basename(r).split(".")[1]}
             for r in runs} if isinstance(mode, KvbenchMode) else None
    if not args.no_store:
        store.auto_store(runs, args.store, attrs)


def _ending(search: Search) -> tuple[Ending, str, Confirm | None]:
    """How the search ended, the first new commit ("" when none) and its confirmation."""
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
                        f"{blamed[:12]} is the first new commit"
                        + ("" if conf.confirmed else "; " + "; ".join(conf.reasons)))
    assert ending is not None
    return ending, blamed, conf


def _search(search: Search, args: argparse.Namespace) -> int:
    ending, blamed, conf = _ending(search)
    text = report(search, ending, conf)
    print(text)
    outdir = search.dir
    output.write_text(os.path.join(outdir, "bisect.txt"), text + "\n")
    st, s = search.state, search.s
    results.write_json(os.path.join(outdir, "bisect.json"), {
        "schema": "kvb-bisect", "schema_version": 2, "repo": s.repo, "old": s.old,
        "new": s.new, "find": s.find, "metric": st.metric_name,
        "benchmark": st.bench_key, "threshold": s.judgement.threshold,
        "alpha": s.judgement.alpha, "first_new": blamed or None,
        "confirmed": bool(conf and conf.confirmed), "ending": ending.summary,
        "exit": ending.code, "totals": st.to_json()["totals"],
        "compiled": st.compiled.to_json() if st.compiled else None,
        "records": [r.to_json() for r in search.records],
        "values_by_commit": values_by_commit(search.records, s.old, s.new)})
    runner.write_summary(outdir, ending.summary)
    result_pages.write_report(outdir)  # report.html (docs/report.md)
    print(f"results: {runner.shown(outdir)}/")
    _store_runs(st, args)
    return ending.code


# ---- the report ------------------------------------------------------------------------------

def values_by_commit(records: list[Record], old: str, new: str) -> dict[str, list[float]]:
    """Every value measured, by commit, over all series."""
    out: dict[str, list[float]] = {}
    for r in records:
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
        lines.append(f"confirmation: against its parent {p[:12]}, {cs.rounds} "
                     f"interleaved rounds with old and new (n={cs.measured.n}):")
        test = ("Mann-Whitney U, two-sided" if search.layouts() < 2 else
                f"t test on {search.layouts()} placements' medians, two-sided")
        lines.append(f"  this/parent {iv_text(cs.ratio)}, p={cs.p:.3g} ({test}): {word}")
        ex = cs.explained
        lines.append(f"  new/old in the same rounds {iv_text(cs.change)}; this commit "
                     f"explains {ex * 100:.0f}% of it" if ex is not None else
                     f"  new/old in the same rounds {iv_text(cs.change)}")
    if conf.witness is not None:
        lines.append(f"  {conf.witness.text()}")
    elif conf.witness_note:
        lines.append(f"  instructions not counted: {conf.witness_note}")
    lines.append("confirmed" if conf.confirmed else
                 "not confirmed: " + "; ".join(conf.reasons))
    return lines


def report(search: Search, ending: Ending, conf: Confirm | None) -> str:
    st, s = search.state, search.s
    m = st.metric() if st.watched and st.watched.unit else None
    lines = _confirmation_lines(search, conf) if conf is not None else [ending.summary]
    hint = bisect_witness.instructions_hint(st) if ending.code != 0 else ""
    if hint:
        lines.append(hint)
    lines.append("")
    if m is not None:
        lines.append(f"search: old {s.old[:12]} .. new {s.new[:12]}, --find "
                     f"{s.find}; {st.bench_key} {m.path} [{m.shown_unit}], "
                     f"{'higher' if m.higher_is_better else 'lower'} is better; threshold "
                     f"{s.judgement.threshold * 100:g}%; 95% "
                     + ("Hodges-Lehmann intervals" if search.layouts() < 2 else
                        f"intervals over {search.layouts()} links a commit, placement a random "
                        "effect (docs/placement.md)"))
    for r in search.recorded(Endpoints):
        med = {k: fmt_value(_median(v) * (m.scale if m else 1))
               for k, v in r.measured.values.items()}
        lines.append(f"old -> new: new/old {iv_text(r.change)} (n={r.measured.n}; medians old "
                     f"{med['old']}, new {med['new']})")
    if search.layouts() > 1:
        lines.append(placement_line(search))
    for step in search.recorded(Step):
        lines.append(step_line(step))
    if st.compiled_note:
        lines.append(f"note: {st.compiled_note}")
    t = st.totals
    how = ("compiled once, relinked" if isinstance(st.mode, KvbenchMode) else
           "the build command ran once per KVB_LAYOUT_SEED")
    links = f" ({search.layouts()} links each: {how})" if search.layouts() > 1 else ""
    lines.append(f"cost: {t.builds} build(s){links}, {t.rounds} round(s) of "
                 f"{t.runs} run(s), {t.measure_seconds:.1f} s measuring; "
                 f"this invocation {search.elapsed()}")
    return "\n".join(lines)


def placement_line(search: Search) -> str:
    """'placement: +-4.1% over 3 links', pooled over every commit of every series, beside the
    drift of old (its medians from series to series)."""
    samples, olds = [], []
    for r in search.records:
        got = r.measured.samples() if r.measured else {}
        samples += got.values()
        if "old" in got:
            olds.append(_median(list(got["old"].values)))
    drift = (f"; drift of old between series: {(max(olds) / min(olds) - 1) * 100:.1f}%"
             if len(olds) > 1 and min(olds) > 0 else "")
    return placement.spread_text(samples) + drift


def _median(v: list[float]) -> float:
    s = sorted(v)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def _direction_word(search: Search, ratio: float, p: float) -> str:
    j = search.state.judgement
    if not math.isfinite(ratio) or p >= j.alpha:
        return "not significant"
    return j.word((ratio > 1) == j.higher_is_better)
