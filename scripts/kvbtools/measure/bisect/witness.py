"""kvb bisect's second witness: instruction counts under callgrind, in a portable build of the
commit (valgrind 3.19 cannot run AVX-512 code), made in the portable preset's slots and counted
side by side (count_many). They do not move with placement (docs/placement.md): the
confirmation counts the culprit and its parent (the same counts make a timed difference a
code-placement effect), and when time cannot decide a series within its budget the counts
decide (--witness auto; exact values). `counter` says how a commit is counted,
one entry of COUNTERS per kind of benchmark (kvbench_micro today; KV workloads when kvbench counts
their loops, issue 37 item 3); in generic mode the user's --count-cmd, run in the commit's
worktree, prints the count (the last number on its standard output: callgrind's total under
`valgrind --tool=callgrind`, or any count the user trusts, docs/compare.md).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import queue
import re
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

from kvbtools.measure import callgrind, runner
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.bisect.state import GenericMode, KvbenchMode, Mode
from kvbtools.measure.bisect.trees import Workspace
from kvbtools.core.presets import load_presets
from kvbtools.measure.runner import BuildError
from kvbtools.measure.spent import SideBySide, Spent
from kvbtools.core.samples import load_side

# Counts within this fraction of each other are "the same instructions": callgrind's counts are
# deterministic, and a commit that changes the compiled loop moves them by far more.
SAME_INSTRUCTIONS = 0.005
METRIC = "instructions_per_byte"


@dataclass(frozen=True)
class Witness:
    parent: float          # instructions per byte of the parent
    blamed: float          # and of the blamed commit
    preset: str            # "": generic mode's --count-cmd counted them

    @property
    def ratio(self) -> float:
        """parent / blamed: above 1 when the blamed commit executes fewer instructions."""
        return self.parent / self.blamed if self.blamed > 0 else float("nan")

    @property
    def same(self) -> bool:
        return abs(self.ratio - 1.0) <= SAME_INSTRUCTIONS

    def text(self) -> str:
        what = f"instructions per byte ({self.preset}, callgrind)" if self.preset else \
            "instructions (--count-cmd)"
        return (f"{what}: parent {self.parent:.4g}, this {self.blamed:.4g} "
                f"({self.ratio:.3f}x fewer in this commit)" if not self.same else
                f"{what}: parent {self.parent:.4g}, this {self.blamed:.4g}: the same")


def witness_preset(preset: str) -> str | None:
    """The preset the counts are made with: the bisect's own (`preset`) when valgrind can run
    it, else this host's portable one; None when there is none or no valgrind."""
    try:
        callgrind.require_valgrind()
    except UsageError:
        return None
    try:
        callgrind.check_presets([(preset, load_presets()[preset].cache)])
        return preset
    except UsageError:
        pass
    portable = [p for p in callgrind.portable_presets() if p.split("-")[1] in preset]
    return (portable or callgrind.portable_presets() or [None])[0]


def count(mode: KvbenchMode, binary: str, sha: str, out_dir: str) -> float:
    """Instructions per byte of the mode's micro benchmark in `binary` (the commit's portable
    kvbench_micro)."""
    plan = dataclasses.replace(mode.plan, instructions=True)
    out = os.path.join(out_dir, f"instructions.{sha[:12]}.json")
    runner.run_once(binary, plan, out)
    side = load_side(sha[:12], [out])
    key = (mode.bench_key, METRIC)
    if key not in side.values:
        raise RunError(f"{out} has no {METRIC} for {mode.bench_key}")
    return side.values[key][0]


@dataclass
class Counted:
    """What count_many got: the counts by commit, the first failure, and what it cost."""
    values: dict[str, float]
    failed: Exception | None
    spent: Spent


def count_many(mode: KvbenchMode, preset: str, ws: Workspace, shas: list[str], out_dir: str,
               say: Callable[[str], None]) -> Counted:
    """The commits' instructions, side by side: as many at once as this process has CPUs
    (os.sched_getaffinity), each its portable build in a slot of its own (Workspace.portable,
    one job) and its callgrind run. The first portable build of the workspace is made first,
    alone, on every CPU: the others then find its objects in ccache. A commit that fails leaves
    the others counted."""
    width = max(1, min(len(shas), len(os.sched_getaffinity(0))))
    t0 = time.monotonic()
    if width > 1 and not ws.primed(preset):
        say(f"building {shas[0][:12]} with {preset} first, alone: the first build of the "
            "instruction counts compiles what the others then take from ccache")
        try:
            ws.portable(shas[0], preset, 0)
        except (BuildError, RunError, UsageError):
            pass    # counted below, where its failure is that commit's
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(width):
        free.put(i)
    tally = SideBySide()

    def one(sha: str) -> float:
        slot = free.get()
        try:
            with tally.piece():
                binary = ws.portable(sha, preset, slot, jobs=1 if width > 1 else 0)
                t = time.monotonic()
                got = count(mode, binary, sha, out_dir)
            say(f"counted {sha[:12]}: {got:.4g} {METRIC.replace('_', ' ')} "
                f"(callgrind {time.monotonic() - t:.0f} s)")
            return got
        finally:
            free.put(slot)

    if width > 1:
        say(f"counting {len(shas)} commits, {width} side by side: "
            + ", ".join(x[:12] for x in shas))
    values, failed = _side_by_side(shas, width, one)
    return Counted(values, failed, Spent(counts=len(values), counting=time.monotonic() - t0,
                                         count_width=tally.width))


Counter = Callable[[Workspace, list[str], str, Callable[[str], None]], Counted]


def _micro_counter(mode: KvbenchMode) -> tuple[Counter | None, str]:
    preset = witness_preset(mode.preset)
    if preset is None:
        return None, "no valgrind, or no portable preset valgrind can run here"
    return (lambda ws, shas, out, say: count_many(mode, preset, ws, shas, out, say)), \
        f"instructions per byte ({preset}, callgrind)"


def _kv_counter(mode: KvbenchMode) -> tuple[Counter | None, str]:
    return None, ("kvbench does not count a KV workload's instructions under callgrind yet "
                  "(issue 37 item 3)")


COUNTERS: dict[str, Callable[[KvbenchMode], tuple[Counter | None, str]]] = {
    "micro": _micro_counter, "kv": _kv_counter}


def count_command(mode: GenericMode, tree: str, sha: str, out_dir: str) -> float:
    """The count --count-cmd prints in the commit's worktree: the last number of its standard
    output (kept in OUT_DIR/instructions.<commit>.txt). RunError when it fails or prints none."""
    p = subprocess.run(["sh", "-c", mode.count_cmd], cwd=tree, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode in (-2, 130):
        raise KeyboardInterrupt
    with open(os.path.join(out_dir, f"instructions.{sha[:12]}.txt"), "w",
              encoding="utf-8") as f:
        f.write(p.stdout)
    numbers = re.findall(r"[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?", p.stdout)
    if p.returncode != 0 or not numbers:
        raise RunError(f"--count-cmd at {sha[:12]} " + (
            f"failed ({p.returncode}): {p.stderr.strip()[-300:]}" if p.returncode else
            "printed no number"))
    return float(numbers[-1].replace(",", ""))


def _side_by_side(shas: list[str], width: int, one: Callable[[str], float]
                  ) -> tuple[dict[str, float], Exception | None]:
    """one(sha) for each commit, `width` at once: the counts, and the first commit's failure
    (BuildError, RunError, UsageError), the others counted all the same."""
    values: dict[str, float] = {}
    failed: Exception | None = None
    with concurrent.futures.ThreadPoolExecutor(max_workers=width) as pool:
        futures = {sha: pool.submit(one, sha) for sha in shas}
        for sha, fut in futures.items():
            try:
                values[sha] = fut.result()
            except (BuildError, RunError, UsageError) as e:
                failed = failed or e
    return values, failed


def count_commands(mode: GenericMode, ws: Workspace, shas: list[str], out_dir: str,
                   say: Callable[[str], None]) -> Counted:
    """The commits' counts by --count-cmd, as many side by side as this process has CPUs,
    each in its commit's worktree (made first, one at a time). A commit that fails leaves the
    others counted."""
    width = max(1, min(len(shas), len(os.sched_getaffinity(0))))
    trees = {sha: ws.tree(sha) for sha in shas}
    t0 = time.monotonic()
    tally = SideBySide()

    def one(sha: str) -> float:
        with tally.piece():
            got = count_command(mode, trees[sha], sha, out_dir)
        say(f"counted {sha[:12]}: {got:.6g}")
        return got

    values, failed = _side_by_side(shas, width, one)
    return Counted(values, failed, Spent(counts=len(values), counting=time.monotonic() - t0,
                                         count_width=tally.width))


def counter(mode: Mode) -> tuple[Counter | None, str]:
    """How a commit's instructions are counted in this bisect (and what they are), or None and
    why not."""
    if isinstance(mode, GenericMode) and mode.count_cmd:
        return (lambda ws, shas, out, say: count_commands(mode, ws, shas, out, say)), \
            "instructions, by --count-cmd"
    if not isinstance(mode, KvbenchMode):
        return None, ("generic mode: kvb cannot count your measure command's instructions "
                      "by itself: give --count-cmd (docs/compare.md)")
    if mode.plan.instructions:
        return None, "the bisect counts instructions itself (--instructions)"
    return COUNTERS["micro" if mode.plan.micro else "kv"](mode)


def counted(mode: Mode) -> KvbenchMode | GenericMode | None:
    """The mode when instructions can witness it: a kvbench_micro benchmark that is timed (not
    one whose search counts instructions itself), or generic mode with --count-cmd; else
    None."""
    if isinstance(mode, KvbenchMode) and mode.plan.micro and not mode.plan.instructions:
        return mode
    return mode if isinstance(mode, GenericMode) and mode.count_cmd else None
