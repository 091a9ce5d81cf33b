#!/usr/bin/env python3
"""Concurrency tests: the multi-threaded workloads on every engine compiled in.

Runs fillrandom and readrandom with several threads, and the *whilewriting benchmarks (readers
plus one paced writer), through the real kvbench binary, and checks what a user relies on: every
key written by concurrent writers is found by concurrent readers, both roles of *whilewriting
report their own ops, and the run is complete. Sizes are small so the same test is short under
a sanitizer (the tsan preset runs it with ThreadSanitizer, where a data race fails the run with
exit code 88) and under qemu for the cross-ARM presets.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import unittest

import kvbtest  # tests/kvbtest.py, beside this file

KVBENCH = ""
ENGINES: list[str] = []
SANITIZER_MARKERS = ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer",
                     "runtime error:", "ERROR: LeakSanitizer")


class ConcurrencyTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvbench-conc-"

    def run_kvbench(self, engine: str, args: list[str]) -> dict:
        out = os.path.join(self.tmp, f"{engine}.json")
        cmd = [KVBENCH, f"--engine={engine}", f"--db={os.path.join(self.tmp, engine)}",
               "--report_interval_seconds=0.2", f"--json={out}", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        for marker in SANITIZER_MARKERS:
            self.assertNotIn(marker, p.stderr, f"{engine}: sanitizer report:\n{p.stderr[-6000:]}")
        self.assertEqual(p.returncode, 0, f"{engine}: {' '.join(cmd)}\n{p.stderr[-3000:]}")
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertTrue(doc["complete"], doc.get("error"))
        return doc

    def test_concurrent_fill_then_concurrent_reads_find_every_key(self) -> None:
        num = 4000
        for engine in ENGINES:
            with self.subTest(engine=engine):
                doc = self.run_kvbench(engine, [
                    f"--num={num}", "--threads=4", "--verify",
                    "--benchmarks=fillrandom,settle,readrandom"])
                by_name = {r["benchmark"]: r for r in doc["results"]}
                fill = by_name["fillrandom"]["roles"][0]
                self.assertEqual(fill["threads"], 4)
                self.assertEqual(fill["ops"], num)
                read = by_name["readrandom"]["roles"][0]
                self.assertEqual(read["ops"], num)
                self.assertEqual(read["found"], num, "a key written by a concurrent writer is missing")
                self.assertEqual(read["not_found"], 0)

    def test_whilewriting_runs_readers_beside_a_paced_writer(self) -> None:
        for engine in ENGINES:
            for bench in ("readwhilewriting", "fwdrangewhilewriting"):
                with self.subTest(engine=engine, benchmark=bench):
                    doc = self.run_kvbench(engine, [
                        "--num=3000", "--threads=2", "--reads=3000", "--duration=3",
                        "--benchmark_write_rate_limit=200000", "--verify",
                        f"--benchmarks=fillseq,{bench}"])
                    result = [r for r in doc["results"] if r["benchmark"] == bench][0]
                    roles = {r["role"]: r for r in result["roles"]}
                    self.assertEqual(sorted(roles), ["reader", "writer"])
                    self.assertEqual(roles["reader"]["threads"], 2)
                    self.assertGreater(roles["reader"]["ops"], 0)
                    self.assertGreater(roles["writer"]["ops"], 0, "the writer never wrote")
                    # Readers only read keys that exist (fillseq wrote all of them).
                    self.assertEqual(roles["reader"]["not_found"], 0)


def main() -> None:
    global KVBENCH, ENGINES
    parser = argparse.ArgumentParser()
    parser.add_argument("--kvbench", required=True)
    parser.add_argument("--engines", default="", help="storage engines compiled in, ;-separated")
    args, rest = parser.parse_known_args()
    KVBENCH = args.kvbench
    ENGINES = ["memory"] + [e.lower() for e in args.engines.replace(",", ";").split(";") if e]
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
