#!/usr/bin/env python3
"""The dependency manifest (cmake/deps.json) is the one place each engine is spelled.

kvbench's engine table is generated from it: `--list-engines` prints exactly the manifest's engines
this build found (in manifest order) and the reference engines, `--help` describes every manifest
engine with the manifest's words, and no source file outside the adapters spells an engine name
as a string literal.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KVBENCH = ""
FOUND: list[str] = []
REFERENCE = ["memory", "null"]


def manifest() -> dict:
    with open(ROOT / "cmake" / "deps.json", encoding="utf-8") as f:
        return json.load(f)


def engines() -> list[dict]:
    return [d for d in manifest()["deps"] if d["engine"]]


class ManifestTest(unittest.TestCase):
    def test_list_engines_prints_the_engines_found_then_the_references(self) -> None:
        p = subprocess.run([KVBENCH, "--list-engines"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        expected = [f"{d['name']}\tstorage" for d in engines() if d["name"] in FOUND]
        expected += [f"{name}\treference" for name in REFERENCE]
        self.assertEqual(p.stdout.splitlines(), expected)

    def test_help_describes_every_manifest_engine(self) -> None:
        p = subprocess.run([KVBENCH, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for d in engines():
            with self.subTest(engine=d["name"]):
                self.assertRegex(p.stdout, rf"\n  {d['name']} +{re.escape(d['description'])}")

    def test_default_engine_is_a_manifest_engine(self) -> None:
        self.assertIn(manifest()["default_engine"], [d["name"] for d in engines()])

    def test_no_engine_name_literal_outside_the_adapters(self) -> None:
        # "null" is also JSON's literal (report/json_writer.cc), so only the others are checked.
        names = [d["name"] for d in engines()] + ["memory"]
        literal = re.compile(r'"(' + "|".join(map(re.escape, names)) + r')"')
        found = []
        for path in sorted((ROOT / "src").rglob("*")) + sorted((ROOT / "bench").rglob("*.cc")):
            if path.suffix not in (".cc", ".h", ".in") or path.name.endswith("_engine.cc"):
                continue
            if path.name == "memory_bench.cc":  # "memory" there is the bandwidth family, not the engine
                continue
            if path.name == "io_bound.cc":  # "memory" there is the cgroup controller
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if literal.search(line.split("//")[0]):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
        self.assertEqual(found, [], "engine names belong in cmake/deps.json and the adapters")

    def test_install_deps_installs_every_manifest_package(self) -> None:
        # scripts/install-deps.sh keeps its own list; it must hold every library of the manifest
        # that Debian packages for the architecture.
        for arch in ("amd64", "arm64"):
            p = subprocess.run([str(ROOT / "scripts" / "install-deps.sh"), "--print-packages",
                                f"--arch={arch}"], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            printed = set(p.stdout.split())
            for d in manifest()["deps"]:
                if d["debian_arches"] and arch not in d["debian_arches"]:
                    continue
                with self.subTest(arch=arch, package=d["debian"]):
                    self.assertIn(d["debian"], printed)

    def test_get_sources_knows_every_library_built_from_source(self) -> None:
        # scripts/get-sources.sh maps a library to its Debian source package by hand; a library
        # the manifest builds from source must be one of its cases (wiredtiger: a refusal that
        # says where its source is).
        text = (ROOT / "scripts" / "get-sources.sh").read_text(encoding="utf-8")
        cases = set(re.findall(r"^  ([a-z0-9]+)\)", text, re.M))
        for d in manifest()["deps"]:
            if d["source_build"]:
                with self.subTest(dep=d["name"]):
                    self.assertIn(d["name"], cases)

    def test_every_engine_has_its_adapter(self) -> None:
        for d in engines():
            with self.subTest(engine=d["name"]):
                self.assertTrue((ROOT / "src" / "kv" / f"{d['name']}_engine.cc").is_file())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--kvbench", required=True)
    parser.add_argument("--engines", default="", help="engines compiled in, ;-separated")
    args, rest = parser.parse_known_args()
    KVBENCH = args.kvbench
    FOUND = [e for e in args.engines.replace(",", ";").split(";") if e]
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
