"""kvb bisect: the first commit of a library that made a benchmark slower, by `git bisect run`.

The search runs in a worktree of its own (`git worktree add` in a temporary directory), so the
user's checkout never moves; the worktree is removed at the end. The good and the bad commit are
built and measured first (the good figures are the reference for every step; the bad one must
be a regression, or there is nothing to find). Then `git bisect run` re-invokes kvb itself as the
step command, which builds the commit, measures it with repeats and exits 0 (good: no significant
regression beyond the threshold), 1 (regressed) or 125 (does not build or run: skip).

Two ways to build and measure a commit, sharing everything else:
  kvbench mode:  --dep DEP [--preset P] (--bench WORKLOAD | --micro NAME): the library is built
                 with the preset's toolchain through -DKVBENCH_<DEP>_SOURCE_DIR=<worktree>, then
                 kvbench (or kvbench_micro) against it, in build/kvb/bisect-<preset>-<dep>.
  generic mode:  --build-cmd CMD --measure-cmd CMD: shell commands run in the worktree; the
                 measure command prints kvbench or Google Benchmark JSON on stdout.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any

from kvbtools import command, compare, host, manifest, metrics, results, runner, stats, store
from kvbtools.errors import RunError, UsageError
from kvbtools.runner import Build, BuildError, Plan, progress
from kvbtools.samples import load_side
from kvbtools.table import fmt_value

GOOD, BAD, SKIP = 0, 1, 125
# git bisect run reads 1..127 (but 125) as "bad": a failure of kvb itself in a step must abort
# the bisection (exit > 127) instead of blaming the commit.
STEP_FAILED = 128


def git(repo: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(["git", "-C", repo, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: {p.stderr.strip()}")
    return p


class _Step(argparse.Action):
    """--step STATE: one step of `git bisect run`, whose failures exit STEP_FAILED."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        namespace.step = values
        namespace.failure_exit = STEP_FAILED


def register(sub: Any) -> None:
    p = command.add(sub, "bisect", __doc__, run)
    p.add_argument("--repo", help="git repository of the library (never checked out by kvb)")
    p.add_argument("--good", help="a commit without the regression")
    p.add_argument("--bad", help="a later commit with it (--good must be its ancestor)")
    p.add_argument("--metric", help="metric to watch, as kvb compare --metric names it: kvbench "
                                    "ops_per_sec (default), p99, ...; Google Benchmark "
                                    "bytes_per_second (default), items_per_second, cpu_time, "
                                    "real_time")
    p.add_argument("--threshold", type=compare.parse_threshold,
                   default=compare.parse_threshold("5%"),
                   help="a step is bad when worse by at least this much, significantly "
                        "(default 5%%)")
    p.add_argument("--alpha", type=compare.parse_alpha, default=0.05, help="default 0.05")
    p.add_argument("--repeats", type=int, default=5, help="measurements per commit (default 5)")
    p.add_argument("--bench", help="kvbench mode: the workload (e.g. readrandom); generic mode: "
                                   "the benchmark name in the JSON (optional when there is one)")
    g = p.add_argument_group("kvbench mode")
    g.add_argument("--dep", help=f"the library: {', '.join(manifest.buildable())}")
    g.add_argument("--preset", help="configure preset (default: this host's gcc native)")
    g.add_argument("--micro", metavar="NAME",
                   help="measure this kvbench_micro benchmark, e.g. lz4/compress/4096")
    g.add_argument("--engine", help="kvbench engine (default: the dep if it is an engine, "
                                    "else the first engine of cmake/deps.json)")
    g.add_argument("--num", type=int, default=100000, help="kvbench --num (default 100000)")
    g.add_argument("--min-time", type=float, default=0.1,
                   help="kvbench_micro --benchmark_min_time (default 0.1)")
    g = p.add_argument_group("generic mode")
    g.add_argument("--build-cmd", help="shell command that builds the commit (cwd: worktree)")
    g.add_argument("--measure-cmd", help="shell command printing benchmark JSON on stdout")
    p.add_argument("--results-dir", help="parent of the results directory (default results/)")
    p.add_argument("--step", metavar="STATE", action=_Step, help=argparse.SUPPRESS)
    store.add_store_arguments(p, auto=True)


# ---- building and measuring one commit -------------------------------------------------------

def _measure(state: dict[str, Any], tree: str, tag: str) -> tuple[list[float] | None, str]:
    """Builds the checked-out commit in `tree` and measures it `repeats` times. Returns the
    values, or None and why when it does not build or run."""
    outdir = os.path.join(state["dir"], "runs")
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(state["dir"], "build.log")
    files = []
    try:
        if state["mode"] == "generic":
            runner.run_logged(["sh", "-c", state["build_cmd"]], log, cwd=tree)
            for r in range(1, state["repeats"] + 1):
                out = os.path.join(outdir, f"{tag}.r{r}.json")
                with open(out, "w", encoding="utf-8") as f:
                    p = subprocess.run(["sh", "-c", state["measure_cmd"]], cwd=tree, stdout=f,
                                       stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    return None, f"measure command failed ({p.returncode}): {p.stderr[-500:]}"
                files.append(out)
        else:
            b = Build(f"bisect {state['dep']}", state["preset"],
                      f"bisect-{state['preset']}-{state['dep']}",
                      dict([runner.source_define(state["dep"], tree)]))
            plan = Plan(**state["plan"])
            runner.do_build(b, plan.micro)
            for r in range(1, state["repeats"] + 1):
                out = os.path.join(outdir, f"{tag}.r{r}.json")
                runner.run_once(b.binary(plan.micro), plan, out, state["engine"])
                files.append(out)
    except BuildError as e:
        return None, str(e)
    try:
        side = load_side(tag, files)
    except UsageError as e:
        return None, str(e)
    return _pick(state, side), ""


def _pick(state: dict[str, Any], side: Any) -> list[float] | None:
    default = "ops_per_sec" if side.kind == results.KVBENCH else "bytes_per_second"
    m = next(iter(metrics.select(side.metrics, [state["metric"] or default], side.kind).values()))
    metric = m.path
    state["metric"] = metric
    state["unit"], state["better"] = m.unit, m.better
    state["kind"] = side.kind
    names = [b for b, m in side.order if m == metric]
    want = state["bench_key"]
    if want is None:
        if len(names) != 1:
            raise UsageError(f"the JSON has {len(names)} benchmarks; name one with --bench: "
                              f"{', '.join(names[:20])}")
        want = names[0]
    if want not in names:
        raise UsageError(f"benchmark {want!r} is not in the measured JSON; it has: "
                          f"{', '.join(names[:20])}")
    state["bench_key"] = want
    return side.values[(want, metric)]


def _metric(state: dict[str, Any]) -> metrics.Metric:
    return metrics.Metric(state["metric"], state["unit"], state["better"])


def _judge(state: dict[str, Any], values: list[float]) -> stats.Verdict:
    m = _metric(state)
    return stats.verdict(state["base_values"], values, higher_is_better=m.higher_is_better,
                         threshold=state["threshold"], alpha=state["alpha"],
                         better_word=m.better_word, worse_word=m.worse_word)


def _record(state: dict[str, Any], entry: dict[str, Any]) -> None:
    with open(os.path.join(state["dir"], "steps.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _entry(commit: str, role: str, values: list[float] | None, v: stats.Verdict | None,
           why: str = "") -> dict[str, Any]:
    e: dict[str, Any] = {"commit": commit, "role": role, "values": values, "why": why}
    if v is not None:
        e.update(ratio=v.ratio, verdict=v.word, regression=v.regression,
                 u=v.test.u if v.test else None, p=v.test.p if v.test else None)
    return e


def step(state_path: str) -> int:
    """One `git bisect run` step, in the worktree (the current directory)."""
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    tree = state["worktree"]
    commit = git(tree, "rev-parse", "HEAD").stdout.strip()
    n = sum(1 for _ in open(os.path.join(state["dir"], "steps.jsonl"), encoding="utf-8")) - 1
    progress(f"bisect step {n}: building and measuring {commit[:12]}")
    try:
        values, why = _measure(state, tree, commit[:12])
    except UsageError as e:
        values, why = None, str(e)
    if values is None:
        progress(f"  {commit[:12]}: skip ({why})")
        _record(state, _entry(commit, "step", None, None, why))
        return SKIP
    v = _judge(state, values)
    _record(state, _entry(commit, "step", values, v))
    progress(f"  {commit[:12]}: ratio {v.ratio:.3f}, {v.word}"
             + (f" (p={v.test.p:.4f})" if v.test else "")
             + f" -> {'bad' if v.regression else 'good'}")
    return BAD if v.regression else GOOD


# ---- the driver ------------------------------------------------------------------------------

def _resolve(repo: str, ref: str, what: str) -> str:
    p = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    if p.returncode != 0:
        raise UsageError(f"{what} {ref!r} is not a commit in {repo}")
    return p.stdout.strip()


def _describe(values: list[float], scale: float) -> str:
    return (f"median {fmt_value(statistics.median(values) * scale)} "
            f"(n={len(values)}: " + ", ".join(fmt_value(x * scale) for x in values) + ")")


def run(args: argparse.Namespace) -> int:
    if args.step:
        return step(args.step)  # its failures exit STEP_FAILED (_Step, kvbtools.cli)
    for name in ("repo", "good", "bad"):
        if not getattr(args, name):
            raise UsageError(f"--{name} is required")
    generic = bool(args.build_cmd or args.measure_cmd)
    if generic and not (args.build_cmd and args.measure_cmd):
        raise UsageError("generic mode needs both --build-cmd and --measure-cmd")
    if generic and args.dep:
        raise UsageError("--dep (kvbench mode) and --build-cmd/--measure-cmd (generic mode) "
                          "exclude each other")
    if not generic and not args.dep:
        raise UsageError("give --dep DEP (kvbench mode) or --build-cmd and --measure-cmd")
    if args.repeats < 2:
        raise UsageError("--repeats must be at least 2: a verdict needs a noise estimate")
    repo = os.path.abspath(args.repo)
    if not os.path.isdir(repo) or git(repo, "rev-parse", "--git-dir", check=False).returncode:
        raise UsageError(f"{args.repo} is not a git repository")
    good = _resolve(repo, args.good, "--good")
    bad = _resolve(repo, args.bad, "--bad")
    if good == bad:
        raise UsageError("--good and --bad are the same commit")
    anc = git(repo, "merge-base", "--is-ancestor", good, bad, check=False).returncode
    if anc != 0:
        raise UsageError(f"--good {args.good} is not an ancestor of --bad {args.bad}")
    state: dict[str, Any] = {"repeats": args.repeats, "threshold": args.threshold,
                             "alpha": args.alpha, "metric": args.metric, "kind": ""}
    if generic:
        state.update(mode="generic", build_cmd=args.build_cmd, measure_cmd=args.measure_cmd,
                     bench_key=args.bench)
    else:
        lib = manifest.check_buildable(args.dep)
        dep = lib.name
        args.preset = args.preset or host.native_preset()
        presets, skipped = runner.select_presets([args.preset])
        if skipped:
            raise UsageError(f"preset {args.preset} cannot be built here: {skipped[0][1]}")
        micro = args.micro is not None
        if not micro and not args.bench:
            raise UsageError("kvbench mode needs --bench WORKLOAD or --micro NAME")
        engine = args.engine or (dep if lib.engine else manifest.default_engine())
        plan = Plan(micro=micro, micro_filter=f"^{args.micro}$" if micro else "",
                    min_time=args.min_time, engines=[engine], workloads=args.bench or "",
                    num=args.num)
        state.update(mode="kvbench", dep=dep, preset=args.preset, engine="" if micro else engine,
                     plan=plan.__dict__,
                     bench_key=args.micro if micro else f"{engine} {args.bench}")
    outdir = runner.new_results_dir(
        "bisect", f"{os.path.basename(repo)}-{good[:8]}..{bad[:8]}", args.results_dir)
    tmp = tempfile.mkdtemp(prefix="kvb-bisect.")
    tree = os.path.join(tmp, "worktree")
    state.update(dir=outdir, worktree=tree, repo=repo, good=good, bad=bad)
    git(repo, "worktree", "add", "--detach", tree, good)
    try:
        return _drive(state, repo, tree, good, bad)
    finally:
        runs = sorted(glob.glob(os.path.join(outdir, "runs", "*.json")))
        store.auto_store(runs, args, {r: {f"lib.{state['dep']}.commit": os.path.basename(r).split(
            ".")[0].split("-")[-1]} for r in runs} if state["mode"] == "kvbench" else None)
        git(tree, "bisect", "reset", check=False)
        git(repo, "worktree", "remove", "--force", tree, check=False)
        git(repo, "worktree", "prune", check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def _drive(state: dict[str, Any], repo: str, tree: str, good: str, bad: str) -> int:
    outdir = state["dir"]
    progress(f"bisect: measuring the good commit {good[:12]} (build 1)")
    values, why = _measure(state, tree, "good-" + good[:12])
    if values is None:
        raise RunError(f"the good commit {good[:12]} does not build or run: {why}")
    state["base_values"] = values
    _record(state, _entry(good, "good", values, None))
    progress(f"bisect: measuring the bad commit {bad[:12]} (build 2)")
    git(tree, "checkout", "--quiet", "--detach", bad)
    bvalues, why = _measure(state, tree, "bad-" + bad[:12])
    if bvalues is None:
        raise RunError(f"the bad commit {bad[:12]} does not build or run: {why}")
    m = _metric(state)
    v = _judge(state, bvalues)
    _record(state, _entry(bad, "bad", bvalues, v))
    if not v.regression:
        raise RunError(f"the bad commit is not a significant regression beyond "
                       f"{state['threshold'] * 100:g}%: ratio {v.ratio:.3f}, {v.word}"
                       + (f" (p={v.test.p:.4f})" if v.test else "")
                       + f"\n  good: {_describe(values, m.scale)}"
                       f"\n  bad:  {_describe(bvalues, m.scale)}")
    state_path = os.path.join(outdir, "state.json")
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump(state, f)
    count = int(git(repo, "rev-list", "--count", f"{good}..{bad}").stdout.strip() or "0")
    progress(f"bisect: {count} commits after the good one; about "
             f"{math.ceil(math.log2(max(count, 1)))} bisect step(s) to go")
    git(tree, "bisect", "start", bad, good)
    # git's messages to the log; the steps' progress (stderr) to the user.
    with open(os.path.join(outdir, "bisect-run.log"), "w", encoding="utf-8") as log:
        p = subprocess.run(["git", "bisect", "run", sys.executable, host.KVB, "bisect",
                            "--step", state_path], cwd=tree, stdout=log)
    first = git(tree, "rev-parse", "--verify", "--quiet", "refs/bisect/bad", check=False)
    with open(os.path.join(outdir, "steps.jsonl"), encoding="utf-8") as f:
        entries = [json.loads(line) for line in f]
    steps = [e for e in entries if e["role"] == "step"]
    skipped = [e for e in steps if e["values"] is None]
    log_text = open(os.path.join(outdir, "bisect-run.log"), encoding="utf-8").read()
    builds = len(entries)
    if p.returncode != 0 or first.returncode != 0 or "is the first bad commit" not in log_text:
        raise RunError(f"git bisect run did not name one first bad commit (exit {p.returncode}); "
                       f"see {outdir}/bisect-run.log; its end:\n{log_text[-3000:]}")
    sha = first.stdout.strip()
    subject = git(repo, "log", "-1", "--format=%h %s", sha).stdout.strip()
    by_commit = {e["commit"]: e for e in entries if e["values"] is not None}
    fb = by_commit.get(sha)
    parent = git(repo, "rev-parse", f"{sha}^", check=False).stdout.strip()
    lines = [f"first bad commit: {sha}", f"  {subject}",
             f"metric: {state['bench_key']} {m.path} [{m.shown_unit}], "
             f"{'higher' if m.higher_is_better else 'lower'} is better; threshold "
             f"{state['threshold'] * 100:g}%, alpha {state['alpha']:g}, Mann-Whitney U two-sided",
             f"  good {good[:12]}: {_describe(values, m.scale)}"]
    for label, e in (("parent of first bad", by_commit.get(parent)), ("first bad", fb)):
        if e is None or e["commit"] == good:
            continue
        lines.append(f"  {label} {e['commit'][:12]}: {_describe(e['values'], m.scale)}; "
                     f"ratio to good {e['ratio']:.3f}, U={e['u']:g}, p={e['p']:.4f}: "
                     f"{e['verdict']}")
    lines.append(f"builds: {builds} (good, bad, {len(steps)} bisect step(s), "
                 f"{len(skipped)} skipped as not building)")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(outdir, "bisect.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    results.write_json(os.path.join(outdir, "bisect.json"), {
        "schema": "kvb-bisect", "schema_version": 1, "repo": repo, "good": good, "bad": bad,
        "first_bad": sha, "metric": state["metric"], "benchmark": state["bench_key"],
        "threshold": state["threshold"], "alpha": state["alpha"], "builds": builds,
        "steps": entries})
    print(f"results: {runner.shown(outdir)}/")
    return 0

