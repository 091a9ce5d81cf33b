"""The configure presets of CMakePresets.json as kvb builds them: inherited cache variables and
toolchain resolved, and whether this host can build each (matrix, versions, bisect, callgrind)."""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field

from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.host import ROOT, host_arch

@dataclass
class Preset:
    name: str
    cache: dict[str, str] = field(default_factory=dict)
    toolchain: str = ""
    compilers: list[str] = field(default_factory=list)

    @property
    def arch(self) -> str:
        return self.cache.get("KVBENCH_TARGET_ARCH", "")


def load_presets(root: str = ROOT) -> dict[str, Preset]:
    """Visible configure presets of CMakePresets.json, with inherited cache variables and
    toolchain resolved."""
    path = os.path.join(root, "CMakePresets.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise RunError(f"{path}: {e}") from None
    raw = {p["name"]: p for p in doc.get("configurePresets", [])}

    def resolve(name: str) -> tuple[dict[str, str], str]:
        p = raw[name]
        cache: dict[str, str] = {}
        tool = ""
        inherits = p.get("inherits", [])
        for parent in [inherits] if isinstance(inherits, str) else inherits:
            c, t = resolve(parent)
            for k, v in c.items():
                cache.setdefault(k, v)  # the first parent wins, as in CMake
            tool = tool or t
        for k, v in p.get("cacheVariables", {}).items():
            cache[k] = v["value"] if isinstance(v, dict) else str(v)
        return cache, p.get("toolchainFile", tool)

    out = {}
    for name, p in raw.items():
        if p.get("hidden"):
            continue
        cache, tool = resolve(name)
        tool = tool.replace("${sourceDir}", root)
        out[name] = Preset(name, cache, tool, _toolchain_compilers(tool))
    return out


def _toolchain_compilers(path: str) -> list[str]:
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    return re.findall(r"set\(\s*CMAKE_(?:C|CXX)_COMPILER\s+\"?([^\s\")]+)", text)


def why_not_buildable(p: Preset) -> str:
    """'' when this host can build the preset, else the reason."""
    if p.arch and p.arch != host_arch():
        return (f"its architecture {p.arch} is not this host's ({host_arch()}); cross builds "
                "are not supported")
    missing = [c for c in p.compilers if shutil.which(c) is None]
    if missing:
        return f"compiler {', '.join(missing)} not found on PATH"
    return ""


def select_presets(names: list[str], elsewhere: bool = False
                   ) -> tuple[list[Preset], list[tuple[str, str]]]:
    """The buildable presets among `names`, and (name, reason) for those skipped. Unknown names
    raise UsageError listing the valid ones. `elsewhere`: built on a cluster's nodes of each
    preset's architecture, with their compilers (docs/fleet.md): none is skipped here."""
    presets = load_presets()
    unknown = [n for n in names if n not in presets]
    if unknown:
        raise UsageError(f"unknown preset {', '.join(unknown)}; valid presets: "
                          f"{', '.join(presets)}")
    ok, skipped = [], []
    for n in names:
        why = "" if elsewhere else why_not_buildable(presets[n])
        if why:
            skipped.append((n, why))
        else:
            ok.append(presets[n])
    return ok, skipped
