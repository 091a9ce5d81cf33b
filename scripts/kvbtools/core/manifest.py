"""The libraries and engines kvbench links, from cmake/deps.json (the one list; CMake reads it
too), and the engines a kvbench binary was built with.

A new engine or library is an entry in cmake/deps.json: nothing in kvbtools names them.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.host import ROOT

DEPS_JSON = os.path.join(ROOT, "cmake", "deps.json")


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


def _dep(d: dict[str, Any]) -> Dep:
    return Dep(d["name"], bool(d["engine"]), d.get("description", ""),
               bool(d["source_build"]),
               tuple(SourceTree(t["marker"], tuple(t.get("also", [])), t["version_file"])
                     for t in d.get("source_trees", [])),
               d.get("prefix_version_file", ""), tuple(d.get("version_macros", [])),
               d.get("micro_filter", ""))


@lru_cache(maxsize=None)
def deps() -> dict[str, Dep]:
    """Every entry of cmake/deps.json, by name, in its order."""
    try:
        with open(DEPS_JSON, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("schema") != "kvbench-deps" or doc.get("schema_version") != 1:
            raise ValueError("not a kvbench-deps version 1 document")
        return {d["name"]: _dep(d) for d in doc["deps"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RunError(f"{DEPS_JSON}: cannot read the dependency manifest: {e}") from None


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


def _run(kvbench: str, flag: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([kvbench, flag], capture_output=True, text=True, timeout=60,
                              errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"cannot run {kvbench} {flag}: {e}") from None


def default_engine() -> str:
    """The engine kvb runs when none is named: the first engine of cmake/deps.json."""
    return next(d.name for d in deps().values() if d.engine)
