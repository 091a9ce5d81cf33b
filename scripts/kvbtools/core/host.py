"""This checkout and this host: the repository root, the host's native preset and where its
build puts kvbench and kvbench_micro (the same rule as scripts/host-preset.sh)."""
from __future__ import annotations

import os
import platform

from kvbtools.core.errors import UsageError
from kvbtools.core.version import ROOT  # the repository: host.ROOT to its users

KVB = os.path.join(ROOT, "scripts", "kvb")
# Where each binary sits in a build tree.
BINARIES = {"kvbench": os.path.join("src", "kvbench"),
            "kvbench_micro": os.path.join("bench", "kvbench_micro")}


def host_arch() -> str:
    """x86_64 or aarch64 (or whatever else the machine says)."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def cpu_model() -> str:
    """The CPU as /proc/cpuinfo names it: its model name (x86), else its implementer and part
    (ARM: 'CPU implementer 0x41, part 0xd0c'), else the machine's architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            info = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        info = {}
    info = {k.strip(): v.strip() for k, v in info.items()}
    if info.get("model name"):
        return info["model name"]
    if info.get("CPU implementer") and info.get("CPU part"):
        return f"CPU implementer {info['CPU implementer']}, part {info['CPU part']}"
    return host_arch()


def native_preset(compiler: str = "gcc") -> str:
    """The native configure preset of this host for a compiler: x86-gcc-native, arm-clang-native."""
    arch = {"x86_64": "x86", "aarch64": "arm"}.get(host_arch())
    if arch is None:
        raise UsageError(f"no preset for this machine ({host_arch()}); give the binary's path")
    return f"{arch}-{compiler}-native"


def binary_path(name: str, given: str | None) -> str:
    """`given`, or the binary of the host's native gcc build (build/<preset>/...), unchecked."""
    return given or os.path.join(ROOT, "build", native_preset(), BINARIES[name])


def binary(name: str, given: str | None, flag: str) -> str:
    """binary_path, checked to be an executable file, else a UsageError that says how to get
    one."""
    path = binary_path(name, given)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        how = "" if given else (f" (the default; build it with cmake --workflow --preset "
                                f"{native_preset()}, or give {flag} PATH)")
        raise UsageError(f"{flag} {path}: not an executable file{how}")
    return path


