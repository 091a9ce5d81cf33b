#!/usr/bin/env python3
"""The one write path (docs/kvbtools.md, scripts/kvbtools/core/output.py and kvbench's
src/common/file_output.h): a regular file replaced whole, a symbolic link followed and kept, a
device, FIFO or `-` written in place and never replaced, a failed write exiting 1 with one line
and losing nothing. Devices are made with mknod in the test's own directory (/dev/full is 1, 7;
/dev/null 1, 3), never the real ones; without CAP_MKNOD those cases are skipped.
Run by ctest with --kvbench."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

from kvbtools.core import output  # noqa: E402
from kvbtools.core.errors import RunError  # noqa: E402
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS  # noqa: E402


def kvb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/usr/bin/python3", KVB, *args], capture_output=True, text=True,
                          timeout=300)


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def is_device(path: str) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


class OutputTest(kvbtest.TempDirTest):
    """core/output.py itself."""

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def device(self, name: str, minor: int) -> str:
        p = self.path(name)
        try:
            os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        except PermissionError:
            self.skipTest("mknod is not permitted here (needs CAP_MKNOD)")
        return p

    def test_a_regular_file_is_replaced_whole(self) -> None:
        p = self.path("a.json")
        output.write_text(p, "one")
        output.write_text(p, "two")
        self.assertEqual(read(p), "two")
        self.assertEqual(os.listdir(self.tmp), ["a.json"])  # no PATH.tmp left

    def test_a_link_is_followed_and_kept(self) -> None:
        target, link = self.path("target.json"), self.path("link.json")
        output.write_text(target, "old")
        os.symlink("target.json", link)
        output.write_text(link, "new")
        self.assertTrue(os.path.islink(link))
        self.assertEqual(read(target), "new")
        os.symlink(self.path("later.json"), self.path("dangling"))
        output.write_text(self.path("dangling"), "made")
        self.assertTrue(os.path.islink(self.path("dangling")))
        self.assertEqual(read(self.path("later.json")), "made")
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         ["dangling", "later.json", "link.json", "target.json"])

    def test_a_fifo_is_written_in_place(self) -> None:
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(read(fifo)))
        reader.start()
        output.write_text(fifo, "through the pipe")
        reader.join(timeout=60)
        self.assertEqual(got, ["through the pipe"])
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_devices_are_written_in_place_and_a_full_one_fails_without_being_replaced(
            self) -> None:
        null, full = self.device("null", 3), self.device("full", 7)
        output.write_text(null, "gone")
        self.assertTrue(is_device(null))
        with self.assertRaises(RunError) as e:
            output.write_text(full, "no room")
        self.assertEqual(str(e.exception), f"cannot write {full}: No space left on device")
        self.assertTrue(is_device(full))
        os.symlink(full, self.path("to-full"))
        with self.assertRaises(RunError):
            output.write_bytes(self.path("to-full"), b"no room")
        self.assertTrue(os.path.islink(self.path("to-full")))
        self.assertTrue(is_device(full))

    def test_a_failed_write_keeps_what_was_there(self) -> None:
        p = self.path("a.json")
        output.write_text(p, "kept")
        os.mkdir(p + ".tmp")  # the temporary file cannot be made (works as root too)
        with self.assertRaises(RunError) as e:
            output.write_text(p, "lost?")
        self.assertEqual(str(e.exception), f"cannot write {p}: Is a directory")
        self.assertEqual(read(p), "kept")
        with self.assertRaises(RunError) as e:
            output.write_text(self.tmp, "x")
        self.assertEqual(str(e.exception), f"cannot write {self.tmp}: is a directory")

    def test_dash_and_dev_stdout_are_standard_output(self) -> None:
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from kvbtools.core import output; "
                "output.write_text('-', 'dash '); output.write_text('/dev/stdout', 'dev')")
        for stdout in (subprocess.PIPE, open(self.path("redirected"), "w")):
            with self.subTest(stdout="pipe" if stdout == subprocess.PIPE else "file"):
                p = subprocess.run([sys.executable, "-c", code, SCRIPTS], stdout=stdout,
                                   text=True, timeout=60)
                self.assertEqual(p.returncode, 0)
                if stdout == subprocess.PIPE:
                    self.assertEqual(p.stdout, "dash dev")
                else:
                    stdout.close()
                    self.assertEqual(read(self.path("redirected")), "dash dev")


class CommandsTest(kvbtest.TempDirTest):
    """kvb and kvbench as users run them."""

    def setUp(self) -> None:
        super().setUp()
        self.run_json = os.path.join(self.tmp, "run.json")
        p = subprocess.run([ARGS.kvbench, "--engine=memory", "--num=2000",
                            f"--db={os.path.join(self.tmp, 'db')}", "--benchmarks=fillseq",
                            f"--json={self.run_json}"], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)

    def device(self, name: str, minor: int) -> str:
        return OutputTest.device(self, name, minor)  # type: ignore[arg-type]

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def test_kvbench_json_through_a_link_keeps_the_link(self) -> None:
        link = self.path("link.json")
        os.symlink("runs-target.json", link)
        p = subprocess.run([ARGS.kvbench, "--engine=memory", "--num=1000",
                            f"--db={self.path('db2')}", "--benchmarks=fillseq",
                            f"--json={link}"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertIn('"schema": "kvbench-run"', read(self.path("runs-target.json")))
        self.assertFalse(os.path.exists(self.path("runs-target.json.tmp")))

    def test_kvbench_json_to_a_full_device_fails_and_keeps_the_device(self) -> None:
        full = self.device("full", 7)
        p = subprocess.run([ARGS.kvbench, "--engine=memory", "--num=1000",
                            f"--db={self.path('db2')}", "--benchmarks=fillseq",
                            f"--json={full}"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"cannot write {full}: No space left on device", p.stderr)
        self.assertTrue(is_device(full))

    def test_kvb_report_html_through_a_link_keeps_the_link(self) -> None:
        link = self.path("page.html")
        os.symlink(self.path("target.html"), link)
        p = kvb("report", "--html", link, self.run_json)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertTrue(read(self.path("target.html")).startswith("<!DOCTYPE html>"))

    def test_kvb_writes_to_a_full_device_exit_1_and_keep_the_device(self) -> None:
        full = self.device("full", 7)
        store = self.path("store.sqlite")
        self.assertEqual(kvb("store", "add", "--store", store, self.run_json).returncode, 0)
        cases = {"report --html": ["report", "--html", full, self.run_json],
                 "compare --json": ["compare", "--json", full, self.run_json,
                                    kvbtest.rerun(self.run_json, self.path("again.json"))],
                 "export bencher": ["export", "bencher", "--store", store, "--out", full],
                 "export hgrm": ["export", "hgrm", self.run_json, "--out", self.tmp]}
        os.symlink(full, self.path("run.fillseq.writer.hgrm"))  # export hgrm's file
        for name, args in cases.items():
            with self.subTest(command=name):
                p = kvb(*args)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertRegex(p.stderr, r"^kvb: error: cannot write \S+: No space left on "
                                           r"device\n$")
                self.assertTrue(is_device(full))

    def test_kvb_writes_to_dev_null_and_dev_stdout(self) -> None:
        store = self.path("store.sqlite")
        self.assertEqual(kvb("store", "add", "--store", store, self.run_json).returncode, 0)
        p = kvb("export", "bencher", "--store", store, "--out", "/dev/null")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        p = kvb("export", "bencher", "--store", store, "--out", "/dev/stdout")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIsInstance(json.loads(p.stdout), dict)


if __name__ == "__main__":
    kvbtest.main("kvbench")
