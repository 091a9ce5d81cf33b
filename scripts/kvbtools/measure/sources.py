"""Which library a source tree or install prefix holds, and its version, from its headers; and
what tells apart trees of one version (their commits: kvb versions' labels).

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
from kvbtools.measure.runner import progress


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


def parse_source_args(items: list[str]) -> dict[str, str]:
    """--source DEP=DIR ... -> {dep: dir}."""
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--source {item!r}: expected DEP=DIR")
        dep, d = item.split("=", 1)
        out[manifest.check_buildable(dep).name] = d
    return out


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


def commit_name(d: str) -> str:
    """'efcfa3b v1.9.3-12-gefcfa3b' for the top of a git work tree ('efcfa3b' when describe
    finds no tag, '-dirty' when it has changes), else ''."""
    def git(*a: str) -> str:
        p = subprocess.run(["git", "-C", d, *a], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else ""
    top = git("rev-parse", "--show-toplevel")
    if not top or os.path.realpath(top) != os.path.realpath(d):
        return ""
    short = git("rev-parse", "--short", "HEAD")
    described = git("describe", "--tags", "--always", "--dirty")
    return short if described in ("", short) else f"{short} {described}"


def tree_names(dirs: list[str], versions: list[str]) -> list[str]:
    """What tells apart trees that declare the same version: the commit of a git tree, else the
    directory's name as given, else the whole path as given; '' for a version given once."""
    out = [""] * len(dirs)
    for version in set(versions):
        same = [i for i, v in enumerate(versions) if v == version]
        if len(same) < 2:
            continue
        real = [os.path.realpath(dirs[i]) for i in same]
        if len(set(real)) < len(real):
            raise UsageError(f"{' and '.join(dirs[i] for i in same)}: a tree given twice "
                             f"({version}); give each version once")
        names = [commit_name(dirs[i]) or os.path.basename(os.path.normpath(dirs[i]))
                 for i in same]
        if len(set(names)) < len(names):
            names = [commit_name(dirs[i]) or dirs[i] for i in same]
        if len(set(names)) < len(names):
            raise UsageError(f"{' and '.join(dirs[i] for i in same)} are the same commit "
                             f"({version}, {names[0]}): give each version once")
        for i, n in zip(same, names):
            out[i] = n
    return out
