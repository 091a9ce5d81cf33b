"""kvb bisect's second witness: instruction counts of the blamed commit and its parent.

Time can say "changed" when only the placement of the code changed (docs/placement.md). For a
kvbench_micro benchmark, the confirmation therefore also counts the instructions the measured
loop executes per byte in the blamed commit and its parent, under callgrind, in a portable build
of the same worktrees (valgrind 3.19 cannot run AVX-512 code; callgrind.py). Instruction counts
do not move with placement: when time says changed and the counts are the same, the difference
is where the linker put the code, not the commit's source.

Used by bisect_search's confirmation; imports no command module.
"""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from kvbtools.measure import callgrind, runner
from kvbtools.core.errors import RunError, UsageError
from kvbtools.measure.presets import load_presets
from kvbtools.measure.runner import Build, BuildError, Plan
from kvbtools.core.samples import load_side

# Counts within this fraction of each other are "the same instructions": callgrind's counts are
# deterministic, and a commit that changes the compiled loop moves them by far more.
SAME_INSTRUCTIONS = 0.005
METRIC = "instructions_per_byte"


@dataclass(frozen=True)
class Witness:
    parent: float          # instructions per byte of the parent
    blamed: float          # and of the blamed commit
    preset: str

    @property
    def ratio(self) -> float:
        """parent / blamed: above 1 when the blamed commit executes fewer instructions."""
        return self.parent / self.blamed if self.blamed > 0 else float("nan")

    @property
    def same(self) -> bool:
        return abs(self.ratio - 1.0) <= SAME_INSTRUCTIONS

    def text(self) -> str:
        return (f"instructions per byte ({self.preset}, callgrind): parent {self.parent:.4g}, "
                f"this {self.blamed:.4g} ({self.ratio:.3f}x fewer in this commit)"
                if not self.same else
                f"instructions per byte ({self.preset}, callgrind): parent {self.parent:.4g}, "
                f"this {self.blamed:.4g}: the same")


def witness_preset(st: dict[str, Any]) -> str | None:
    """The preset the counts are made with: the bisect's own when valgrind can run it, else
    this host's portable one; None when there is none or no valgrind."""
    try:
        callgrind.require_valgrind()
    except UsageError:
        return None
    preset = st["preset"]
    try:
        callgrind.check_presets([(preset, load_presets()[preset].cache)])
        return preset
    except UsageError:
        pass
    portable = [p for p in callgrind.portable_presets() if p.split("-")[1] in preset]
    return (portable or callgrind.portable_presets() or [None])[0]


def count(st: dict[str, Any], tree: str, sha: str, preset: str, out_dir: str) -> float:
    """Instructions per byte of st's micro benchmark in the commit whose worktree is `tree`."""
    b = Build(f"{st['dep']} at {sha[:12]} (instructions)", preset,
              f"bisect-{preset}-{st['dep']}-instructions",
              dict([runner.source_define(st["dep"], tree)]))
    runner.do_build(b, True, "")
    plan = Plan(**dict(st["plan"], instructions=True))
    out = os.path.join(out_dir, f"instructions.{sha[:12]}.json")
    runner.run_once(b.binary(True), plan, out)
    side = load_side(sha[:12], [out])
    key = (st["bench_key"], METRIC)
    if key not in side.values:
        raise RunError(f"{out} has no {METRIC} for {st['bench_key']}")
    return side.values[key][0]


def witness(st: dict[str, Any], trees: dict[str, str], parent: str, blamed: str
            ) -> tuple[Witness | None, str]:
    """The counts of parent and blamed, or None and why not ("" where counts do not apply:
    generic mode, kvbench workloads, a search that counted instructions itself)."""
    if st.get("mode") != "kvbench" or not Plan(**st["plan"]).micro or \
            Plan(**st["plan"]).instructions:
        return None, ""
    preset = witness_preset(st)
    if preset is None:
        return None, "no valgrind, or no portable preset valgrind can run here"
    try:
        counts = [count(st, trees[s], s, preset, st["dir"]) for s in (parent, blamed)]
    except (BuildError, RunError, UsageError) as e:
        return None, f"counting instructions failed: {e}"
    return Witness(counts[0], counts[1], preset), ""


def instructions_command(st: dict[str, Any]) -> str:
    """The kvb bisect command that decides by instruction counts (deterministic)."""
    if st.get("mode") != "kvbench" or not Plan(**st["plan"]).micro:
        return ""
    preset = witness_preset(st) or "x86-gcc-portable"
    return " ".join(shlex.quote(a) for a in [
        "scripts/kvb", "bisect", "--repo", st["repo"], "--old", st["old"][:12], "--new",
        st["new"][:12], "--dep", st["dep"], "--micro", st["bench_key"], "--find", st["find"],
        "--preset", preset, "--instructions"])


def instructions_hint(st: dict[str, Any]) -> str:
    cmd = instructions_command(st)
    return (f"instruction counts can decide (deterministic, blind to placement): {cmd}"
            if cmd else "")

