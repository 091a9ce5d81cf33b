"""This checkout and this host: the repository root, the host's native preset and where its
build puts kvbench and kvbench_micro (the same rule as scripts/host-preset.sh)."""
from __future__ import annotations

import os
import platform
import re
import subprocess

from kvbtools.core.errors import UsageError

# scripts/kvbtools/core/host.py -> the repository
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 3))
KVB = os.path.join(ROOT, "scripts", "kvb")
# Where each binary sits in a build tree.
BINARIES = {"kvbench": os.path.join("src", "kvbench"),
            "kvbench_micro": os.path.join("bench", "kvbench_micro")}


def host_arch() -> str:
    """x86_64 or aarch64 (or whatever else the machine says)."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def native_preset(compiler: str = "gcc") -> str:
    """The native configure preset of this host for a compiler: x86-gcc-native, arm-clang-native."""
    arch = {"x86_64": "x86", "aarch64": "arm"}.get(host_arch())
    if arch is None:
        raise UsageError(f"no preset for this machine ({host_arch()}); give the binary's path")
    return f"{arch}-{compiler}-native"


def binary(name: str, given: str | None, flag: str) -> str:
    """`given`, or the binary of the host's native gcc build (build/<preset>/...): checked to be
    an executable file, else a UsageError that says how to get one."""
    path = given or os.path.join(ROOT, "build", native_preset(), BINARIES[name])
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        how = "" if given else (f" (the default; build it with cmake --workflow --preset "
                                f"{native_preset()}, or give {flag} PATH)")
        raise UsageError(f"{flag} {path}: not an executable file{how}")
    return path


def tool_version() -> str:
    """kvbench's version and this checkout's commit, as `kvbench --version` prints them:
    '0.1.0 (git 2d1af44750b4)'. The version is the project() line of CMakeLists.txt (one
    fact, one place); the commit is 'unknown' outside a git checkout."""
    version = "unknown"
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"project\(\s*kvbench\s+VERSION\s+([0-9.]+)", f.read())
        version = m.group(1) if m else version
    except OSError:
        pass
    try:
        p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        commit = p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    return f"{version} (git {commit})"
