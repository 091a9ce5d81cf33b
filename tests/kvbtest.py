"""What the Python tests of kvb share: the command line ctest gives them, a temporary directory
per test, and JSON files."""
from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import random
import shutil
import sys
import tempfile
import unittest
from typing import Any

# The test's arguments (--kvbench BIN, ...), filled in by main().
ARGS = argparse.Namespace()
MANIFEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cmake",
                        "deps.json")


def storage_engines() -> list[str]:
    """The storage engines of the manifest (cmake/deps.json), in its order: a test that loops
    over them tests a new engine the moment it is listed there, not when someone edits the test."""
    with open(MANIFEST, encoding="utf-8") as f:
        return [d["name"] for d in json.load(f)["deps"] if d["engine"]]


def main(*flags: str) -> None:
    """Reads the required --FLAG VALUE of each of `flags` into ARGS and runs the tests of
    __main__ with the rest of the command line."""
    parser = argparse.ArgumentParser()
    for flag in flags:
        parser.add_argument(f"--{flag}", required=True)
    known, rest = parser.parse_known_args()
    ARGS.__dict__.update(vars(known))
    unittest.main(module="__main__", argv=[sys.argv[0], *rest], verbosity=2)


class TempDirTest(unittest.TestCase):
    """A test case with a fresh directory self.tmp (named TMP_PREFIX...) for each test, removed
    with all it holds after the test."""
    TMP_PREFIX = "kvb-test."

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix=self.TMP_PREFIX)

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def load_json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path: str, doc: Any) -> str:
    """Writes `doc` to `path` (NaN and Infinity as Python reads them back); returns the path."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def rerun(path: str, out: str) -> str:
    """Another run with the same figures: the document at `path` (kvbench or kvbench_micro) as if
    measured a second later, written to `out`. kvb compare refuses a run compared with itself
    (the same file or the same document on two sides); this is the pair a test of identical
    figures compares."""
    doc = load_json(path)
    ctx = doc["context"]
    key = "date_utc" if "date_utc" in ctx else "date"
    zulu = ctx[key].endswith("Z")
    then = datetime.datetime.fromisoformat(ctx[key].replace("Z", "+00:00"))
    later = (then + datetime.timedelta(seconds=1)).isoformat()
    ctx[key] = later.replace("+00:00", "Z") if zulu else later
    return write_json(out, doc)


def emulator() -> str:
    """What emulates the CPU ('' on real hardware): scripts/arm64-root.sh sets KVBENCH_EMULATED."""
    return os.environ.get("KVBENCH_EMULATED", "")


def browser_failure_is_the_emulators(returncode: int) -> str:
    """The reason to skip when headless Chromium failed with `returncode` under an emulator
    (qemu-user: crashpad's ptrace aborts it, exit -6), else '' (a failure to report)."""
    if returncode == 0 or not emulator():
        return ""
    return (f"headless Chromium cannot run under {emulator()} (exit {returncode}; its crash "
            "handler needs ptrace): the page was checked but not rendered")


def kvbench_doc(template: dict[str, Any], rng: random.Random, scale: float,
                reps: int) -> dict[str, Any]:
    """The real document's first result repeated `reps` times, figures scaled (scale < 1:
    slower: fewer ops/s, more latency and CPU per op) with 1% noise."""
    doc = copy.deepcopy(template)
    first = template["results"][0]
    doc["results"] = []
    for i in range(reps):
        r = copy.deepcopy(first)
        r["repeat"], r["repeats"] = i + 1, reps
        for role in r["roles"]:
            noise = 1 + rng.gauss(0, 0.01)
            role["ops_per_sec"] = 100000.0 * scale * noise
            role["latency_ns"]["p99"] = 2000.0 / scale * noise
            role["cost"]["cpu_user_us_per_op"] = 5.0 / scale * noise
            role["cost"]["cpu_sys_us_per_op"] = 1.0 / scale * noise
        doc["results"].append(r)
    return doc
