"""Which library a source tree or install prefix holds, and its version, from its headers.

A directory that does not have the library's marker header (with its version macros) is refused
before anything is built, so a mistyped path never turns into a confusing CMake failure.
"""
from __future__ import annotations

import os
import re
import subprocess

from kvbtools.results import ResultError
from kvbtools.runner import ROOT, check_dep, progress

# dep -> (headers to look for in a source tree, in a prefix, version macros MAJOR/MINOR/PATCH)
MARKERS: dict[str, tuple[list[str], list[str], tuple[str, str, str]]] = {
    "lz4": (["lib/lz4.h"], ["include/lz4.h"],
            ("LZ4_VERSION_MAJOR", "LZ4_VERSION_MINOR", "LZ4_VERSION_RELEASE")),
    "zstd": (["lib/zstd.h"], ["include/zstd.h"],
             ("ZSTD_VERSION_MAJOR", "ZSTD_VERSION_MINOR", "ZSTD_VERSION_RELEASE")),
    "xxhash": (["xxhash.h"], ["include/xxhash.h"],
               ("XXH_VERSION_MAJOR", "XXH_VERSION_MINOR", "XXH_VERSION_RELEASE")),
    "rocksdb": (["include/rocksdb/version.h"], ["include/rocksdb/version.h"],
                ("ROCKSDB_MAJOR", "ROCKSDB_MINOR", "ROCKSDB_PATCH")),
    "lmdb": (["lmdb.h", "libraries/liblmdb/lmdb.h"], ["include/lmdb.h"],
             ("MDB_VERSION_MAJOR", "MDB_VERSION_MINOR", "MDB_VERSION_PATCH")),
    "wiredtiger": (["RELEASE_INFO"], ["include/wiredtiger.h"],
                   ("WIREDTIGER_VERSION_MAJOR", "WIREDTIGER_VERSION_MINOR",
                    "WIREDTIGER_VERSION_PATCH")),
}


def _macro(text: str, name: str) -> str | None:
    # "#define NAME 1" in headers; "NAME=1" in WiredTiger's RELEASE_INFO.
    m = re.search(rf"^\s*(?:#\s*define\s+{name}\s+|{name}\s*=\s*)\(?(\d+)", text, re.M)
    return m.group(1) if m else None


def detect(dep: str, directory: str, *, prefix: bool = False) -> str:
    """The version of `dep` in a source tree (or an install prefix), e.g. '1.9.4'. Raises
    ResultError when the directory is not that library."""
    dep = check_dep(dep)
    kind = "install prefix" if prefix else "source tree"
    if not os.path.isdir(directory):
        raise ResultError(f"{directory}: not a directory")
    src_markers, prefix_markers, macros = MARKERS[dep]
    candidates = prefix_markers if prefix else src_markers
    for rel in candidates:
        path = os.path.join(directory, rel)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            raise ResultError(f"{path}: cannot read: {e.strerror}") from None
        parts = [_macro(text, m) for m in macros]
        if parts[0] is None or parts[1] is None:
            continue
        return ".".join(p for p in parts if p is not None)
    raise ResultError(f"{directory} is not a {dep} {kind}: no "
                      f"{' or '.join(candidates)} with {macros[0]}")


def parse_source_args(items: list[str]) -> dict[str, str]:
    """--source DEP=DIR ... -> {dep: dir}."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ResultError(f"--source {item!r}: expected DEP=DIR")
        dep, d = item.split("=", 1)
        out[check_dep(dep)] = d
    return out


def fetch(dep: str, version: str) -> str:
    """A source tree of dep at version, fetched once with scripts/get-sources.sh into
    build/kvb/sources/<dep>-<version> (the script prints the tree's path as its last line)."""
    dest = os.path.join(ROOT, "build", "kvb", "sources", f"{dep}-{version}")
    script = os.path.join(ROOT, "scripts", "get-sources.sh")
    if not os.path.exists(script):
        if os.path.isdir(dest) and os.listdir(dest):
            return dest
        raise ResultError(f"{dep}@{version}: scripts/get-sources.sh is not in this tree "
                          "(it comes with the source-build branch); give the tree with "
                          f"--source instead")
    progress(f"fetching {dep} {version} source (scripts/get-sources.sh) into "
             f"{os.path.relpath(dest, ROOT)}")
    p = subprocess.run([script, dep, version, dest], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise ResultError(f"scripts/get-sources.sh {dep} {version} failed ({p.returncode}):\n"
                          f"{(p.stderr or p.stdout).strip()[-2000:]}")
    lines = [x.strip() for x in p.stdout.splitlines() if x.strip()]
    return lines[-1] if lines and os.path.isdir(lines[-1]) else dest
