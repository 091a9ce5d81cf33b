#!/usr/bin/env python3
"""The one write path (docs/kvbtools.md, scripts/kvbtools/core/output.py and kvbench's
src/common/file_output.h): a regular file replaced whole, a symbolic link followed and kept, a
device, FIFO or `-` written in place and never replaced, a failed write exiting 1 with one line
and losing nothing; an output that names an input or another output (the same path, a link, a
hard link, another spelling) refused by every command that writes, exit 2, nothing touched. Devices are made with mknod in the test's own directory (/dev/full is 1, 7;
/dev/null 1, 3), never the real ones; without CAP_MKNOD those cases are skipped.
Run by ctest with --kvbench."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
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


def snapshot(root: str) -> dict[str, str]:
    """Every entry under `root`: a file's sha256, a link's target, a directory as such."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            elif os.path.isdir(p):
                out[rel] = "dir"
            else:
                with open(p, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
    return out


class CollisionTest(kvbtest.TempDirTest):
    """An output never replaces an input or another output (core/output.check_outputs; kvbench:
    src/cli/run_config.cc): every command that writes, the path as given, through a symbolic
    link, as a hard link and spelled otherwise. Each is refused with exit 2 and one line that
    names both roles, and leaves every file as it was, no new one (not even a .tmp)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.fixtures = d = tempfile.mkdtemp(prefix="kvb-collision.")
        runs = []
        for name in ("A.json", "B.json"):
            out = os.path.join(d, name)
            p = subprocess.run([ARGS.kvbench, "--engine=memory", "--num=1000",
                                f"--db={os.path.join(d, 'db')}", "--benchmarks=fillseq",
                                f"--json={out}"], capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, p.stderr
            runs.append(out)
        p = kvb("store", "add", "--store", os.path.join(d, "S"), runs[0])
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.fixtures, ignore_errors=True)

    def setUp(self) -> None:
        super().setUp()
        for name in ("A.json", "B.json", "S"):
            with open(os.path.join(self.fixtures, name), "rb") as f, \
                    open(os.path.join(self.tmp, name), "wb") as g:
                g.write(f.read())
        os.mkdir(os.path.join(self.tmp, "sub"))

    def spellings(self, name: str) -> dict[str, str]:
        """The ways to name the file `name` (in self.tmp) as an output: itself, ./ and sub/..,
        a symbolic link and a hard link to it (made here)."""
        link, hard = f"link-to-{name}", f"hard-{name}"
        if not os.path.lexists(os.path.join(self.tmp, link)):
            os.symlink(name, os.path.join(self.tmp, link))
            os.link(os.path.join(self.tmp, name), os.path.join(self.tmp, hard))
        return {"same path": name, "./": f"./{name}", "sub/..": f"sub/../{name}",
                "symlink": link, "hard link": hard}

    def refused(self, argv: list[str], *says: str, env: dict[str, str] | None = None,
                cwd: str | None = None) -> None:
        before = snapshot(self.tmp)
        p = subprocess.run(["/usr/bin/python3", KVB, *argv], capture_output=True, text=True,
                           timeout=300, cwd=cwd or self.tmp, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        for words in says:
            self.assertIn(words, p.stderr)
        self.assertEqual(snapshot(self.tmp), before, "a refused command touched a file")

    def test_the_issues_commands_refuse_an_output_that_is_an_input(self) -> None:
        cases = [  # (argv with {} for the output, the file it names, the words of the message)
            (["history", "--store", "S", "--html", "{}"], "S", ["--html", "names the store S"]),
            (["export", "bencher", "--store", "S", "--out", "{}"], "S",
             ["--out", "names the store S"]),
            (["report", "--html", "{}", "A.json"], "A.json",
             ["--html", "names the same file as input A.json"]),
            (["compare", "--json", "{}", "A.json", "B.json"], "B.json",
             ["--json", "names the same file as input B.json"]),
            (["compare", "--html", "{}", "A.json", "B.json"], "A.json",
             ["--html", "names the same file as input A.json"]),
            (["compare", "--json", "X", "--html", "{}", "A.json", "B.json"], "X",
             ["--html", "names the same file as --json X"]),
        ]
        for argv, name, says in cases:
            if name == "X":  # two outputs, neither there yet: a link or a spelling of one
                spellings = {"same path": "X", "./": "./X", "sub/..": "sub/../X"}
                os.symlink("X", os.path.join(self.tmp, "link-to-X"))
                spellings["symlink (dangling)"] = "link-to-X"
            else:
                spellings = self.spellings(name)
            for how, path in spellings.items():
                with self.subTest(argv=argv, how=how):
                    self.refused([a.replace("{}", path) for a in argv], *says)

    def test_every_command_that_writes_refuses_a_collision(self) -> None:
        bin_dir = os.path.join(self.tmp, "bin")
        os.mkdir(bin_dir)
        fake = os.path.join(bin_dir, "kvbench")  # never run: each case is refused first
        with open(fake, "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(fake, 0o755)
        with open(os.path.join(self.tmp, "A.fillseq.svg"), "w") as f:
            f.write("<svg/>")
        os.mkdir(os.path.join(self.tmp, "results"))
        with open(os.path.join(self.tmp, "results", "study.json"), "w") as f:
            f.write("{}")
        cases = [
            (["report", "--svg", ".", "A.fillseq.svg"], "--svg . would write over input"),
            (["report", "--png", "figs", "--svg", "figs", "A.json"],
             "--png names the same directory as --svg figs"),
            (["report", "--html", "results/study.json", "results"],
             "--html results/study.json is one of the files read from input results"),
            (["compare", "--store", "S", "--base", "kind=kvbench", "--other", "kind=kvbench",
              "--html", "S"], "--html names the store S"),
            (["export", "csv", "--store", "S", "--out", "S"], "--out names the store S"),
            (["export", "hgrm", "A.json", "--out", "A.json"],
             "--out names the same file as input A.json"),
            (["export", "folded", "A.json", "--out", "A.json"],
             "--out names the same file as input A.json"),
            (["micro", "--compare", "A.json", "B.json", "--json", "B.json"],
             "--json names the same file as --compare B.json"),
            (["micro", "--binary", fake, "--json", fake], f"--json names the same file as "
                                                          f"--binary {fake}"),
            (["selfcheck", "--kvbench", fake, "--json", "sub/../bin/kvbench"],
             f"names the same file as --kvbench {fake}"),
            (["crashtest", "--kvbench", fake, "--json", fake],
             f"--json names the same file as --kvbench {fake}"),
            (["crashtest", "--kvbench", fake, "--dir", "trials", "--json", "trials/memory-0"],
             "--dir trials would write over --json trials/memory-0"),
            (["dbbench", "parity", "--kvbench", fake, "--workdir", bin_dir],
             f"--workdir {bin_dir} would write over --kvbench {fake}"),
            (["dbbench", "instructions", "--kvbench", fake, "--workdir", "bin"],
             f"--workdir bin would write over --kvbench {fake}"),
            (["matrix", "--kvbench", fake, "--configs", "A.json", "--results-dir", "A.json"],
             "--results-dir names the same file as --configs A.json"),
            (["versions", "--dep", "lz4", "--source", "sub", "--results-dir", "sub"],
             "--results-dir names the same directory as --source sub"),
            (["bisect", "--repo", "sub", "--old", "a", "--new", "b", "--build-cmd", "true",
              "--measure-cmd", "true", "--results-dir", "./sub"],
             "--results-dir ./sub names the same directory as --repo sub"),
        ]
        for argv, says in cases:
            with self.subTest(argv=argv):
                self.refused(argv, says)

    def test_the_default_store_is_an_input_too(self) -> None:
        store = os.path.join(self.tmp, "S")
        env = dict(os.environ, KVBENCH_STORE=store)
        self.refused(["history", "--html", "S"], "--html S names the store " + store, env=env)
        self.refused(["export", "bencher", "--out", "./S"], "--out ./S names the store " + store,
                     env=env)
        env.pop("KVBENCH_STORE")
        default = os.path.join(ROOT, "results", "kvbench.sqlite")
        existed = os.path.lexists(default)
        self.refused(["history", "--html", default], f"--html names the store {default}",
                     env=env)
        self.assertEqual(os.path.lexists(default), existed)

    def test_outputs_beside_their_inputs_are_not_collisions(self) -> None:
        # export hgrm writes A.<benchmark>.<role>.hgrm beside A.json (the current directory by
        # default); compare's JSON and page go to new files beside the sides.
        p = subprocess.run(["/usr/bin/python3", KVB, "export", "hgrm", "A.json"],
                           capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "A.fillseq.writer.hgrm")))
        p = subprocess.run(["/usr/bin/python3", KVB, "compare", "--json", "c.json", "A.json",
                            "B.json"], capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(kvbtest.load_json(os.path.join(self.tmp, "c.json"))["schema"],
                         "kvb-comparison")


if __name__ == "__main__":
    kvbtest.main("kvbench")
