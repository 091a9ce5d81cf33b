#!/usr/bin/env python3
"""kvb's exit statuses, one table for every subcommand (docs/cli.md, "kvb: exit status").

The table is read from the docs, not copied here: each case names the meaning it expects
("bad input", "runtime failure", "done", and for the gates "a gate found a change", "a gate could
not decide"), and the status it must exit with is the table's for that meaning. Every case also
holds kvb to the rest of the table's rules: an error is `kvb: error: ...` on stderr, never a
traceback; bad input (2) prints nothing on stdout and writes nothing (the output paths it was
given stay absent); success (0) prints no error. The cases walk each subcommand's error paths as
a user meets them: missing files, a directory for a file, an empty file, JSON of another kind,
bad flags, output paths that cannot be written, unknown names, and a kvbench, kvbench_micro or
store that fails.

  exit_codes_test.py --kvbench build/<preset>/src/kvbench --micro build/<preset>/bench/kvbench_micro
"""
from __future__ import annotations

import argparse
import concurrent.futures
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
KVB = os.path.join(SCRIPTS, "kvb")
sys.path.insert(0, SCRIPTS)

from kvbtools.commands import cli  # noqa: E402
from kvbtools.core import errors, host  # noqa: E402
import exit_statements  # noqa: E402  (tests/exit_statements.py)
import kvbtest  # noqa: E402  (tests/kvbtest.py)
from kvbtest import ARGS  # noqa: E402

# A case's expectation, as the first words of the table's "meaning" column.
MEANINGS = {"ok": "done", "failure": "runtime failure", "usage": "bad input",
            "changed": "a gate found a change", "undecided": "a gate could not decide"}
# Where output must not go: no case may create it.
MISSING_DIR = "/nonexistent-kvb-exit-test"


def exit_table() -> dict[int, str]:
    """docs/cli.md's kvb table: exit status -> meaning."""
    with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## kvb: exit status"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    table: dict[int, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"\d+(, \d+)*", cells[0]):
            for code in cells[0].split(", "):
                table[int(code)] = cells[1]
    return table


def status_for(table: dict[int, str], kind: str) -> int:
    """The one status whose meaning starts with MEANINGS[kind]."""
    codes = [c for c, meaning in table.items() if meaning.startswith(MEANINGS[kind])]
    if len(codes) != 1:
        raise AssertionError(f"docs/cli.md's kvb table has {len(codes)} rows meaning "
                             f"{MEANINGS[kind]!r}: {table}")
    return codes[0]


def kvbench_table() -> dict[int, str]:
    """docs/cli.md's kvbench table (the first, before "## Flags"): exit status -> meaning."""
    with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as f:
        text = f.read()
    table: dict[int, str] = {}
    for line in text[:text.index("\n## Flags")].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"\d+(, \d+)*", cells[0]):
            for code in cells[0].split(", "):
                table[int(code)] = cells[1]
    return table


def statuses_by_meaning(kvbench: dict[int, str]) -> dict[str, set[int]]:
    """What each meaning of exit_statements.MEANINGS exits with: core/errors.py's kvb table, and
    kvbench's other signal (SIGTERM: 143, docs/cli.md)."""
    return {"ok": {errors.EXIT_OK}, "failure": {errors.EXIT_FAILURE},
            "usage": {errors.EXIT_USAGE}, "changed": {errors.EXIT_CHANGED},
            "undecided": {errors.EXIT_UNDECIDED},
            "interrupted": {errors.EXIT_INTERRUPTED} | {c for c, m in kvbench.items()
                                                         if "interrupted" in m},
            "broken_pipe": {errors.EXIT_BROKEN_PIPE}}


def help_texts() -> dict[str, str]:
    """Every --help of kvb (kvb's, each command's, each subcommand's), kvbench's and
    kvbench_micro's, by who prints it."""
    out: dict[str, str] = {}

    def walk(p: argparse.ArgumentParser, name: str) -> None:
        out[name] = p.format_help()
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub, q in a.choices.items():
                    walk(q, f"{name} {sub}")
    walk(cli.parser(None, every=True), "kvb")
    for binary in (ARGS.kvbench, ARGS.micro):
        p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
        out[os.path.basename(binary)] = p.stdout + p.stderr
    return out


def misstated(texts: dict[str, str], allowed: dict[str, set[int]],
              known: set[int]) -> list[str]:
    """The exit statuses stated in `texts` (name -> text) that are no status of the tables, or
    whose words name a meaning that exits otherwise."""
    bad = []
    for name, text in texts.items():
        for s in exit_statements.statements(text, name):
            if s.status not in known:
                bad.append(f"{s.where}: exit {s.status} is no status of docs/cli.md's tables: "
                           f"{s.text[-160:]}")
            elif s.meaning and s.status not in allowed[s.meaning]:
                bad.append(f"{s.where}: exit {s.status} for {s.meaning!r}, which exits "
                           f"{sorted(allowed[s.meaning])}: {s.text[-160:]}")
    return bad


@dataclass
class Case:
    command: str                  # the subcommand it exercises (every one needs cases)
    argv: list[str]
    kind: str                     # a key of MEANINGS
    says: str = ""                # stderr must hold this (the error meant, not another)
    absent: tuple[str, ...] = ()  # paths that must not exist afterwards
    prefix: tuple[str, ...] = ()  # run under this (setpriv: an unprivileged user)
    stdout_has: str = ""          # a result the command must print (kind "ok")


class Fixtures:
    """The files the cases read: small real kvbench and kvbench_micro runs, a store, damaged
    and foreign files, and binaries that fail."""

    def __init__(self, tmp: str) -> None:
        self.tmp = tmp
        os.chmod(tmp, 0o755)  # an unprivileged user reads here too (the read-only store)
        self.a, self.b = self.kvbench("a.json"), self.kvbench("b.json")
        self.micro = self.path("micro.json")
        subprocess.run([ARGS.micro, "--benchmark_filter=^(memory/read|crc32c/table)/4096$",
                        "--benchmark_min_time=0.01", "--block_sizes=4096",
                        "--benchmark_repetitions=2", f"--benchmark_out={self.micro}",
                        "--benchmark_out_format=json"], check=True, capture_output=True,
                       timeout=120)
        self.empty = self.write("empty.json", "")
        self.wrong = self.write("wrong.json", '{"schema": "something-else", "rows": []}\n')
        self.text = self.write("notes.txt", "not a directory\n")
        self.junk = self.write("junk.sqlite", "this is not an SQLite database\n" * 64)
        self.store = self.path("store.sqlite")
        kvb_ok = run_kvb(["store", "add", "--store", self.store, self.a, self.micro])
        assert kvb_ok.returncode == 0, kvb_ok.stderr
        self.fail = self.script("fail", "echo 'the disk is on fire' >&2; exit 1")
        self.silent = self.script("silent", "exit 0")  # exits 0, writes no JSON
        # A kvbench that knows its engines and flags, and fails every run.
        self.failing_kvbench = self.script("kvbench-failing", f"""case "$1" in
  --list-engines|--help|--version) exec {ARGS.kvbench} "$@" ;;
esac
echo 'kvbench: error: cannot open rocksdb at DB: IO error' >&2; exit 1""")
        self.readonly_store, self.as_user = self.read_only_store()
        # Random bytes over two pages in the middle of a copy of the store.
        self.damaged_store = self.path("damaged.sqlite")
        shutil.copy(self.store, self.damaged_store)
        size = os.path.getsize(self.damaged_store)
        with open(self.damaged_store, "r+b") as fh:
            fh.seek(size // 2 // 4096 * 4096)
            fh.write(random.Random(7).randbytes(8192))

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def write(self, name: str, text: str) -> str:
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def script(self, name: str, body: str) -> str:
        path = self.write(name, "#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def kvbench(self, name: str) -> str:
        out = self.path(name)
        subprocess.run([ARGS.kvbench, "--engine=memory", "--benchmarks=fillseq,readrandom",
                        "--num=2000", "--report_interval_seconds=0", f"--db={self.path('db')}",
                        f"--json={out}"], check=True, capture_output=True, timeout=120)
        return out

    def read_only_store(self) -> tuple[str, tuple[str, ...]]:
        """A store its user may read and not write, and the prefix that runs kvb as that user:
        a 0444 file in a directory it cannot write (root: run as nobody through setpriv);
        ("", ()) when root has no setpriv. Beside it, dir_only.sqlite: a store whose file that
        user may write, in that directory it may not (SQLite's journal goes there)."""
        d = self.path("ro")
        os.mkdir(d, 0o755)
        path = os.path.join(d, "store.sqlite")
        shutil.copy(self.store, path)
        os.chmod(path, 0o444)
        shutil.copy(self.store, os.path.join(d, "dir_only.sqlite"))
        if os.geteuid() != 0:
            os.chmod(os.path.join(d, "dir_only.sqlite"), 0o644)
            os.chmod(d, 0o555)
            return path, ()
        os.chmod(os.path.join(d, "dir_only.sqlite"), 0o666)
        if shutil.which("setpriv") is None:
            return "", ()
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        # nobody must be able to run kvb from this checkout (not one under a 0700 /root).
        probe = subprocess.run([*prefix, sys.executable, "-c", f"open({KVB!r}).close(); "
                                f"open({path!r}).close()"], capture_output=True, timeout=60)
        return (path, prefix) if probe.returncode == 0 else ("", ())


def run_kvb(argv: list[str], prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    # Under the python3 that runs the test, without kvb's re-exec (scripts_test covers that).
    env = dict(os.environ, KVB_PYTHON_CHOSEN="1")
    return subprocess.run([*prefix, sys.executable, KVB, *argv], capture_output=True, text=True,
                          env=env, timeout=240, cwd="/")


def report_cases(f: Fixtures) -> list[Case]:
    html, svg = f"{MISSING_DIR}/x.html", f"{MISSING_DIR}/svg"
    return [
        Case("report", ["report", f.a, f.micro], "ok", stdout_has="crc32c/table/4096"),
        Case("report", ["report", "--metrics", f.micro], "ok", stdout_has="bytes_per_second"),
        Case("report", ["report", f.path("missing.json")], "usage", "cannot read"),
        Case("report", ["report", f.tmp], "usage", "Is a directory"),
        Case("report", ["report", f.empty], "usage", "empty file"),
        Case("report", ["report", f.text], "usage", f"{f.text}: not JSON: Expecting value"),
        Case("report", ["report", f.wrong], "usage", "neither a kvbench run document"),
        Case("report", ["report", "--html", html, f.a], "usage", "does not exist", (html,)),
        Case("report", ["report", "--html", f.tmp, f.a], "usage", "is a directory"),
        Case("report", ["report", "--svg", svg, f.a], "usage", "does not exist", (svg,)),
        Case("report", ["report", "--png", f.text, f.a], "usage", "not a directory"),
        Case("report", ["report", "--bogus", f.a], "usage", "unrecognized arguments"),
        Case("validate", ["validate", f.a, f.micro], "ok", stdout_has="OK"),
        Case("validate", ["validate", f.empty], "usage", "empty file"),
        Case("validate", ["validate", f.wrong, f.path("missing.json")], "usage", "cannot read"),
    ]


def compare_cases(f: Fixtures) -> list[Case]:
    out = f.path("comparison.json")
    bad_json, bad_html = f"{MISSING_DIR}/x.json", f"{MISSING_DIR}/x.html"
    return [
        Case("compare", ["compare", f.a, f.b, "--json", out], "ok", stdout_has="readrandom"),
        Case("compare", ["compare", f.a], "usage", "need a base and at least one other"),
        Case("compare", ["compare", "--base", f.a, "--base", f.b, "--other", f.micro], "usage",
             "--base given twice"),
        Case("compare", ["compare", f.a, f.a], "usage", "is on two sides"),
        Case("compare", ["compare", "--store", f.store, "--base", "kind=kvbench", "--other",
                         "engine=memory"], "usage", "is on two sides"),
        Case("compare", ["compare", f.a, f.b, "--json", bad_json], "usage", "does not exist",
             (bad_json,)),
        Case("compare", ["compare", f.a, f.b, "--html", bad_html], "usage", "does not exist",
             (bad_html,)),
        Case("compare", ["compare", f.a, f.b, "--json", f.tmp], "usage", "is a directory"),
        Case("compare", ["compare", f.a, f.micro], "usage", "cannot compare"),
        Case("compare", ["compare", f.a, f.tmp], "usage", "Is a directory"),
        Case("compare", ["compare", f.a, f.b, "--threshold", "abc"], "usage", "not a threshold"),
        # A negative percentage is a value, as --threshold=-5% is, not an unknown option.
        Case("compare", ["compare", f.a, f.b, "--threshold", "-5%"], "usage",
             "threshold out of range: '-5%'"),
        Case("compare", ["compare", f.a, f.b, "--filter", "("], "usage", "regular expression"),
        Case("compare", ["compare", f.a, f.b, "--metric", "nosuch"], "usage", "unknown metric"),
        Case("compare", ["compare", f.a, f.b, "--json", "/dev/full"], "failure",
             "No space left on device"),
    ]


def matrix_cases(f: Fixtures) -> list[Case]:
    refused = f.path("refused")  # the results directory of refused runs: never made
    base = ["matrix", "--kvbench", ARGS.kvbench, "--num", "1000", "--repeats", "1",
            "--no-store", "--results-dir"]
    return [
        Case("matrix", [*base, f.path("results"), "--engines", "memory"], "ok",
             stdout_has="results:"),
        Case("matrix", [*base, refused, "--engines", "memory,nosuch"], "usage",
             "engine 'nosuch'", (refused,)),  # the checkout's engines, or the binary's
        Case("matrix", [*base, refused, "--engines", "memory", "--kvbench-arg=--threads=0"],
             "usage", "kvbench refuses the flags of a run: --threads must be 1..1024", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--threads", "1,2",
                        "--kvbench-arg=--key_size=2", "--num", "70000"], "usage",
             "2 bytes hold at most 65536 keys", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--workloads",
                        "fillseq,nosuch"], "usage", "unknown workload 'nosuch'", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--kvbench-arg=--bogus=1"],
             "usage", "is not a flag of", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--num", "0"], "usage", "--num",
             (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--configs",
                        f.path("none.txt")], "usage", "No such file", (refused,)),
        Case("matrix", ["matrix", "--kvbench", f.tmp, "--engines", "memory"], "usage",
             "no kvbench at"),
        Case("matrix", ["matrix", "--kvbench", ARGS.kvbench, "--engines", "memory",
                        "--results-dir", f.text], "usage", "not a directory"),
        Case("matrix", ["matrix", "--kvbench", ARGS.kvbench, "--engines", "memory",
                        "--results-dir", f"{MISSING_DIR}/r"], "usage", "does not exist",
             (f"{MISSING_DIR}/r",)),
        Case("matrix", ["matrix", "--kvbench", f.failing_kvbench, "--engines", "memory",
                        "--num", "1000", "--repeats", "1", "--no-store", "--results-dir",
                        f.path("failed-runs")], "failure", "a run failed"),
        # A comparison of builds: --cpu is checked before anything is built; a study has no
        # budget but --repeats.
        Case("matrix", ["matrix", "--presets", f"{host.native_preset()}", "--micro", "--cpu",
                        "4096", "--results-dir", refused], "usage",
             "--cpu 4096: not a CPU this process may run on", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--max-time", "5m"], "usage",
             "a study runs --repeats rounds", (refused,)),
        Case("versions", ["versions", "--dep", "lz4", "--source", f.tmp, "--cpu", "fast"],
             "usage", "expected auto, none or a CPU number"),
        Case("versions", ["versions", "--dep", "nosuch", "--source", f.tmp], "usage",
             "unknown dependency"),
        Case("versions", ["versions", "--dep", "lz4"], "usage", "give the versions"),
        Case("versions", ["versions", "--dep", "lz4", "--source", f"{MISSING_DIR}/lz4"],
             "usage", "not a directory"),
        Case("versions", ["versions", "--dep", "lz4", "--source", f.tmp, "--results-dir",
                          f"{MISSING_DIR}/r"], "usage", "does not exist"),
        Case("bisect", ["bisect"], "usage", "--repo is required"),
        Case("bisect", ["bisect", "--repo", f.tmp, "--old", "a", "--new", "b", "--build-cmd",
                        "true", "--measure-cmd", "true"], "usage", "not a git repository"),
        Case("bisect", ["bisect", "--repo", ROOT, "--old", "HEAD", "--new", "HEAD",
                        "--build-cmd", "true", "--measure-cmd", "true", "--results-dir",
                        f.text], "usage", "not a directory"),
        Case("bisect", ["bisect", "--resume", f.tmp], "usage", "not the results directory"),
    ]


def fleet_cases(f: Fixtures) -> list[Case]:
    """The fleet (docs/fleet.md): its configuration is read, and Slurm asked, before any work."""
    refused = f.path("refused")  # the results directory of refused runs: never made
    base = ["matrix", "--kvbench", ARGS.kvbench, "--num", "1000", "--repeats", "1",
            "--no-store", "--results-dir"]
    return [
        Case("matrix", ["matrix", "--presets", f"{host.native_preset()}", "--micro", "--slurm",
                        "measure", "--slurm-config", f.path("none.ini"), "--results-dir",
                        refused], "usage", "none.ini: [Errno 2]", (refused,)),
        Case("matrix", ["matrix", "--presets", f"{host.native_preset()}", "--micro",
                        "--slurm-config", f.text, "--results-dir", refused], "usage",
             "--slurm-config is read with --slurm PARTITION", (refused,)),
        Case("matrix", ["matrix", "--presets", f"{host.native_preset()}", "--micro", "--slurm",
                        "measure", "--slurm-config", f.text, "--results-dir", refused], "usage",
             "File contains no section headers", (refused,)),
        Case("matrix", [*base, refused, "--engines", "memory", "--slurm", "measure"], "usage",
             "a study runs here", (refused,)),
        Case("bisect", ["bisect", "--resume", f.tmp, "--slurm", "measure", "--slurm-config",
                        f.path("none.ini")], "usage", "none.ini: [Errno 2]"),
        Case("worker", ["worker", "block", f.text], "usage", "not JSON"),
        Case("worker", ["worker", "block", f.a], "usage", "not a block of kvb's Slurm executor"),
        Case("worker", ["worker", "exec", "--dir", f.tmp, "--name", "x"], "usage",
             "no command after --"),
    ]


def runner_cases(f: Fixtures) -> list[Case]:
    """crashtest, micro, dbbench, selfcheck: the commands that run a binary."""
    bad_json = f"{MISSING_DIR}/x.json"
    ct = ["crashtest", "--kvbench", ARGS.kvbench, "--trials", "1", "--num", "1000"]
    sc = ["selfcheck", "--reads", "1000", "--small", "1000", "--large", "2000"]
    return [
        Case("crashtest", [*ct, "--engines", "nosuch"], "usage", "not compiled into"),
        Case("crashtest", [*ct, "--engines", "memory", "--trials", "0"], "usage", "--trials"),
        Case("crashtest", ["crashtest", "--kvbench", f.tmp], "usage", "not an executable"),
        Case("crashtest", [*ct, "--engines", "memory", "--json", bad_json], "usage",
             "does not exist", (bad_json,)),
        Case("crashtest", [*ct, "--engines", "memory", "--dir", f.text], "usage",
             "not a directory"),
        Case("micro", ["micro", "--compare", f.micro], "ok", stdout_has="crc32c/table"),
        Case("micro", ["micro", "--binary", f.tmp], "usage", "not an executable file"),
        Case("micro", ["micro", "--binary", ARGS.micro, "--json", bad_json], "usage",
             "does not exist", (bad_json,)),
        Case("micro", ["micro", "--compare", f.a], "usage", "this command reads Google"),
        Case("micro", ["micro", "--binary", ARGS.micro, "--block-size", "0"], "usage",
             "must be positive"),
        # The reason leads (it came after the command line, or after kvbench_micro's warnings).
        Case("micro", ["micro", "--binary", ARGS.micro, "--", "--bogus"], "usage",
             "kvb: error: kvbench_micro refused its flags: unrecognized command-line flag: "
             "--bogus"),
        Case("micro", ["micro", "--binary", f.fail], "failure",
             "kvb: error: kvbench_micro failed (exit 1): the disk is on fire\n"),
        Case("micro", ["micro", "--binary", f.silent], "failure", "wrote no usable JSON"),
        Case("dbbench", ["dbbench"], "usage", "required"),
        Case("dbbench", ["dbbench", "parity", "--kvbench", ARGS.kvbench, "--benchmarks",
                         "nosuch"], "usage", "--benchmarks: unknown nosuch"),
        Case("dbbench", ["dbbench", "parity", "--kvbench", ARGS.kvbench, "--workdir", f.text],
             "usage", "not a directory"),
        Case("dbbench", ["dbbench", "instructions", "--kvbench", ARGS.kvbench, "--ops", "5,1"],
             "usage", "--ops"),
        Case("selfcheck", ["selfcheck", "--kvbench", ARGS.kvbench, "--small", "10", "--large",
                           "5"], "usage", "--large above --small"),
        Case("selfcheck", ["selfcheck", "--kvbench", f.tmp], "usage", "not an executable"),
        Case("selfcheck", [*sc, "--kvbench", ARGS.kvbench, "--json", bad_json], "usage",
             "does not exist", (bad_json,)),
        Case("selfcheck", [*sc, "--kvbench", f.fail], "failure", "the disk is on fire"),
        Case("selfcheck", [*sc, "--kvbench", f.silent], "failure", "wrote no usable JSON"),
    ]


def store_cases(f: Fixtures) -> list[Case]:
    st = ["--store", f.store]
    none = f.path("no-store.sqlite")
    csv, hgrm = f"{MISSING_DIR}/csv", f"{MISSING_DIR}/hgrm"
    cases = [
        Case("store", ["store", "info", *st], "ok", stdout_has="documents: 2"),
        Case("store", ["store"], "usage", "required"),
        Case("store", ["store", "add", *st, f.wrong], "usage", "neither a kvbench"),
        Case("store", ["store", "add", *st, f.empty], "usage", "empty file"),
        Case("store", ["store", "add", "--store", f.tmp, f.a], "usage", "is a directory"),
        Case("store", ["store", "add", "--store", f.a, f.b], "usage", "not an SQLite database"),
        Case("store", ["store", "add", *st, "--attr", "bad", f.b], "usage", "NAME=VALUE"),
        Case("store", ["store", "info", "--store", none], "usage", "no store at", (none,)),
        Case("store", ["store", "get", *st, "ffffffff"], "usage", "no stored document"),
        Case("store", ["store", "rm", *st, "host=nosuch"], "usage", "no stored run"),
        Case("store", ["store", "rm", *st, "nosuchfield=1"], "usage", "unknown field"),
        Case("store", ["store", "rm", *st, "--dry-run", "engine=memory"], "ok",
             stdout_has="would remove"),
        Case("store", ["store", "add", "--store", f.empty, f.a], "usage", "an empty file"),
        Case("store", ["store", "add", "--store", f.damaged_store, f.b], "usage", "is damaged"),
        Case("store", ["store", "rm", "--store", f.damaged_store, "host=vm"], "usage",
             "is damaged"),
        Case("store", ["store", "check", "--store", f.damaged_store], "usage", "damaged"),
        Case("store", ["store", "check", *st], "ok", stdout_has="ok"),
        Case("history", ["history", *st], "ok", stdout_has="series"),
        Case("history", ["history", "--store", f.junk], "usage", "not an SQLite database"),
        Case("history", ["history", *st, "--filter", "bad"], "usage", "NAME=VALUE"),
        Case("history", ["history", *st, "--html", f"{MISSING_DIR}/h.html"], "usage",
             "does not exist"),
        Case("trend", ["trend", *st], "ok", stdout_has="kvb trend"),
        Case("trend", ["trend", "--store", none], "usage", "no store at"),
        Case("trend", ["trend", *st, "--min-size", "1"], "usage", "--min-size"),
        Case("export", ["export", "csv", *st, "--out", f.path("csv")], "ok"),
        Case("export", ["export", "csv", f.a, *st], "usage", "reads the store, not files"),
        Case("export", ["export", "hgrm", f.micro], "usage", "this command reads a kvbench"),
        Case("export", ["export", "hgrm", f.a, "--out", hgrm], "usage", "does not exist",
             (hgrm,)),
        Case("export", ["export", "csv", *st, "--out", csv], "usage", "does not exist", (csv,)),
        Case("export", ["export", "bencher", *st, "--out", f.tmp], "usage", "is a directory"),
        Case("export", ["export", "bencher", *st, "--document", "zz"], "usage", "hash"),
        Case("export", ["export", "bencher", *st, "--out", "/dev/full"], "failure",
             "No space left on device"),
    ]
    return cases + damaged_store_cases(f)


def damaged_store_cases(f: Fixtures) -> list[Case]:
    """Every command that reads the store, on a damaged one (tests/store_test.py sweeps the
    damage over a larger store), and a store this user may read but not write."""
    cases: list[Case] = []
    bad = ["--store", f.damaged_store]
    cases += [Case("history", ["history", *bad], "usage", "is damaged"),
              Case("trend", ["trend", *bad], "usage", "is damaged"),
              Case("export", ["export", "bencher", *bad], "usage", "is damaged"),
              Case("export", ["export", "csv", *bad], "usage", "is damaged"),
              Case("compare", ["compare", *bad, "--base", "kind=kvbench", "--other",
                               "kind=gbench"], "usage", "is damaged"),
              Case("store", ["store", "get", *bad, "ffffffff"], "usage", "is damaged")]
    if f.readonly_store:
        ro, user = f.readonly_store, f.as_user
        d = os.path.dirname(ro)
        new, dir_only = os.path.join(d, "new.sqlite"), os.path.join(d, "dir_only.sqlite")
        cases += [
            Case("store", ["store", "add", "--store", ro, f.b], "failure",
                 f"store {ro}: permission denied: this user may not write the file",
                 prefix=user),
            Case("store", ["store", "rm", "--store", ro, "engine=memory"], "failure",
                 f"store {ro}: permission denied", prefix=user),
            Case("store", ["store", "add", "--store", dir_only, f.b], "failure",
                 f"store {dir_only}: permission denied: this user may not write the "
                 f"directory {d}", prefix=user),
            Case("store", ["store", "add", "--store", new, f.b], "failure",
                 f"cannot create the store {new}: permission denied", prefix=user),
            # Reading needs no write access: a read-only store is read.
            Case("history", ["history", "--store", ro], "ok", stdout_has="series",
                 prefix=user),
            Case("store", ["store", "rm", "--dry-run", "--store", ro, "engine=memory"], "ok",
                 stdout_has="would remove", prefix=user)]
    return cases


def collision_cases(f: Fixtures) -> list[Case]:
    """An output that names an input or another output (kvb_output_test.py walks the links,
    hard links and spellings): bad input, nothing written. Binaries that would run are the
    failing scripts, so a case that is not refused cannot harm a real one."""
    page = f.path("page.html")
    return [
        Case("report", ["report", "--html", f.a, f.a], "usage",
             f"--html names the same file as input {f.a}"),
        Case("compare", ["compare", "--json", page, "--html", page, f.a, f.b], "usage",
             f"--html names the same file as --json {page}", (page,)),
        Case("history", ["history", "--store", f.store, "--html", f.store], "usage",
             f"--html names the store {f.store}"),
        Case("export", ["export", "bencher", "--store", f.store, "--out", f.store], "usage",
             f"--out names the store {f.store}"),
        Case("micro", ["micro", "--compare", f.micro, "--json", f.micro], "usage",
             f"--json names the same file as --compare {f.micro}"),
        Case("selfcheck", ["selfcheck", "--kvbench", f.fail, "--json", f.fail], "usage",
             f"--json names the same file as --kvbench {f.fail}"),
        Case("crashtest", ["crashtest", "--kvbench", f.fail, "--json", f.fail], "usage",
             f"--json names the same file as --kvbench {f.fail}"),
        Case("dbbench", ["dbbench", "parity", "--kvbench", f.failing_kvbench, "--workdir",
                         f.tmp], "usage", f"--workdir {f.tmp} would write over --kvbench"),
        Case("matrix", ["matrix", "--kvbench", f.fail, "--configs", f.text, "--results-dir",
                        f.text], "usage", "--results-dir names the same file as --configs"),
        Case("versions", ["versions", "--dep", "lz4", "--source", f.tmp, "--results-dir", f.tmp],
             "usage", f"--results-dir names the same directory as --source {f.tmp}"),
        Case("bisect", ["bisect", "--repo", f.tmp, "--old", "a", "--new", "b", "--build-cmd",
                        "true", "--measure-cmd", "true", "--results-dir", f.tmp], "usage",
             f"--results-dir names the same directory as --repo {f.tmp}"),
    ]


def top_level_cases(f: Fixtures) -> list[Case]:
    return [Case("kvb", [], "usage", "required: COMMAND"),
            Case("kvb", ["nosuch"], "usage", "invalid choice")]


# ---- the gates: exit 3 (a gate found a change) and 4 (a gate could not decide) ----------------
def repeated(f: Fixtures, name: str, scale: float, reps: int, seed: int) -> str:
    """A side of `reps` runs without running them: f.a's first result repeated, its figures
    scaled (0.5: half as fast) with 1% noise (kvbtest.kvbench_doc)."""
    doc = kvbtest.kvbench_doc(kvbtest.load_json(f.a), random.Random(seed), scale, reps)
    return kvbtest.write_json(f.path(name), doc)


def gate_cases(f: Fixtures) -> list[Case]:
    """The gates: --fail-on-regression (compare; matrix and versions share its code) and
    trend --fail-on-change, found a change (3), undecided (4), passed (0)."""
    base4 = repeated(f, "base4.json", 1.0, 4, 1)
    same4 = repeated(f, "same4.json", 1.0, 4, 2)
    slow4 = repeated(f, "slow4.json", 0.5, 4, 3)
    slow3 = repeated(f, "slow3.json", 0.5, 3, 4)
    short = f.path("short.sqlite")
    added = run_kvb(["store", "add", "--store", short, f.a, f.b])
    assert added.returncode == 0, added.stderr
    gate = "--fail-on-regression"
    # One file a side: its repeats count as samples only with --repetitions-independent.
    reps = "--repetitions-independent"
    return [
        Case("compare", ["compare", base4, same4, gate, reps], "ok", stdout_has="no change"),
        Case("compare", ["compare", base4, slow4, gate, reps], "changed",
             "significant regression(s) beyond 5%", stdout_has="slower (p=0.029)"),
        Case("compare", ["compare", base4, slow3, gate, reps], "undecided", "row(s) undecided",
             stdout_has="n=4+3 repetitions cannot reach p<0.05: 4 repetitions a side needed"),
        Case("compare", ["compare", base4, slow4, gate], "undecided", "row(s) undecided",
             stdout_has="one process a side"),
        Case("compare", ["compare", base4, slow3], "ok", stdout_has="undecided"),  # no gate
        Case("trend", ["trend", "--store", short, "--fail-on-change"], "undecided",
             "series too short to test", stdout_has="too short to test, undecided"),
        Case("matrix", ["matrix", "--kvbench", ARGS.kvbench, "--engines", "memory", "--threads",
                        "1,2", gate], "usage", "a study's tables show"),
    ]


CASES = (report_cases, compare_cases, matrix_cases, fleet_cases, runner_cases, store_cases,
         collision_cases, top_level_cases, gate_cases)


class ExitCodesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.mkdtemp(prefix="kvb-exit-codes.")
        cls.table = exit_table()
        cls.fixtures = Fixtures(cls.tmp)
        cls.cases = [c for make in CASES for c in make(cls.fixtures)]

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_table_is_the_one_of_core_errors(self) -> None:
        expected = {errors.EXIT_OK: "ok", errors.EXIT_FAILURE: "failure",
                    errors.EXIT_USAGE: "usage", errors.EXIT_CHANGED: "changed",
                    errors.EXIT_UNDECIDED: "undecided"}
        for code, kind in expected.items():
            self.assertEqual(status_for(self.table, kind), code, MEANINGS[kind])
        self.assertIn(errors.EXIT_INTERRUPTED, self.table)
        self.assertIn(errors.EXIT_BROKEN_PIPE, self.table)
        self.assertEqual(sorted(self.table), sorted(
            [*expected, errors.EXIT_INTERRUPTED, errors.EXIT_BROKEN_PIPE]))

    def test_every_exit_status_the_docs_and_help_state_is_the_tables(self) -> None:
        kvbench = kvbench_table()
        allowed = statuses_by_meaning(kvbench)
        known = set(self.table) | set(kvbench)
        texts = {}
        # docs/*.md only, on purpose: docs/evidence/ records particular runs, each at its own
        # commit, and the statuses it quotes are those of that commit, not promises of this one
        # (docs/evidence/README.md). What a command exits with today is said in docs/*.md.
        for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
            with open(path, encoding="utf-8") as f:
                texts[os.path.relpath(path, ROOT)] = f.read()
        helps = help_texts()
        self.assertGreater(len(helps), 20, sorted(helps))  # kvb, its commands, subcommands
        texts.update(helps)
        self.assertEqual(misstated(texts, allowed, known), [])
        # Enough is read to be worth it: the gates' statements are found and judged.
        judged = [s for name, text in texts.items()
                  for s in exit_statements.statements(text, name) if s.meaning]
        for meaning in ("changed", "undecided", "usage", "interrupted"):
            self.assertTrue(any(s.meaning == meaning for s in judged), meaning)
        self.assertTrue(any(s.where.startswith("kvb bisect:") and s.meaning == "undecided"
                            for s in judged))

    def test_a_misstated_exit_status_is_found(self) -> None:
        # The statements docs/compare.md and placement.md made (issue 38), and others.
        allowed = statuses_by_meaning(kvbench_table())
        known = set(self.table) | set(kvbench_table())
        wrong = {  # text: how many of its statuses are wrong
            "It exits 1 when a regression is found.": 1,
            "Exit status everywhere: 0 done, 1 a build or run failed (or, with "
            "`--fail-on-regression`, a regression was found), 2 bad input.": 1,
            "the budget is spent first: \"could not decide between old and new\". All of these "
            "exit 1.": 1,
            "otherwise `not confirmed: <why>` and exit 1. The report gives": 1,
            "it ends **`not\nconfirmed: a code-placement effect`**, exit 1.": 1,
            "--fail-on-change exits 3 when anything is reported, else 1 when a series is too "
            "short to test (undecided), else 0.": 1,
            "a bad string is a usage error (exit 1).": 1,
            "kvbench exits with 130 or 2 when interrupted.": 1,
            "Exit status:\n0 success, 1 usage error, 2 runtime failure.": 2,
            "A run like that exits 5.": 1,
        }
        for text, n in wrong.items():
            with self.subTest(text=text):
                self.assertEqual(len(misstated({"t": text}, allowed, known)), n, text)
        right = ["it exits 3 when a row is a significant regression beyond the threshold, else 4 "
                 "when a row is undecided, else 0.", "with no regression it exits 0.",
                 "every usage error below, exit 2) and runs nothing: exit 0 with `done`",
                 "`--fail-on-regression` exits 4 on them.", "Exit status:\n0 success, 2 usage "
                 "error, 1 runtime failure."]
        self.assertEqual(misstated({f"r{i}": t for i, t in enumerate(right)}, allowed, known), [])

    def test_kvbench_without_its_reader_exits_141_as_docs_cli_md_says(self) -> None:
        self.assertIn(errors.EXIT_BROKEN_PIPE, kvbench_table())
        r, w = os.pipe()
        os.close(r)  # the reader is gone before kvbench writes its first line
        p = subprocess.run([ARGS.kvbench, "--engine=memory", "--benchmarks=fillseq",
                            "--num=100", "--report_interval_seconds=0",
                            f"--db={os.path.join(self.tmp, 'pipe-db')}"], stdout=w,
                           stderr=subprocess.PIPE, timeout=120)
        os.close(w)
        self.assertEqual(128 - p.returncode, errors.EXIT_BROKEN_PIPE, p.stderr)  # -SIGPIPE
        self.assertEqual(-p.returncode, signal.SIGPIPE)

    def test_every_subcommand_has_its_error_paths_walked(self) -> None:
        names = {name for name, *_ in cli.COMMANDS}
        walked = {c.command for c in self.cases if c.kind == "usage"}
        self.assertEqual(names - walked, set(), "subcommands without a bad-input case")

    def test_every_case_exits_by_the_table(self) -> None:
        self.assertFalse(os.path.exists(MISSING_DIR), f"{MISSING_DIR} must not exist")
        # A few at a time: most cases are a Python start-up and a refusal.
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            done = list(pool.map(lambda c: run_kvb(c.argv, c.prefix), self.cases))
        for case, p in zip(self.cases, done):
            with self.subTest(args=" ".join(case.argv)):
                self.check(case, p)
        self.assertFalse(os.path.exists(MISSING_DIR), "a refused command made its directory")

    def check(self, case: Case, p: subprocess.CompletedProcess[str]) -> None:
        said = f"\nexit {p.returncode}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}"
        self.assertIn(p.returncode, self.table, "a status outside docs/cli.md's table" + said)
        self.assertEqual(p.returncode, status_for(self.table, case.kind),
                         f"expected {MEANINGS[case.kind]!r}" + said)
        self.assertNotIn("Traceback", p.stderr, said)
        if case.kind in ("ok", "changed", "undecided"):  # what was asked was done
            self.assertNotIn("kvb: error:", p.stderr, said)
            self.assertIn(case.stdout_has, p.stdout, said)
            self.assertIn(case.says, p.stderr, said)
            return
        self.assertIn("kvb: error:", p.stderr, said)
        self.assertIn(case.says, p.stderr, said)
        if case.kind == "usage":
            self.assertEqual(p.stdout, "", "bad input printed results" + said)
            for path in case.absent:
                self.assertFalse(os.path.lexists(path), f"{path} was written" + said)


if __name__ == "__main__":
    kvbtest.main("kvbench", "micro")
