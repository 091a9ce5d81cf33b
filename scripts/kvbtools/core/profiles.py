"""CPU profiles of kvbench runs (`kvbench --profile`, docs/profile.md): the folded stacks of each
benchmark and role, the functions in them (self and total), and what moved between two runs.

Each sample is `period_ns` of one thread's CPU time, so a function's CPU per operation is
samples x period_ns / ops: comparable across runs of different lengths and rates, unlike a share
of the samples. The "background" role (the engine's own threads) is divided by the ops of the
benchmark's main role. Standard library only; figures are flame_figures.py's.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from kvbtools.core import table
from kvbtools.core.errors import UsageError
from kvbtools.core.output import make_dirs, write_text

BACKGROUND = "background"


@dataclass
class RoleProfile:
    """One role's samples over every repeat of one benchmark of one document."""
    benchmark: str
    role: str
    period_ns: int
    ops: int                                   # the role's ops (background: the main role's)
    samples: int = 0
    lost: int = 0
    threads: int = 0
    stacks: dict[str, int] = field(default_factory=dict)  # folded stack -> samples

    def ns_per_op(self, samples: float) -> float:
        return samples * self.period_ns / self.ops if self.ops else 0.0


@dataclass
class Moved:
    """A function's CPU per op in A and in B (self: in it; total: in it and what it calls)."""
    name: str
    self_a: float
    self_b: float
    total_a: float
    total_b: float

    @property
    def self_delta(self) -> float:
        return self.self_b - self.self_a

    @property
    def total_delta(self) -> float:
        return self.total_b - self.total_a


def check(profile: Any, where: str) -> list[str]:
    """What is wrong with a result's "profile" object (docs/json.md), as schema.py words it."""
    if not isinstance(profile, dict):
        return [f"{where}: expected an object"]
    problems = []
    for key, typ in (("event", str), ("period_ns", int), ("kernel_frames", bool),
                     ("samples", int), ("roles", list)):
        if not isinstance(profile.get(key), typ) or (typ is int and
                                                      isinstance(profile.get(key), bool)):
            problems.append(f"{where}.{key}: missing or not {typ.__name__}")
    for i, role in enumerate(profile.get("roles") or []):
        w = f"{where}.roles[{i}]"
        if not isinstance(role, dict) or not isinstance(role.get("role"), str):
            problems.append(f"{w}.role: missing")
            continue
        folded = role.get("folded")
        if not isinstance(folded, list) or not all(
                isinstance(s, list) and len(s) == 2 and isinstance(s[0], str)
                and isinstance(s[1], int) and not isinstance(s[1], bool) for s in folded):
            problems.append(f"{w}.folded: expected [[\"frame;frame\", samples], ...]")
    return problems


def _main_ops(result: dict[str, Any]) -> int:
    roles = result.get("roles") or []
    return int(roles[0].get("ops", 0)) if roles else 0


def of_document(doc: dict[str, Any]) -> dict[tuple[str, str], RoleProfile]:
    """Every profiled (benchmark, role) of a kvbench document, repeats merged, in order."""
    out: dict[tuple[str, str], RoleProfile] = {}
    for result in doc.get("results", []):
        prof = result.get("profile")
        if not isinstance(prof, dict) or prof.get("unavailable") or not prof.get("roles"):
            continue
        ops = {r["role"]: int(r.get("ops", 0)) for r in result.get("roles", [])}
        for role in prof["roles"]:
            key = (result["benchmark"], role["role"])
            rp = out.setdefault(key, RoleProfile(key[0], key[1], int(prof["period_ns"]), 0))
            main = _main_ops(result)
            rp.ops += main if role["role"] == BACKGROUND else ops.get(role["role"], main)
            rp.samples += int(role.get("samples", 0))
            rp.lost += int(role.get("lost_samples", 0))
            rp.threads = max(rp.threads, int(role.get("threads", 0)))
            for stack, count in role.get("folded", []):
                rp.stacks[stack] = rp.stacks.get(stack, 0) + int(count)
    return out


def of_documents(docs: list[Any]) -> dict[tuple[str, str], RoleProfile]:
    """The profiles of one side's documents (results.Document), pooled per benchmark and role."""
    out: dict[tuple[str, str], RoleProfile] = {}
    for d in docs:
        for key, rp in of_document(d.doc).items():
            if key not in out:
                out[key] = rp
                continue
            pooled = out[key]
            # Different rates pool by CPU time: samples are rescaled to the first one's period.
            factor = rp.period_ns / pooled.period_ns
            pooled.ops += rp.ops
            pooled.samples += round(rp.samples * factor)
            pooled.lost += rp.lost
            for stack, n in rp.stacks.items():
                pooled.stacks[stack] = pooled.stacks.get(stack, 0) + round(n * factor)
    return out


def unavailable(doc: dict[str, Any]) -> list[str]:
    """Why a document's benchmarks were not profiled, once each ("" = none asked)."""
    seen: list[str] = []
    for result in doc.get("results", []):
        why = (result.get("profile") or {}).get("unavailable", "")
        if why and why not in seen:
            seen.append(why)
    return seen


def functions(stacks: dict[str, int]) -> dict[str, tuple[int, int]]:
    """name -> (self samples, total samples). Total counts a function once per stack, however
    often it recurses in it."""
    out: dict[str, list[int]] = {}
    for stack, count in stacks.items():
        frames = stack.split(";")
        for name in set(frames):
            out.setdefault(name, [0, 0])[1] += count
        out.setdefault(frames[-1], [0, 0])[0] += count
    return {k: (v[0], v[1]) for k, v in out.items()}


def moved(a: RoleProfile, b: RoleProfile, top: int = 12) -> list[Moved]:
    """The functions whose CPU per op changed most from A to B, by self time, then total."""
    fa, fb = functions(a.stacks), functions(b.stacks)
    rows = [Moved(name, a.ns_per_op(fa.get(name, (0, 0))[0]), b.ns_per_op(fb.get(name, (0, 0))[0]),
                  a.ns_per_op(fa.get(name, (0, 0))[1]), b.ns_per_op(fb.get(name, (0, 0))[1]))
            for name in set(fa) | set(fb)]
    rows.sort(key=lambda m: (-abs(m.self_delta), -abs(m.total_delta), m.name))
    return rows[:top]


def moved_table(a: RoleProfile, b: RoleProfile, top: int = 12) -> list[str]:
    """The lines of `moved` as kvb compare prints them, ns per op."""
    rows = [[short_name(m.name, 60), table.fmt_value(m.self_a), table.fmt_value(m.self_b),
             f"{m.self_delta:+.1f}", table.fmt_value(m.total_a), table.fmt_value(m.total_b),
             f"{m.total_delta:+.1f}"] for m in moved(a, b, top)]
    return table.render(rows, header=["function", "self A", "self B", "change", "total A",
                                      "total B", "change"], rule=True)


def compare_text(sides: list[list[Any]], labels: list[str], top: int = 12) -> str:
    """kvb compare: for each other side, per benchmark and role profiled on both sides, the
    functions whose CPU per op moved most. "" when no two sides have a profile in common."""
    profs = [of_documents(docs) for docs in sides]
    out: list[str] = []
    for label, other in zip(labels[1:], profs[1:]):
        for key, b in other.items():
            a = profs[0].get(key)
            if a is None or not a.ops or not b.ops or not (a.samples or b.samples):
                continue
            out.append(f"\nCPU profile, {key[0]} [{key[1]}]: where the time per op moved, "
                       f"A = {labels[0]}, B = {label} (ns/op; sampled "
                       f"{a.ns_per_op(a.samples):.1f} -> {b.ns_per_op(b.samples):.1f})")
            out.extend("  " + line for line in moved_table(a, b, top))
    return "\n".join(out)


# Kept whole outside template arguments (longest first). The same rule as C++'s ShortFrameName
# (src/profile/frame_name.h): tests/frame_names.txt holds the cases both must give.
_WHOLE = ("(anonymous namespace)", "operator<<=", "operator>>=", "operator<=>", "operator->*",
          "operator()", "operator<<", "operator>>", "operator<=", "operator>=", "operator->",
          "operator<", "operator>")


def short_name(frame: str, width: int = 0) -> str:
    """A frame without its parameter list and template arguments, for labels:
    "kvbench::(anonymous namespace)::MemorySession::Get(kvbench::Slice const&, ...)" ->
    "kvbench::(anonymous namespace)::MemorySession::Get" (the rule: src/profile/frame_name.h).
    `width` > 0 cuts it to that many characters, keeping the end (the function's own name)."""
    out, depth, i = [], 0, 0
    while i < len(frame):
        whole = next((w for w in _WHOLE if frame.startswith(w, i)), "") if depth == 0 else ""
        if whole:
            out.append(whole)
            i += len(whole)
            continue
        c = frame[i]
        if c == "<":
            if depth == 0:
                out.append("<>")
            depth += 1
        elif c == ">" and depth > 0:
            depth -= 1
        elif c == "(" and depth == 0 and i > 0:
            break  # the parameter list; what follows (const, [clone ...]) goes with it
        elif depth == 0:
            out.append(c)
        i += 1
    name = "".join(out).strip(" ") or frame
    return name if width <= 0 or len(name) <= width else "…" + name[-(width - 1):]


def folded_text(stacks: dict[str, int]) -> str:
    """flamegraph.pl / inferno / speedscope's input: "frame;frame;frame count" per line."""
    return "".join(f"{s} {n}\n" for s, n in sorted(stacks.items(), key=lambda x: (-x[1], x[0])))


def export_files(paths: list[str], out_dir: str, docs: list[Any]) -> int:
    """kvb export folded: DIR/<file>.<benchmark>.<role>.folded for every profiled role of every
    kvbench document (`docs`, loaded from `paths`). UsageError when none was profiled."""
    make_dirs(out_dir)
    written = 0
    for d in docs:
        name = os.path.splitext(os.path.basename(d.path))[0]
        for (bench, role), rp in of_document(d.doc).items():
            if not rp.samples:
                continue
            path = os.path.join(out_dir, f"{name}.{bench}.{role}.folded")
            write_text(path, folded_text(rp.stacks))
            print(path)
            written += 1
        for why in unavailable(d.doc):
            print(f"kvb: warning: {d.path}: not profiled: {why}", file=sys.stderr)
    if not written:
        raise UsageError(f"no CPU profile in {', '.join(paths)}: run kvbench with --profile "
                         "(docs/profile.md)")
    return 0
