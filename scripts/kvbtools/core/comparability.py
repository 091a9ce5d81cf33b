"""Before any ratio: do the sides measure the same work?

kvb compare reads what defines the work from each file's context, by the store's key fields
(core/fingerprint.py), in three groups:

- the workload: benchmark sizes (num, reads, writes, duration), key and value sizes, threads,
  seek_nexts, the write rate limit, compression, cache size, sync, the engine's options, the
  memory budget and IO-bound mode (kvbench_micro: its input and cache mode), and the crc32c
  kernel when KVBENCH_CRC32C forced one (crc32c/extend ran it, not the dispatched one). Sides
  whose workloads differ are NOT COMPARABLE: kvb prints `not comparable:` naming each
  difference with its values and exits 2, unless the user accepts them by name
  (--allow-different num,seed), and then they head the output and every page. The axis of the comparison is accepted
  without naming it: --by FIELD (engine when the engines differ: each engine's own options) and,
  with --store, the fields the selectors name.
- the build (preset, compiler, build type, flags, target, assertions) and
- the host (host name, CPU model, cores, memory): comparing builds and machines is what compare
  is for, so these differences are allowed, and named in the heading, never silent.

Files pooled into one side must agree on the workload too: a side mixing two workloads is not
comparable with anything. A field that a side's files do not record (an older kvbench) is not
compared. And a side built from a library's source tree (kvb matrix --from-source, kvb versions)
whose runs report another version of that library did not use the tree: check_library_versions
names it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from kvbtools.core import fingerprint
from kvbtools.core.errors import UsageError
from kvbtools.core.samples import Side

BUILD = set(fingerprint.KEY_BUILD)
DERIVED = ("reads", "writes")
HOST = set(fingerprint.KEY_HOST)


def short(name: str) -> str:
    """workload.num -> num, engine.memory_budget -> memory_budget (the flags' own names)."""
    return name.split(".", 1)[1] if name.startswith(("workload.", "engine.")) else name


def group(name: str) -> str:
    return "build" if name in BUILD else "host" if name in HOST else "workload"


def key_of(kind: str, ctx: dict) -> dict[str, str]:
    """The key fields of one file's context (core/fingerprint.py), by short name. crc32c, in the
    store's key only when a kernel was forced, is compared wherever the file records the choice:
    "dispatched" against "forced hw_1way" is a difference."""
    key = {short(k): v for k, v in fingerprint.key_fields(kind, ctx).items()}
    if fingerprint.crc32c_forced(kind, ctx) == "":
        key[fingerprint.KEY_CRC32C] = "dispatched"
    return key


@dataclass
class Difference:
    name: str                       # short name: num, preset, host
    values: list[tuple[str, str]]   # (side label, value), the base first
    pooled: bool = False            # the values of one side's files (values: that side's)

    @property
    def group(self) -> str:
        return group(self.name)

    def text(self) -> str:
        if self.pooled:
            return (f"{self.name}: " + " and ".join(v for _, v in self.values)
                    + f" pooled in one side, {self.values[0][0]}")
        return f"{self.name}: " + ", ".join(f"{v} in {label}" for label, v in self.values)


def differences(sides: list[Side]) -> tuple[list[Difference], list[Difference]]:
    """(between sides, within a side): the key fields whose values differ; a field is compared
    only where every file records it."""
    keys = [[key_of(s.kind, ctx) for ctx in s.contexts] for s in sides]
    names = sorted({n for ks in keys for k in ks for n in k})
    between, within = [], []
    for name in names:
        if not all(name in k for ks in keys for k in ks):
            continue
        if name in DERIVED and all(k[name] == k.get("num") for ks in keys for k in ks):
            continue  # reads and writes default to num: num's difference names them
        for s, ks in zip(sides, keys):
            vals = sorted({k[name] for k in ks})
            if len(vals) > 1:
                within.append(Difference(name, [(s.label, v) for v in vals], pooled=True))
        per_side = [(s.label, ks[0][name]) for s, ks in zip(sides, keys) if ks]
        if len({v for _, v in per_side}) > 1:
            between.append(Difference(name, per_side))
    return between, within


def known_names() -> list[str]:
    return sorted({short(k) for k in (*fingerprint.KEY_WORKLOAD, "engine.memory_budget",
                                      "engine.io_bound", "latency_sample",
                                      *fingerprint.KEY_MICRO_INPUT, fingerprint.KEY_CRC32C)}
                  | BUILD | HOST)


def parse_allowed(text: Iterable[str] | None) -> set[str]:
    """--allow-different num,seed (repeatable) -> {"num", "seed"}; unknown names refused."""
    out: set[str] = set()
    for item in text or []:
        for name in item.split(","):
            name = short(name.strip())
            if not name:
                continue
            if name not in known_names():
                raise UsageError(f"--allow-different {name}: not a field that defines the "
                                 f"work (known: {', '.join(known_names())})")
            out.add(name)
    return out


def check(sides: list[Side], allowed: set[str], axes: set[str]) -> list[str]:
    """The heading lines on what differs between the sides; UsageError 'not comparable: ...'
    when the workloads differ in a field neither `allowed` nor an axis."""
    between, within = differences(sides)
    axes = {short(a) for a in axes} | {short(a).rsplit(".", 1)[-1] for a in axes}
    if "engine" in axes:  # each engine's own options and lmdb's lack of a cache are its axis
        axes |= {"engine_options"}
    refused = [d for d in within if d.group == "workload" and d.name not in allowed]
    refused += [d for d in between if d.group == "workload" and d.name not in allowed | axes]
    if refused:
        raise UsageError(
            "not comparable: the sides measured different work:\n"
            + "\n".join(f"  {d.text()}" for d in refused)
            + "\naccept these differences with --allow-different "
            + ",".join(dict.fromkeys(d.name for d in refused))
            + ", or compare runs of one workload")
    lines = []
    accepted = [d for d in within + between if d.group == "workload" and d.name in allowed]
    for d in accepted:
        lines.append(f"WARNING: not comparable, accepted with --allow-different: {d.text()}")
    for d in between:
        if d.group == "workload" and d.name in axes and d.name not in allowed:
            lines.append(f"the axis of this comparison: {d.text()}")
    for g in ("build", "host"):
        ds = [d for d in between if d.group == g]
        if ds:
            lines.append(f"the sides' {g}s differ: " + "; ".join(d.text() for d in ds))
    return lines


# ---- the library a build used: kvb matrix --from-source and kvb versions -----------------------

def reported_versions(ctx: dict[str, Any], dep: str) -> set[str]:
    """The versions of `dep` a run says it used: kvbench_micro's context keys, or kvbench's
    context.libraries (the shared objects actually loaded)."""
    out = set()
    for key in (f"{dep}_library_version", f"{dep}_version"):
        if isinstance(ctx.get(key), str):
            out.add(ctx[key])
    for lib in ctx.get("libraries", []) if isinstance(ctx.get("libraries"), list) else []:
        if isinstance(lib, dict) and dep in str(lib.get("name", "")).lower():
            out.add(str(lib.get("version", "")))
    engine = ctx.get("engine")
    if isinstance(engine, dict) and engine.get("name") == dep:
        out.add(str(engine.get("version", "")))
    return {v for v in out if v}


def check_library_versions(sides: list[Side],
                           expect: dict[str, list[list[str]]]) -> list[str]:
    """Messages for sides whose runs report a version of the library other than the one their
    source tree declares (e.g. CMake fell back to the system's library)."""
    out = []
    for s in sides:
        if s.label not in expect:
            continue
        for dep, version in expect[s.label]:
            seen = set().union(*(reported_versions(ctx, dep) for ctx in s.contexts))
            token = re.compile(rf"(?<![\d.]){re.escape(version)}(?![\d.])")
            if seen and not any(token.search(v) for v in seen):
                out.append(f"{s.label}: the runs report {dep} {', '.join(sorted(seen))}, not "
                           f"{version}: the build did not use that tree")
    return out
