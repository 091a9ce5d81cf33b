"""Which library a source tree or install prefix holds, and its version, from its headers; and
source trees fetched by version (scripts/get-sources.sh, Debian's sources).

A directory that does not have the library's marker header (with its version macros) is refused
before anything is built, so a mistyped path never turns into a confusing CMake failure.
"""
from __future__ import annotations

import os
import re
import subprocess

from kvbtools.core import manifest
from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.host import ROOT
from kvbtools.core.output import progress


def _macro(text: str, name: str) -> str | None:
    # "#define NAME 1" in headers; "NAME=1" in WiredTiger's RELEASE_INFO.
    m = re.search(rf"^\s*(?:#\s*define\s+{name}\s+|{name}\s*=\s*)\(?(\d+)", text, re.M)
    return m.group(1) if m else None


def _version(path: str, macros: tuple[str, ...]) -> str | None:
    """MAJOR.MINOR[.PATCH] from the macros in a file; None when MAJOR or MINOR is not there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    parts = [_macro(text, m) for m in macros]
    if len(parts) < 2 or parts[0] is None or parts[1] is None:
        return None
    return ".".join(p for p in parts if p is not None)


def detect(dep: str, directory: str, *, prefix: bool = False) -> str:
    """The version of `dep` in a source tree (or an install prefix), e.g. '1.9.4', found by the
    markers of cmake/deps.json. Raises UsageError when the directory is not that library."""
    d = manifest.check_buildable(dep)
    kind = "install prefix" if prefix else "source tree"
    if not os.path.isdir(directory):
        raise UsageError(f"{directory}: not a directory")
    if prefix:
        layouts = [(d.prefix_version_file, (), d.prefix_version_file)]
    else:
        layouts = [(t.marker, t.also, t.version_file) for t in d.source_trees]
    for marker, also, version_file in layouts:
        if not all(os.path.isfile(os.path.join(directory, f)) for f in (marker, *also)):
            continue
        version = _version(os.path.join(directory, version_file), d.version_macros)
        if version is not None:
            return version
    raise UsageError(f"{directory} is not a {d.name} {kind}: no "
                     f"{' or '.join(m for m, _, _ in layouts)} with {d.version_macros[0]}")


def fetched_dir(dep: str, version: str) -> str:
    """Where fetch puts dep at version: build/kvb/sources/<dep>-<version>."""
    return os.path.join(ROOT, "build", "kvb", "sources", f"{dep}-{version}")


def _fetched(dest: str, dep: str, version: str) -> bool:
    """Whether `dest` holds dep at version as get-sources.sh unpacked it (its stamp says so)."""
    try:
        with open(os.path.join(dest, ".kvbench-source"), encoding="utf-8") as f:
            stamp = set(f.read().split())
    except OSError:
        return False
    return {f"dep={dep}", f"version={version}"} <= stamp


def fetch(dep: str, version: str) -> str:
    """A source tree of dep at version, fetched once with scripts/get-sources.sh into
    fetched_dir (the script prints the tree's path as its last line); a tree fetched before is
    used as it is, without the script."""
    dest = fetched_dir(dep, version)
    if _fetched(dest, dep, version):
        return dest
    script = os.path.join(ROOT, "scripts", "get-sources.sh")
    if not os.path.exists(script):
        if os.path.isdir(dest) and os.listdir(dest):
            return dest
        raise UsageError(f"{dep}@{version}: scripts/get-sources.sh is not in this tree "
                          "(it comes with the source-build branch); give the tree with "
                          f"--source instead")
    progress(f"fetching {dep} {version} source (scripts/get-sources.sh) into "
             f"{os.path.relpath(dest, ROOT)}")
    p = subprocess.run([script, dep, version, dest], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RunError(f"scripts/get-sources.sh {dep} {version} failed ({p.returncode}):\n"
                          f"{(p.stderr or p.stdout).strip()[-2000:]}")
    lines = [x.strip() for x in p.stdout.splitlines() if x.strip()]
    return lines[-1] if lines and os.path.isdir(lines[-1]) else dest


def micro_libraries() -> list[str]:
    """The libraries whose own code kvbench_micro's rows run and kvb can build from source, the
    engines left out (a RocksDB build takes most of an hour): lz4, zstd, xxhash (the manifest's
    micro_rows and source_build)."""
    return [d.name for d in manifest.deps().values()
            if d.micro_rows and d.source_build and not d.engine]


def debian_trees(deps: list[str], get: bool = True) -> dict[str, tuple[str, str]]:
    """dep -> (source tree, version) of each of `deps` at the version installed here (its
    headers under /usr: Debian's -dev package), fetched once from Debian's source package
    (fetch); `get` False: where it is or will be, nothing fetched (--dry-run). RunError naming
    what failed, and --system-libs, when one cannot be had."""
    out = {}
    for dep in deps:
        what = f"{dep} at the version installed here"
        try:
            version = detect(dep, "/usr", prefix=True)
            what = f"{dep} {version}"
            out[dep] = (fetch(dep, version) if get else fetched_dir(dep, version), version)
        except (RunError, UsageError) as e:
            raise RunError(f"cannot get the source of {what} to build it with each preset "
                           f"(a comparison of builds compiles {', '.join(deps)} by default): "
                           f"{e}; --system-libs compares the builds on the installed "
                           "libraries instead") from None
    return out

