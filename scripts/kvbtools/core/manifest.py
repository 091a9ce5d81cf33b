"""The libraries and engines kvbench links, from cmake/deps.json (the one list; CMake reads it
too), and the engines a kvbench binary was built with.

A new engine or library is an entry in cmake/deps.json: nothing in kvbtools names them.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kvbtools.core import deps_json
from kvbtools.core.errors import UsageError
from kvbtools.core.host import BINARIES, ROOT, native_preset

DEPS_JSON = deps_json.DEPS_JSON


@dataclass(frozen=True)
class SourceTree:
    """One layout of a library's source tree: `marker` and every `also` file exist in it, and
    `version_file` holds the version macros."""
    marker: str
    also: tuple[str, ...]
    version_file: str


@dataclass(frozen=True)
class Dep:
    name: str
    engine: bool                       # a storage engine kvbench can run (--engine=name)
    description: str
    source_build: bool                 # kvb can build it from source (KVBENCH_<NAME>_SOURCE_DIR)
    source_trees: tuple[SourceTree, ...]
    prefix_version_file: str           # in an install prefix (KVBENCH_<NAME>_ROOT)
    version_macros: tuple[str, ...]    # MAJOR, MINOR, PATCH
    micro_filter: str                  # its kvbench_micro benchmarks ("" when it has none)
    micro_rows: str = ""               # the benchmarks that run its own code (a regex; "": none)


def _dep(d: dict[str, Any]) -> Dep:
    return Dep(d["name"], bool(d["engine"]), d.get("description", ""),
               bool(d["source_build"]),
               tuple(SourceTree(t["marker"], tuple(t.get("also", [])), t["version_file"])
                     for t in d.get("source_trees", [])),
               d.get("prefix_version_file", ""), tuple(d.get("version_macros", [])),
               d.get("micro_filter", ""), d.get("micro_rows", ""))


@lru_cache(maxsize=None)
def deps() -> dict[str, Dep]:
    """Every entry of cmake/deps.json, by name, in its order."""
    try:
        return {d["name"]: _dep(d) for d in deps_json.entries()}
    except (KeyError, TypeError) as e:
        raise deps_json.unreadable(e) from None


def buildable() -> list[str]:
    """Libraries kvb can build from source or take from a prefix (matrix, versions, bisect)."""
    return [d.name for d in deps().values() if d.source_build]


def is_engine(name: str) -> bool:
    d = deps().get(name)
    return d is not None and d.engine


def check_buildable(name: str) -> Dep:
    """The dependency called `name` (any case), or a UsageError naming the valid ones."""
    d = deps().get(name.lower())
    if d is None or not d.source_build:
        raise UsageError(f"unknown dependency {name!r}; valid: {', '.join(buildable())}")
    return d


# ---- the engines of a kvbench binary ---------------------------------------------------------

def engines_of(kvbench: str) -> dict[str, str]:
    """The engines compiled into `kvbench`, each "storage" or "reference", from
    `kvbench --list-engines` (one `name<TAB>kind` line per engine)."""
    p = _run(kvbench, "--list-engines")
    if p.returncode == 2 and "--list-engines" in p.stderr:
        return _engines_from_version(kvbench)
    if p.returncode != 0:
        raise UsageError(f"{kvbench} --list-engines failed (exit {p.returncode}): "
                         f"{p.stderr.strip()[-300:]}")
    out = {}
    for line in p.stdout.splitlines():
        name, _, kind = line.partition("\t")
        if name and kind in ("storage", "reference"):
            out[name] = kind
    if not out:
        raise UsageError(f"{kvbench} --list-engines printed no engine")
    return out


def _engines_from_version(kvbench: str) -> dict[str, str]:
    """FALLBACK for binaries built before `--list-engines` existed: the `engines:` line of
    `kvbench --version` ("engines: rocksdb wiredtiger(not compiled in) lmdb memory null"), an
    engine of the manifest counted as storage, any other as reference. Remove once every
    kvbench in use has --list-engines."""
    p = _run(kvbench, "--version")
    for line in p.stdout.splitlines():
        if line.startswith("engines:"):
            listed = re.sub(r"\([^)]*\)", "(missing)", line[len("engines:"):]).split()
            return {w: "storage" if is_engine(w) else "reference"
                    for w in listed if "(" not in w}
    raise UsageError(f"{kvbench} is not a kvbench binary (no engines in its --version)")


@lru_cache(maxsize=None)
def _help(kvbench: str) -> str:
    p = _run(kvbench, "--help")
    if p.returncode != 0 or "Benchmarks:" not in p.stdout:
        raise UsageError(f"{kvbench} is not a kvbench binary (no benchmarks in its --help)")
    return p.stdout


def benchmarks_of(kvbench: str) -> list[str]:
    """The benchmarks and suites `kvbench --help` lists (its registry's tables: a line
    `  name  what it does` each, under "Benchmarks:" and "Suites ...:")."""
    out, section = [], ""
    for line in _help(kvbench).splitlines():
        if line and not line[0].isspace():
            section = line
        elif section.startswith(("Benchmarks", "Suites")) and line.startswith("  ") \
                and not line.startswith("   "):
            out.append(line.split()[0])
    return out


def flags_of(kvbench: str) -> set[str]:
    """The flags `kvbench --help` lists, without their dashes."""
    return {line[4:].split()[0] for line in _help(kvbench).splitlines()
            if line.startswith("  --")}


def check_names(kvbench: str, engines: list[str], workloads: str = "",
                flags: list[str] | None = None) -> None:
    """Before the first run: a UsageError for an engine not compiled into `kvbench`, a workload
    of `workloads` (--benchmarks, repeat syntax allowed) it does not know, or one of `flags`
    (--name=value, --name, --noname) it does not take. kvbench checks the values itself."""
    available = engines_of(kvbench)
    for e in engines:
        if e not in available:
            raise UsageError(f"--engines: engine '{e}' is not compiled into {kvbench} (it has: "
                             f"{', '.join(available)})")
    known = benchmarks_of(kvbench)
    for w in (w.split("[", 1)[0] for w in workloads.split(",") if w):
        if w not in known:
            raise UsageError(f"unknown workload '{w}' (kvbench knows: {', '.join(known)})")
    names = flags_of(kvbench) if flags else set()
    for a in flags or []:
        name = a[2:].split("=", 1)[0] if a.startswith("--") else ""
        if not name or (name not in names and not (name.startswith("no") and name[2:] in names
                                                   and "=" not in a)):
            raise UsageError(f"{a!r} is not a flag of {kvbench} (kvbench --help lists them; "
                             "write --flag=value)")


def known_engines() -> set[str] | None:
    """Every engine name a kvbench of this checkout may know, for a check before anything is
    built: the manifest's engines and those of the host's own build (the reference engines);
    None when there is no such build to ask."""
    own = os.path.join(ROOT, "build", native_preset(), BINARIES["kvbench"])
    if not os.access(own, os.X_OK) or not os.path.isfile(own):
        return None
    return {d.name for d in deps().values() if d.engine} | set(engines_of(own))


def check_flags(kvbench: str, flags: list[str]) -> None:
    """`kvbench --check-flags FLAGS`: every check kvbench makes of a command line before a run
    (ranges, sizes, the engine's limits), nothing run; its usage error (exit 2) is UsageError
    with kvbench's message. A kvbench from before --check-flags is left to check_names."""
    p = subprocess.run([kvbench, "--check-flags", *flags], capture_output=True, text=True)
    if p.returncode != 2 or "unknown flag --check-flags" in p.stderr:
        return  # valid; or a kvbench that cannot say (its failure shows in the run)
    why = next((ln for ln in p.stderr.splitlines() if ln.startswith("kvbench: ")),
               p.stderr.strip()[-500:]).removeprefix("kvbench: ")
    raise UsageError(f"kvbench refuses the flags of a run: {why} (kvbench {' '.join(flags)})")


def check_known_engines(engines: list[str]) -> None:
    """Before anything is built: an engine no kvbench of this checkout knows (known_engines;
    skipped without a host build) is bad input. Each build's kvbench is asked again
    (check_names) once it is built."""
    known = known_engines() if engines else None
    for e in engines if known is not None else []:
        if e not in known:
            raise UsageError(f"--engines: unknown engine '{e}' (known: {', '.join(sorted(known))})")


def _run(kvbench: str, flag: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([kvbench, flag], capture_output=True, text=True, timeout=60,
                              errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot run {kvbench} {flag}: {e}") from None


def default_engine() -> str:
    """The engine kvb runs when none is named: the first engine of cmake/deps.json."""
    return next(d.name for d in deps().values() if d.engine)
