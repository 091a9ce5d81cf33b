#!/usr/bin/env python3
"""kvb matrix --presets and kvb versions' rounds (scripts/kvbtools/measure/series_run.py on the
engine: loop.py, executor.py, pinning.py) on a fake runner: no build, no benchmark. The runs
write Google Benchmark JSON whose values the test chooses per build, link and round, so each test
knows the answer: rounds paired (a moment shared by a round's runs cancels), a round whose canary
moved set apart and repeated, links added where the variance is between links, the budget's
stop, and the cost line."""
from __future__ import annotations

import dataclasses
import html
import io
import json
import math
import os
import random
import re
import stat
import sys
import tempfile
import threading
import time
import types
import unittest
from typing import Callable, Iterator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import kvbtest  # noqa: E402
from kvbtools.commands import series_report  # noqa: E402
from kvbtools.core import compiled, levels, results, stats  # noqa: E402
from kvbtools.core.errors import UsageError  # noqa: E402
from kvbtools.measure import executor, loop, pinning, plan, runner, series_run, spent  # noqa: E402
from kvbtools.measure import slurm  # noqa: E402
from kvbtools.measure.plan import Budget, Variant  # noqa: E402
from kvbtools.measure.runner import Build, Workload  # noqa: E402
from kvbtools.pages import result_pages  # noqa: E402

BENCH = "lz4/compress/4096"
# value(build label, seed, round, run number) -> bytes per second of that run
Value = Callable[[str, int, int, int], float]


def gbench(path: str, bps: float, names: tuple[str, ...] = (BENCH,),
           context: dict[str, str] | None = None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": {"kvbench_preset": "x86-gcc-native", **(context or {})},
                   "benchmarks": [
            {"name": n, "run_name": n, "run_type": "iteration", "iterations": 1000,
             "real_time": 4096 / bps * 1e9, "cpu_time": 4096 / bps * 1e9, "time_unit": "ns",
             "bytes_per_second": bps} for n in names]}, f)


class Fake:
    """The runner, the relinks, the canary and the clock of one test."""

    def __init__(self, value: Value, canary: Callable[[int], float] | None = None,
                 run_seconds: float = 0.01, relink_seconds: float = 1.0,
                 names: tuple[str, ...] = (BENCH,),
                 context: Callable[[str], dict[str, str]] | None = None) -> None:
        self.value, self.canary, self.names = value, canary, names
        self.context = context      # build label -> what its runs' contexts add
        self.log: list[tuple[str, int, tuple[str, ...]]] = []   # (file, round, benchmarks)
        self.run_seconds, self.relink_seconds = run_seconds, relink_seconds
        self.now = 0.0
        self.runs = 0
        self.canaries = 0
        self.relinked: list[tuple[str, int]] = []   # (build, links after)

    def monotonic(self) -> float:
        return self.now

    def run_once(self, binary: str, plan: Workload, out: str, engine: str = "",
                 args: list[str] | None = None) -> None:
        build = binary.split(os.sep)[-3].removeprefix("test-")
        seed = int(binary.rsplit("-layout", 1)[1]) if "-layout" in binary else 0
        r = int(re.search(r"\.r(\d+)(\.c\d+)?\.json$", out).group(1))  # type: ignore[union-attr]
        self.runs += 1
        self.now += self.run_seconds
        assert "--cpu_affinity=0" in plan.extra, plan.extra
        names = tuple(n for n in self.names if re.search(plan.micro_filter, n))
        self.log.append((os.path.basename(out), r, names))
        gbench(out, self.value(build, seed, r, self.runs), names,
               self.context(build) if self.context else None)

    def micro_names(self, binary: str, plan: Workload) -> list[str]:
        return [n for n in self.names if re.search(plan.micro_filter, n)]

    def relink(self, b: Build, micro: bool, wrap: list[str] | None = None) -> None:
        self.now += self.relink_seconds
        self.relinked.append((b.label, b.layouts))

    def read(self, binary: str, cpu: int) -> pinning.Reading | None:
        self.canaries += 1
        if self.canary is None:
            return None
        return pinning.Reading(cpu, self.canary(self.canaries))


class SeriesCase(kvbtest.TempDirTest):
    """series_run.run on a Fake (the tests are in the subclasses)."""
    TMP_PREFIX = "kvb-series-rounds-test."

    def setUp(self) -> None:
        super().setUp()
        self.saved = (runner.do_build, runner.check_plan, runner.run_once, runner.relink,
                      runner.micro_names, loop.time, executor.time,
                      pinning.Watch.__init__.__defaults__)

    def tearDown(self) -> None:
        (runner.do_build, runner.check_plan, runner.run_once, runner.relink, runner.micro_names,
         loop.time, executor.time, pinning.Watch.__init__.__defaults__) = self.saved
        super().tearDown()

    def run_series(self, fake: Fake, *, links: int = 4, repeats: int = 5,
                   max_rounds: int = 400, max_time: float | None = 600.0,
                   builds: tuple[str, ...] = ("gcc", "clang")) -> series_run.SeriesOutcome:
        """series_run.run over `builds` and the control, on `fake`; pinned to CPU 0 with a
        canary when `fake` has one."""
        runner.do_build = lambda b, micro, step="": 10.0  # type: ignore[assignment]
        runner.check_plan = lambda binary, plan: None  # type: ignore[assignment]
        runner.run_once = fake.run_once  # type: ignore[assignment]
        runner.relink = fake.relink  # type: ignore[assignment]
        runner.micro_names = fake.micro_names  # type: ignore[assignment]
        clock = types.SimpleNamespace(monotonic=fake.monotonic)
        loop.time = executor.time = clock  # type: ignore[assignment]
        pinning.Watch.__init__.__defaults__ = (fake.read, fake.monotonic)
        made = [Build(label, label, f"test-{label}", layouts=links) for label in builds]
        variants = [Variant(b.label, b.label) for b in made] + [Variant("control", "gcc")]
        pin = pinning.Pin((0,), "fake-canary" if fake.canary else "", "CPU 0 (test)")
        chosen = series_run.choose_pin
        series_run.choose_pin = lambda s, p, c: pin  # type: ignore[assignment]
        try:
            return series_run.run(
                "matrix", made, variants, Workload(micro=True), series_run.Judging(
                    stats.Judgement(0.05, 0.05), (), None),
                Budget(repeats, max_rounds, max_time), "0", self.tmp)
        finally:
            series_run.choose_pin = chosen  # type: ignore[assignment]

    def cell(self, out: series_run.SeriesOutcome, side: str) -> series_run.comparison.Cell:
        return next(x for x in out.comparison.cells if x.side == side)


class SeriesRunTest(SeriesCase):
    def test_rounds_are_paired_so_a_shared_moment_cancels(self) -> None:
        # A moment of +-30% shared by every run of a round (the CPU, a neighbour), 0.5% noise of
        # each run: clang 1.10x gcc is faster, the control no change, after the first rounds.
        rng = random.Random(3)
        moment = {r: math.exp(rng.gauss(0, 0.3)) for r in range(1, 500)}

        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * moment[r] * (1.10 if build == "clang" else 1.0) * \
                math.exp(rng.gauss(0, 0.005))
        out = self.run_series(Fake(value), links=1)
        clang, control = self.cell(out, "clang"), self.cell(out, "control")
        self.assertEqual(clang.verdict.word, "faster", clang.verdict.note)
        self.assertAlmostEqual(clang.verdict.ratio, 1.10, delta=0.01)
        self.assertEqual(control.verdict.word, stats.NO_CHANGE, control.verdict.note)
        self.assertEqual(clang.verdict.unit, "5 paired rounds")
        self.assertTrue(out.spent.stopped_by == "settled")
        self.assertEqual((out.spent.rounds, out.spent.links, out.spent.runs), (5, 1, 15))
        # The same values judged as if each run were independent are far from decided.
        unpaired = levels.judge(levels.Sample.processes(clang.base),
                                levels.Sample.processes(clang.other), stats.Judgement(0.05, 0.05))
        self.assertNotEqual(unpaired.word, "faster")

    def test_a_micro_round_runs_its_benchmarks_in_chunks_every_series_once_a_chunk(self) -> None:
        # 12 benchmarks: chunks of 5, 5 and 2; in a round each chunk runs on every series before
        # the next chunk starts, so a benchmark's paired runs are a chunk apart, not a suite.
        names = tuple(f"b{i}/4096" for i in range(12))
        fake = Fake(lambda build, seed, r, n: 1e9 * (1.10 if build == "clang" else 1.0),
                    names=names)
        out = self.run_series(fake, links=1, repeats=2, max_rounds=2)
        first = [(f, b) for f, r, b in fake.log if r == 1]
        chunks = [names[0:5], names[5:10], names[10:12]]
        self.assertEqual([b for _, b in first], [c for c in chunks for _ in range(3)])
        self.assertEqual([f.split(".r1.")[1] for f, _ in first],
                         [f"c{i}.json" for i in (1, 2, 3) for _ in range(3)])
        self.assertEqual(sorted({f.split(".r1.")[0] for f, _ in first[:3]}),
                         ["clang", "control", "gcc"])
        rows = {x.bench for x in out.comparison.cells}
        self.assertEqual(rows, set(names))
        clang = [x for x in out.comparison.cells if x.side == "clang"]
        self.assertTrue(all(abs(x.verdict.ratio - 1.10) < 1e-9 for x in clang))

    def test_a_chunk_filter_selects_exactly_its_names(self) -> None:
        f = runner.exact_filter(["lz4/compress/4096", "a.b/4096", "x(y)+[z]"])
        self.assertEqual(f, r"^(lz4/compress/4096|a\.b/4096|x\(y\)\+\[z\])$")
        for name, hit in (("lz4/compress/4096", True), ("a.b/4096", True), ("x(y)+[z]", True),
                          ("axb/4096", False), ("lz4/compress/40960", False),
                          ("zlz4/compress/4096", False)):
            self.assertEqual(bool(re.search(f, name)), hit, name)

    def test_the_control_pairs_the_base_binary_with_itself(self) -> None:
        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * (0.77 if seed == 2 else 1.0) * (1 + 0.002 * (n % 3))
        out = self.run_series(Fake(value))
        links = {x.link_name() for x in out.runs if x.variant == "control"}
        self.assertEqual(links, {x.link_name() for x in out.runs if x.variant == "gcc"})
        self.assertTrue(all(x.startswith("gcc seed ") for x in links), links)
        control = self.cell(out, "control")
        self.assertEqual(control.verdict.word, stats.NO_CHANGE, control.verdict.note)
        self.assertIn("link pairs, paired by round", control.verdict.unit)
        # The plan is plain data (matrix.json keeps it): the control runs the base's build.
        doc = json.loads(json.dumps(out.plan.to_json()))
        self.assertEqual([(v["label"], v["build"]) for v in doc["variants"]],
                         [("gcc", "gcc"), ("clang", "clang"), ("control", "gcc")])

    def test_a_disturbed_round_is_set_apart_and_repeated_on_its_link(self) -> None:
        # The 4th canary (after round 3, before round 4) reads 50% slower: rounds 3 and 4 are
        # set apart; their runs of clang read 2x and would make it "faster".
        def canary(n: int) -> float:
            return 150.0 if n == 4 else 100.0 + n % 2

        def value(build: str, seed: int, r: int, n: int) -> float:
            fast = 2.0 if build == "clang" and r in (3, 4) else 1.0
            return 1e9 * fast * (1 + 0.003 * (n % 5))
        fake = Fake(value, canary)
        out = self.run_series(fake, max_rounds=10)
        self.assertEqual(sorted(out.set_apart), [3, 4])
        # As the ratio of its time (it said "ran 50% slower"; 235% slower read as nothing).
        self.assertRegex(out.set_apart[3], r"^round 3: the canary after it took 1\.\d\dx its "
                                           r"median time in this comparison \(slower\)")
        self.assertRegex(out.set_apart[4], r"^round 4: the canary before it took 1\.\d\dx its "
                                           r"median time in this comparison \(slower\)")
        self.assertEqual(out.spent.set_apart, 2)
        seeds = {x.round: x.link for x in out.runs if x.variant == "gcc"}
        self.assertEqual(seeds[3], seeds[4])   # repeated on the same link...
        self.assertEqual(seeds[4], seeds[5])   # ...until a round on it was not disturbed
        kept = [p for s in out.comparison.sides for p in s.paths]
        self.assertFalse(any(re.search(r"\.r[34]\.json$", p) for p in kept))
        self.assertEqual(self.cell(out, "clang").verdict.word, stats.NO_CHANGE)
        self.assertIn("2 set apart by the canary", out.spent.text(out.unresolved()))
        # A canary before every round, and after the last (the one after a round serves as the
        # next one's before).
        self.assertEqual(fake.canaries, out.spent.rounds + 1)

    def test_links_are_added_where_the_variance_is_between_links(self) -> None:
        rng = random.Random(4)
        place = {(b, k): math.exp(rng.gauss(0, 0.08)) for b in ("gcc", "clang")
                 for k in range(99)}

        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * place[(build, seed)] * (1 + 0.002 * (n % 3))
        fake = Fake(value, relink_seconds=1.0)
        out = self.run_series(fake, max_rounds=200)
        self.assertGreater(out.spent.links, 4)
        # Relinked in batches: every build to 8 seeds at once (then 12, ...).
        self.assertEqual(fake.relinked[:2], [("gcc", 8), ("clang", 8)])
        links = {x.link for x in out.runs if x.variant == "clang"}
        self.assertEqual(len(links), out.spent.links)

    def test_noise_within_links_takes_rounds_not_links(self) -> None:
        rng = random.Random(5)
        fake = Fake(lambda build, seed, r, n: 1e9 * math.exp(rng.gauss(0, 0.05)),
                    relink_seconds=1000.0)
        out = self.run_series(fake, max_rounds=60)
        self.assertEqual(fake.relinked, [])
        self.assertEqual((out.spent.links, out.spent.rounds, out.spent.stopped_by),
                         (4, 60, "max rounds"))

    def test_the_time_budget_stops_it_and_the_cost_line_says_so(self) -> None:
        rng = random.Random(6)

        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * math.exp(rng.gauss(0, 0.3))
        fake = Fake(value, run_seconds=1.0)
        out = self.run_series(fake, max_time=60.0)
        self.assertEqual(out.spent.stopped_by, "max time")
        self.assertLessEqual(out.spent.measuring + out.spent.relinking, 60.0)
        self.assertGreater(out.unresolved(), 0)
        self.assertRegex(out.spent.text(out.unresolved()),
                         r"^stopped after \d+ links? x [\d.]+ rounds? \(\d+ rounds, \d+ runs\), "
                         r"\d+ s measuring \+ \d+ s relinking; builds took 20 s \(budget 60 s\): "
                         r"the time budget ran out with \d+ row\(s\) unresolved$")

    def test_the_default_budget_follows_the_builds_at_least_two_minutes(self) -> None:
        rng = random.Random(7)

        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * math.exp(rng.gauss(0, 0.3))
        out = self.run_series(Fake(value, run_seconds=1.0), max_time=None)
        self.assertEqual(out.spent.budget, plan.FLOOR)   # builds: 2 x 10 s
        self.assertEqual(out.spent.stopped_by, "max time")

    def test_repeats_and_max_rounds_give_exactly_n_rounds(self) -> None:
        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * (1 + 0.2 * (n % 7))
        out = self.run_series(Fake(value), repeats=5, max_rounds=5)
        self.assertEqual((out.spent.rounds, out.spent.runs, out.spent.stopped_by), (5, 15, "max rounds"))

    def test_a_clear_answer_costs_the_first_rounds_and_says_so(self) -> None:
        def value(build: str, seed: int, r: int, n: int) -> float:
            return 1e9 * (1.3 if build == "clang" else 1.0) * (1 + 0.001 * (n % 3))
        out = self.run_series(Fake(value), max_time=None)
        self.assertEqual(self.cell(out, "clang").verdict.word, "faster")
        self.assertEqual(out.spent.text(0),
                         "decided after 4 links x 2 rounds (8 rounds, 24 runs), 0 s measuring "
                         "+ 0 s relinking; builds took 20 s (budget 120 s)")
        self.assertEqual(out.spent.to_json()["rounds_per_link"], 2)

    def test_work_side_by_side_counts_its_wall_time_once_and_the_totals_say_where_it_went(
            self) -> None:
        # Two builds at once (a bisect's slots): 0.4 s of wall time, not 0.6, and 2 at once.
        tally = spent.SideBySide()
        got: list[float] = []

        def build(delay: float, length: float) -> None:
            time.sleep(delay)
            with tally.piece() as wall:
                time.sleep(length)
            got.extend(wall)
        threads = [threading.Thread(target=build, args=a) for a in ((0.0, 0.3), (0.1, 0.3))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertAlmostEqual(sum(got), 0.4, delta=0.08)
        self.assertEqual(tally.width, 2)
        total = (spent.Spent(builds=2, building=96.0, build_width=tally.width)
                 + spent.Spent(links=8, rounds=180, runs=560, relinks=4, measuring=240.1,
                               relinking=12.0, canary=25.0)
                 + spent.Spent(counts=3, counting=70.0, count_width=2))
        self.assertEqual(total.text(),
                         "2 build(s) (96 s, 2 side by side), 4 relink(s) adding links (12 s), "
                         "3 commit(s) counted (70 s, 2 side by side), 180 round(s) of 560 "
                         "run(s), 240.1 s measuring (25 s of canaries)")
        self.assertEqual(spent.Spent.from_json(total.to_json()), total)
        before = {"builds": 5, "building_seconds": 501.0, "relinks": 8, "rounds": 64}
        self.assertNotIn("counted", spent.Spent.from_json(before).text())   # a total of before


SYSTEM_LZ4 = {"lz4_origin": "system liblz4-1:amd64 1.9.4-1",
              "rocksdb_origin": "system librocksdb7.8 7.8.3-2"}


def source_lz4(build: str) -> dict[str, str]:
    """A context whose lz4 this build compiled (as cmake/KvbenchSourceDeps.cmake records it)."""
    compiler = "Clang 14.0.6" if build == "clang" else "GNU 12.2.0"
    return {"lz4_origin": f"source /src/lz4-1.9.4 1.9.4 ({compiler}: -march=native -O2 -DNDEBUG)",
            "rocksdb_origin": "system librocksdb7.8 7.8.3-2"}


class CompiledTest(SeriesCase):
    """What the builds compiled (core/compiled.py), as kvb matrix's table and JSON say it."""

    NAMES = (BENCH, "crc32c/rocksdb_lib/4096", "crc32c/fold_512/4096", "xxh3_64/inline/4096")

    def outcome(self, context: Callable[[str], dict[str, str]]) -> series_run.SeriesOutcome:
        fake = Fake(lambda build, seed, r, n: 1e9 * (1 + 0.001 * (n % 3)), names=self.NAMES,
                    context=context)
        return self.run_series(fake, links=1, repeats=3, max_rounds=3)

    def text(self, out: series_run.SeriesOutcome) -> str:
        req = types.SimpleNamespace(judgement=stats.Judgement(0.05, 0.05), control=True)
        return series_report.table_text(out, Workload(micro=True), req, [])  # type: ignore[arg-type]

    def test_a_library_no_build_compiled_says_so_on_its_rows(self) -> None:
        out = self.outcome(lambda build: SYSTEM_LZ4)
        same = ("same liblz4-1 1.9.4-1 (installed) in every build: this compares kvbench's "
                "code, not the library's")
        # The control (the base's own binaries: an A/A) compares no code and has no note.
        self.assertEqual(compiled.notes(out.comparison, ("control",)), {
            (BENCH, "clang"): same, ("crc32c/rocksdb_lib/4096", "clang"): same.replace(
                "liblz4-1 1.9.4-1", "librocksdb7.8 7.8.3-2")})
        text = self.text(out)
        row = next(x for x in text.splitlines() if x.lstrip().startswith(BENCH) and "[" in x)
        self.assertEqual(row.count("; same installed library"), 1, row)
        self.assertIn(f"note: {same} ({BENCH} [clang])", text)
        doc = series_report.report_json(out, [], {}, [])
        notes = {(r["benchmark"], r["side"]): r["note"] for r in doc["rows"]}
        self.assertEqual(notes[(BENCH, "clang")], same)
        self.assertIsNone(notes[("crc32c/fold_512/4096", "clang")])   # kvbench's own code
        self.assertIsNone(notes[("xxh3_64/inline/4096", "clang")])    # xxhash.h compiled in
        # report.html says it too, from the runs' contexts again.
        results.write_json(os.path.join(self.tmp, "matrix.json"), doc)
        page = "".join(b for b in result_pages.page_for_dir(self.tmp).blocks
                       if isinstance(b, str))
        self.assertIn("<b>What the builds compiled</b>", page)
        self.assertIn(html.escape(f"{same} ({BENCH} [clang])"), page)

    def test_a_library_each_build_compiled_has_no_note_and_names_its_compiler(self) -> None:
        out = self.outcome(source_lz4)
        notes = compiled.notes(out.comparison, ("control",))
        self.assertNotIn((BENCH, "clang"), notes)
        self.assertIn(("crc32c/rocksdb_lib/4096", "clang"), notes)   # librocksdb as installed
        text = self.text(out)
        self.assertIn("compiled: clang: lz4 source /src/lz4-1.9.4 1.9.4 (Clang 14.0.6: ", text)
        self.assertIn("compiled: gcc: lz4 source /src/lz4-1.9.4 1.9.4 (GNU 12.2.0: ", text)
        self.assertNotIn("compiled: control:", text)
        doc = series_report.report_json(out, [], {}, [])
        self.assertEqual(doc["compiled"]["clang"]["lz4"],
                         [source_lz4("clang")["lz4_origin"]])

    def test_runs_that_do_not_say_where_the_library_came_from_get_no_note(self) -> None:
        out = self.outcome(lambda build: {})
        self.assertEqual(compiled.notes(out.comparison, ("control",)), {})

    def test_a_kv_row_is_its_engines(self) -> None:
        self.assertEqual(compiled.row_library("kvbench", "rocksdb readrandom"), "rocksdb")
        self.assertIsNone(compiled.row_library("kvbench", "memory readrandom"))
        lib = {"name": "rocksdb", "origin": "system", "package": "librocksdb7.8 7.8.3-2",
               "version": "7.8.3"}
        got = compiled.origin({"libraries": [lib]}, "rocksdb")
        self.assertEqual(got.what if got else None, "librocksdb7.8 7.8.3-2 (installed)")


class ProgressTest(SeriesCase):
    """A round's runs are one line rewritten on a terminal, and a line per round elsewhere."""

    class Err(io.StringIO):
        tty = False

        def isatty(self) -> bool:
            return self.tty

    def progress(self, tty: bool) -> str:
        err = self.Err()
        err.tty = tty
        saved = sys.stderr
        sys.stderr = err
        try:
            self.run_series(Fake(lambda build, seed, r, n: 1e9), links=1, repeats=3,
                            max_rounds=3)
        finally:
            sys.stderr = saved
        return err.getvalue()

    def test_not_a_terminal_a_line_per_round(self) -> None:
        lines = self.progress(False).splitlines()
        self.assertFalse([x for x in lines if ", run " in x or "\r" in x], lines)
        self.assertEqual([x for x in lines if " done (" in x],
                         [f"kvb: round {r} done (3 runs, layout seed 0)"
                          for r in (1, 2, 3)])

    def test_a_terminal_one_line_rewritten(self) -> None:
        text = self.progress(True)
        # Every run is a status line (carriage return, the line cleared, no newline) ...
        self.assertEqual(len(re.findall(r"\r\033\[Kkvb: round \d, run \d/3: ", text)), 9)
        self.assertIn("\r\033[Kkvb: round 2, run 3/3: ", text)
        # ... and nothing it wrote stays: every line that ends holds no run.
        for line in text.split("\n"):
            self.assertNotIn(", run ", line.rsplit("\r\033[K", 1)[-1], repr(line))
        self.assertIn("kvb: round 3 done (3 runs, layout seed 0)\n", text)


class WatchTest(unittest.TestCase):
    """The canary around the rounds (pinning.Watch)."""

    def test_a_reading_judges_the_rounds_on_both_sides_of_it(self) -> None:
        readings = iter([100.0, 101.0, 100.0, 160.0, 100.0, 101.0, 100.0])
        now = [0.0]
        w = pinning.Watch(pinning.Pin((3,), "canary", ""),
                          read=lambda b, c: pinning.Reading(c, next(readings)),
                          clock=lambda: now[0])
        notes = []
        for r in range(1, 6):
            notes.append((w.before(r), w.after(r)))
        self.assertEqual([bool(b or a) for b, a in notes], [False, False, True, True, False])
        self.assertEqual(w.readings, 6)   # one before the first round, one after each
        # A reading older than REUSE_SECONDS is not reused: a fresh one before the round.
        now[0] += pinning.REUSE_SECONDS + 1
        self.assertEqual(w.before(6), "")
        self.assertEqual(w.readings, 7)

    def test_wall_time_rates_watch_the_canarys_wall_clock(self) -> None:
        # A busy loop sharing the CPU leaves the best window as it was and doubles the wall
        # clock: read by the wall clock (kvb matrix, KV bisects) the round is set apart; by the
        # best window it is not.
        def readings() -> Iterator[pinning.Reading]:
            # before round 1, after 1, 2, 3 (the loop came), 4 (it went); a reading after a
            # round serves the next one's "before"
            for wall in (101.0, 100.0, 102.0, 200.0, 100.0):
                yield pinning.Reading(3, 50.0, wall)

        for by_wall, disturbed in ((True, [False, False, True, True]),
                                   (False, [False, False, False, False])):
            it = readings()
            w = pinning.Watch(pinning.Pin((3,), "canary", "", by_wall=by_wall),
                              read=lambda b, c: next(it), clock=lambda: 0.0)
            got = [bool(w.before(r) or w.after(r)) for r in range(1, 5)]
            self.assertEqual(got, disturbed, f"by_wall={by_wall}")
        self.assertEqual(pinning.Reading(0, 50.0).value(True), 50.0)  # no wall clock reported

    def test_no_canary_no_reading(self) -> None:
        w = pinning.Watch(pinning.Pin((0,), "", ""), read=lambda b, c: None)
        self.assertEqual((w.before(1), w.after(1), w.readings), ("", "", 0))


class FleetLoopTest(unittest.TestCase):
    """The loop on an executor of several hosts (measure/fleet.py's shape, without Slurm): a
    step on every host in rounds of its own, a lost part set apart and run again on one host;
    the plan read back as the worker reads it; the Slurm configuration file."""

    class Hosts:
        """An Executor of `hosts` hosts, batched; part `lose` of the first block is lost."""
        batched = True

        def __init__(self, hosts: int, lose: int | None) -> None:
            self.hosts, self.lose, self.blocks = hosts, lose, []

        def run(self, p: plan.Plan, block: plan.Block) -> executor.BlockResult:
            self.blocks.append(block)
            out = executor.BlockResult(wall=1.0)
            for i, (sub, part) in enumerate(block.plans(p)):
                lost = len(self.blocks) == 1 and i == self.lose
                for r, seed in part:
                    out.seconds[r] = 0.5
                    out.measurements += [plan.Measurement(f"{v.label}.r{r}", v.label, v.build,
                                                          seed, r, (0,), f"node{i + 1}")
                                         for v in sub.order(r)]
                    if lost:
                        out.set_apart[r] = f"round {r}: lost: job 7 on node{i + 1}: NODE_FAIL"
                        out.lost.add(r)
            return out

    class Counter:
        def __init__(self) -> None:
            self.kept: list[plan.Measurement] = []

        def add(self, got: list[plan.Measurement], set_apart: set[int]) -> None:
            self.kept += [m for m in got if m.round not in set_apart]

        def settled(self) -> bool:
            return True

        def rows(self) -> list[levels.Components]:
            return []

    def plan(self) -> plan.Plan:
        return plan.Plan("", (Variant("a", "a"), Variant("b", "b")), 2, Budget(4, 400, None),
                         pinning.Pin((0,), "", "CPU 0 (test)"))

    def test_every_host_measures_every_link_in_rounds_of_its_own(self) -> None:
        ex, judge = self.Hosts(2, lose=1), self.Counter()
        builder = types.SimpleNamespace(batch=1, guess=1.0, links=lambda b: 2,
                                        relink=lambda b, k: 0)
        out = loop.Loop(self.plan(), ex, builder, judge, lambda line: None).run()
        first, again = ex.blocks
        self.assertEqual((first.parts, first.rounds),
                         (2, ((1, 0), (2, 1), (3, 0), (4, 1), (5, 0), (6, 1), (7, 0), (8, 1))))
        self.assertEqual(first.split(), [first.rounds[:4], first.rounds[4:]])
        # node2's part was lost: its 4 rounds set apart, their seeds run again on one host.
        self.assertEqual(sorted(out.set_apart), [5, 6, 7, 8])
        self.assertEqual((again.parts, again.rounds), (1, ((9, 0), (10, 1), (11, 0), (12, 1))))
        self.assertEqual((out.spent.rounds, out.spent.set_apart, out.spent.lost), (12, 4, 4))
        self.assertIn("4 lost with their jobs and run again", out.spent.text())
        self.assertNotIn("set apart by the canary", out.spent.text())
        self.assertEqual(out.spent.measuring, 2.0)   # the blocks' wall clock, not their rounds'
        self.assertEqual({m.round for m in judge.kept}, {1, 2, 3, 4, 9, 10, 11, 12})
        self.assertEqual(judge.kept[0].where(), levels.Where("a seed 0", "a.r1", 1, "node1"))

    def test_a_plan_in_groups_measures_each_group_on_a_host_of_its_own(self) -> None:
        # A bisect step of two candidates on a cluster: old, new and c1 on one node, old, new
        # and c2 on the other; c2's part is lost, and its rounds run again with c2, not c1.
        p = dataclasses.replace(self.plan(), links=1, variants=tuple(
            Variant(x, x) for x in ("old", "new", "c1", "c2")),
            groups=(("old", "new", "c1"), ("old", "new", "c2")))
        ex, judge = self.Hosts(2, lose=1), self.Counter()
        builder = types.SimpleNamespace(batch=1, guess=1.0, links=lambda b: 1,
                                        relink=lambda b, k: 0)
        out = loop.Loop(p, ex, builder, judge, lambda line: None).run()
        first, again = ex.blocks
        self.assertEqual((first.parts, first.groups), (2, (0, 0, 0, 0, 1, 1, 1, 1)))
        self.assertEqual([([v.label for v in sub.variants], part) for sub, part
                          in first.plans(p)],
                         [(["old", "new", "c1"], ((1, 0), (2, 0), (3, 0), (4, 0))),
                          (["old", "new", "c2"], ((5, 0), (6, 0), (7, 0), (8, 0)))])
        self.assertEqual(sorted(out.set_apart), [5, 6, 7, 8])
        self.assertEqual((again.parts, again.groups, again.rounds),
                         (1, (1, 1, 1, 1), ((9, 0), (10, 0), (11, 0), (12, 0))))
        self.assertEqual([v.label for v in again.plans(p)[0][0].variants], ["old", "new", "c2"])
        kept = {(m.variant, m.round) for m in judge.kept}
        self.assertEqual({r for v, r in kept if v == "c1"}, {1, 2, 3, 4})
        self.assertEqual({r for v, r in kept if v == "c2"}, {9, 10, 11, 12})
        self.assertEqual({r for v, r in kept if v == "old"}, {1, 2, 3, 4, 9, 10, 11, 12})
        self.assertEqual((out.spent.rounds, out.spent.lost), (12, 4))

    def test_the_plan_reads_back_as_it_was_written(self) -> None:
        p = dataclasses.replace(self.plan(), pin=pinning.Pin(
            (1, 3), "/b/kvbench", "CPUs 1,3 (test)", {1: 5.5, 3: 6.0}, True, "--cpu"),
            building=12.5, builds=2, fixed=True)
        self.assertEqual(plan.Plan.from_json(json.loads(json.dumps(p.to_json()))), p)
        self.assertNotIn("groups", p.to_json())   # matrix.json's plan as before
        p = dataclasses.replace(p, groups=(("a",), ("b",)))
        self.assertEqual(plan.Plan.from_json(json.loads(json.dumps(p.to_json()))), p)

    def test_the_slurm_configuration_file(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write("[slurm]\noptions = --account=perf --time=1:00:00  # every job\n"
                    "build_partition = build\narch.aarch64 = --partition=arm -C neoverse\n"
                    "hosts = 3\n")
            f.flush()
            c = slurm.load_config("measure", f.name)
            self.assertEqual((c.partition, c.build_partition, c.options, c.hosts),
                             ("measure", "build", ("--account=perf", "--time=1:00:00"), 3))
            self.assertEqual(c.arch_options("aarch64"), ("--partition=arm", "-C", "neoverse"))
            self.assertEqual(c.arch_options("x86_64"), ("--constraint=x86_64",))
            self.assertEqual(slurm.option(c.arch_options("aarch64"), "-C", "--constraint"),
                             "neoverse")
            f.write("colour = blue\n")
            f.flush()
            with self.assertRaisesRegex(UsageError, "unknown key colour"):
                slurm.load_config("measure", f.name)
        with self.assertRaisesRegex(UsageError, "a partition name"):
            slurm.load_config("--exclusive", None)


class PinTest(kvbtest.TempDirTest):
    TMP_PREFIX = "kvb-pin-test."

    def canary_script(self, ns: dict[int, float]) -> str:
        """A stand-in for `kvbench --canary [--cpu_affinity=N]`: ns[N] per loop."""
        path = os.path.join(self.tmp, "canary")
        cases = "".join(f'  *={cpu}) echo \'{{"cpu": {cpu}, "ns_per_loop": {v}}}\' ;;\n'
                        for cpu, v in ns.items())
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\ncase "$2" in\n{cases}  *) exit 1 ;;\nesac\n')
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def test_auto_takes_the_fastest_cpu_and_one_a_thread(self) -> None:
        cpus = pinning.allowed_cpus()
        if len(cpus) < 2:
            self.skipTest("one CPU allowed")
        ns = {c: 2.0 + 0.1 * i for i, c in enumerate(cpus)}
        ns[cpus[-1]] = 1.5
        script = self.canary_script(ns)
        pin = pinning.choose_pin("auto", 1, ["/nonexistent", script])
        self.assertEqual((pin.cpus, pin.canary), ((cpus[-1],), script))
        self.assertEqual(pin.flag(), [f"--cpu_affinity={cpus[-1]}"])
        self.assertIn(f"every run on CPU {cpus[-1]} (the fastest by the canary", pin.text)
        pin = pinning.choose_pin("auto", 2, [script], "1 worker and the writer")
        self.assertEqual(pin.cpus, (cpus[-1], cpus[0]))
        self.assertIn("one a CPU", pin.text)
        pin = pinning.choose_pin(str(cpus[0]), 2, [script], "2 workers")
        self.assertEqual(pin.cpus, (cpus[0],))
        self.assertIn("share it, taking turns", pin.text)
        pin = pinning.choose_pin("none", 1, [script])
        self.assertEqual((pin.cpus, pin.canary, pin.flag()), ((), "", []))
        pin = pinning.choose_pin("auto", 1, ["/nonexistent"])
        self.assertEqual(pin.cpus, (cpus[-1],))
        self.assertIn("no canary", pin.text)

    def test_threads_of_a_kv_plan(self) -> None:
        self.assertEqual(pinning.kv_threads("fillseq,readrandom", []), (1, False))
        self.assertEqual(pinning.kv_threads("fillseq,readwhilewriting", ["--threads=3"]),
                         (3, True))
        self.assertEqual(pinning.kv_threads("l.i0,qr100", ["--threads", "2"]), (2, True))


if __name__ == "__main__":
    unittest.main(verbosity=2)
