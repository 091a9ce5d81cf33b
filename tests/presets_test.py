"""What `cmake --preset P` says on a machine that P is not for (cmake/KvbenchFlags.cmake).

Every arm-* preset configured on x86 (and every x86-* preset on aarch64, simulated with
KVBENCH_PRETEND_HOST_ARCH) must stop with a non-zero exit and a message that names the preset
itself and the ways to build it here: the emulated arm64 root (scripts/arm64-root.sh, with the
design card's command for that preset) and the arm64-cross-* presets. Each configure is in a fresh
binary tree of its own, as in a fresh clone, never in the checkout's build/.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CMAKE = "cmake"  # --cmake


def presets() -> dict[str, dict[str, Any]]:
    with open(ROOT / "CMakePresets.json", encoding="utf-8") as f:
        return {p["name"]: p for p in json.load(f)["configurePresets"]}


def target_arch(table: dict[str, dict[str, Any]], name: str) -> str:
    """KVBENCH_TARGET_ARCH of preset `name`, through its inherits (the first one that sets it)."""
    preset = table[name]
    if "KVBENCH_TARGET_ARCH" in preset.get("cacheVariables", {}):
        return preset["cacheVariables"]["KVBENCH_TARGET_ARCH"]
    inherits = preset.get("inherits", [])
    for parent in [inherits] if isinstance(inherits, str) else inherits:
        arch = target_arch(table, parent)
        if arch:
            return arch
    return ""


def host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def configure(preset: str, pretend: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pretend:
        env["KVBENCH_PRETEND_HOST_ARCH"] = pretend
    with tempfile.TemporaryDirectory(prefix="kvb-presets.") as tmp:
        return subprocess.run([CMAKE, "--preset", preset, "-B", f"{tmp}/build"], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)


def flat(text: str) -> str:
    """CMake's message, its indentation and line breaks folded into single spaces."""
    return " ".join(text.split())


class OtherMachinePresetsTest(unittest.TestCase):
    def check_refusals(self, arch: str, host: str, check: Callable[[str, str], None]) -> None:
        """Configures each x86-*/arm-* preset for `arch`, in a subtest of its own, on a `host`
        machine (this one, or simulated): it must fail, and check(preset, message) must pass on
        its message (folded to one line)."""
        table = presets()
        names = [n for n, p in table.items() if not p.get("hidden")
                 and n.split("-")[0] in ("x86", "arm") and target_arch(table, n) == arch]
        self.assertTrue(names, f"no {arch} preset in CMakePresets.json")
        pretend = None if host_arch() == host else host
        for name in names:
            with self.subTest(preset=name):
                out = configure(name, pretend)
                text = flat(out.stdout + out.stderr)
                self.assertNotEqual(out.returncode, 0, text)
                check(name, text)

    def test_arm_presets_on_x86_name_the_root_and_the_cross_presets(self) -> None:
        def check(name: str, text: str) -> None:
            self.assertIn(f"Preset '{name}' targets aarch64", text)
            self.assertIn(f"scripts/arm64-root.sh -- sh -c 'cmake --preset {name} && ctest'", text)
            cross = "arm64-cross-clang" if "clang" in name else "arm64-cross-gcc"
            self.assertIn(f"cmake --workflow --preset {cross}", text)
        self.check_refusals("aarch64", "x86_64", check)

    def test_x86_presets_on_aarch64_name_the_preset_and_the_arm_presets(self) -> None:
        def check(name: str, text: str) -> None:
            self.assertIn(f"Preset '{name}' targets x86_64 and this machine is aarch64", text)
            self.assertIn("arm-* on aarch64", text)
        self.check_refusals("x86_64", "aarch64", check)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cmake", default="cmake")
    known, rest = parser.parse_known_args()
    CMAKE = known.cmake
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
