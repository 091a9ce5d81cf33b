#!/usr/bin/env python3
"""Crash test: `kvb crashtest` SIGKILLs --sync fills on every storage engine compiled in and finds
every acknowledged write after the reopen; and it does fail when writes are lost or the database
does not reopen (the null engine keeps nothing, the memory engine saves only at close).

Small sizes and two kills per engine, so the whole test stays well under a minute.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
sys.path.insert(0, SCRIPTS)

from kvbtools.core import manifest  # noqa: E402
from kvbtools.measure import crash_trials  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS  # noqa: E402



def kvb_crashtest(tmp: str, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = os.path.join(tmp, "crash.json")
    p = subprocess.run([os.path.join(SCRIPTS, "kvb"), "crashtest",
                        "--kvbench", ARGS.kvbench, "--dir", os.path.join(tmp, "dbs"), "--json", out,
                        *args], capture_output=True, text=True, timeout=600)
    doc: dict[str, Any] = {}
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
    return p, doc


class CrashTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvbench-crash-"

    def test_sync_fills_lose_no_acknowledged_write(self) -> None:
        # The storage engines compiled in, as the binary lists them.
        engines = [e for e, kind in manifest.engines_of(ARGS.kvbench).items() if kind == "storage"]
        if not engines:
            self.skipTest("no storage engine compiled in")
        # Without --engines, kvb crashtest takes every storage engine of the binary.
        p, doc = kvb_crashtest(self.tmp, "--trials", "2",
                               "--sync", "--num", "1000000", "--kill-after", "0.2,0.6")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([a["engine"] for a in doc["engines"]], engines)
        for a in doc["engines"]:
            with self.subTest(engine=a["engine"]):
                self.assertEqual((a["trials"], a["killed"]), (2, 2))
                self.assertGreater(a["checked"], 0)  # something was acknowledged, and checked
                self.assertEqual((a["lost"], a["reopen_failures"], a["corruptions"],
                                  a["errors"]), (0, 0, 0, 0))
        for t in doc["trials"]:
            self.assertEqual(t["checked"], t["acknowledged"])  # all of the ack file was read
        for e in engines:
            self.assertRegex(p.stdout, rf"\n{e} .* OK\n")
        self.assertFalse(os.listdir(os.path.join(self.tmp, "dbs")))  # passed trials cleaned up

    def test_lost_writes_and_failed_reopens_fail_the_run(self) -> None:
        p, doc = kvb_crashtest(self.tmp, "--engines", "null,memory", "--trials", "1", "--sync",
                               "--num", "100000000", "--kill-after", "0.1,0.2")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        null, memory = doc["engines"]
        self.assertGreater(null["lost"], 0)
        self.assertEqual(null["lost"], null["checked"])  # null keeps nothing
        self.assertEqual(memory["reopen_failures"], 1)
        self.assertIn("acknowledged writes lost (first lost key", p.stdout)
        self.assertIn("no memory database", p.stdout)
        self.assertRegex(p.stdout, r"null .* FAIL")
        # A failed trial's database and logs are kept for a look.
        kept = [t["dir"] for t in doc["trials"]]
        self.assertTrue(all(os.path.exists(os.path.join(d, "verify.log")) for d in kept))

    def test_without_sync_lost_writes_are_reported_not_failed(self) -> None:
        p, doc = kvb_crashtest(self.tmp, "--engines", "null", "--trials", "1", "--no-sync",
                               "--num", "100000000", "--kill-after", "0.1,0.2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertGreater(doc["engines"][0]["lost"], 0)
        self.assertIn("lost writes (no --sync: reported, not a failure)", p.stdout)

    def test_bad_input_exits_2_with_a_message(self) -> None:
        cases = [
            (["--engines", "nosuch"], "engine 'nosuch' is not compiled into"),
            (["--trials", "0"], "--trials must be at least 1"),
            (["--threads", "0"], "--threads must be 1..1024"),
            (["--num", "0"], "--num must be positive"),
            (["--kill-after", "2,1"], "--kill-after '2,1'"),
            (["--kill-after", "x"], "--kill-after 'x'"),
            (["--benchmark", "readrandom"], "invalid choice"),
            (["--dir", self.tmp, "--engines", "memory"], "is not empty"),
        ]
        with open(os.path.join(self.tmp, "older-run"), "w") as f:
            f.write("x")
        for args, message in cases:
            with self.subTest(args=args):
                p, _ = kvb_crashtest(self.tmp, *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)
                self.assertNotIn("Traceback", p.stderr)

    def test_outcomes_are_told_apart_by_the_verifyacked_error(self) -> None:
        lost = {"results": [{}], "error": "verifyacked: 3 of 9 acknowledged writes lost (first "
                                          "lost key 4)"}
        self.assertEqual(crash_trials.classify(0, {"results": [{}]}, "")[0], "ok")
        self.assertEqual(crash_trials.classify(1, lost, "")[0], "lost")
        self.assertEqual(crash_trials.classify(1, {"results": [], "error": "verifyacked failed: "
                                                "Corruption: the value of acknowledged key 4"},
                                            "")[0], "corrupt")
        self.assertEqual(crash_trials.classify(1, {"results": [], "error": "cannot open lmdb at "
                                                "/x: ..."}, "")[0], "reopen_failed")
        self.assertEqual(crash_trials.classify(1, {"results": [], "error": "verifyacked failed: "
                                                "Corruption: --ack_file /a is not a kvbench "
                                                "ack file"}, "")[0], "error")
        self.assertEqual(crash_trials.classify(1, None, "kvbench: error: cannot open lmdb at "
                                                  "/x: ...")[0], "reopen_failed")
        self.assertEqual(crash_trials.classify(1, None, "kvbench: error: verifyacked failed: "
                                                  "Corruption: the value of ...")[0], "corrupt")
        self.assertEqual(crash_trials.classify(134, None, "Aborted")[0], "error")


if __name__ == "__main__":
    kvbtest.main("kvbench")
