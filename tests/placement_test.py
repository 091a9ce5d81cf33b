#!/usr/bin/env python3
"""Placement as a random effect on generated data (run by ctest).

A generated build has K links, each with its own speed factor (the placement effect), and rounds
of log-normal noise within each. The tests check what a user relies on: a code move alone is not
confirmed, a rare slow link does not hide a real change, links are judged as link pairs paired by
round, the spread printed is the one generated, and the bisect's honest ranges and witness.
"""
from __future__ import annotations

import math
import os
import random
import sys
import types
import unittest
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))

from kvbtools.commands import series_report  # noqa: E402
from kvbtools.core import comparison as compare  # noqa: E402
from kvbtools.core import levels, metrics, stats, tdist  # noqa: E402
from kvbtools.core.samples import Side  # noqa: E402
from kvbtools.measure.bisect import judge  # noqa: E402
from kvbtools.commands import bisect as bisect_command  # noqa: E402
from kvbtools.core import placement  # noqa: E402
from kvbtools.measure.plan import Budget  # noqa: E402
from kvbtools.measure.bisect import confirm, steps  # noqa: E402
from kvbtools.measure.bisect import witness as bisect_witness  # noqa: E402
from kvbtools.measure.bisect.records import MEASURED, Confirm, Step  # noqa: E402
from kvbtools.measure.bisect.search import Search  # noqa: E402
from kvbtools.measure.bisect.state import (GenericMode, KvbenchMode, Settings,  # noqa: E402
                                           State)
from kvbtools.measure.runner import Workload  # noqa: E402


def lz4_state(mode: KvbenchMode | GenericMode | None = None) -> State:
    """A kvbench-mode bisect of lz4's compressor, as kvb bisect --micro would start it."""
    return State(Settings("/src/lz4", "a" * 40, "b" * 40, "faster",
                          stats.Judgement(0.05, 0.05), Budget(5, 20, None), 1, True, None),
                 mode or KvbenchMode("lz4", "x86-gcc-portable", "", Workload(micro=True),
                                     "lz4/compress/4096"))


def build(rng: random.Random, speed: float, spread: float, k: int, n: int,
          noise: float = 0.01) -> levels.Sample:
    """k links, each speed * (1 + U(-spread, spread)), n rounds each with noise."""
    values, links = [], []
    for s in range(k):
        f = speed * (1 + rng.uniform(-spread, spread))
        for _ in range(n):
            values.append(f * math.exp(rng.gauss(0, noise)))
            links.append(f"seed {s}")
    return levels.Sample.rounds(values, list(range(1, len(values) + 1)), links)


class TDistributionTest(unittest.TestCase):
    def test_known_quantiles_and_tails(self) -> None:
        for df, q in ((1, 12.7062), (4, 2.7764), (6, 2.4469), (30, 2.0423)):
            self.assertAlmostEqual(tdist.t_quantile(0.95, df), q, places=3)
            self.assertAlmostEqual(tdist.t_sf2(q, df), 0.05, places=4)
        self.assertAlmostEqual(tdist.t_sf2(0.0, 5), 1.0)


class PlacementSpreadTest(unittest.TestCase):
    def test_the_spread_printed_is_the_one_generated(self) -> None:
        rng = random.Random(11)
        samples = [build(rng, 1.0, 0.1, 8, 3) for _ in range(20)]
        x, k = placement.spread(samples)
        self.assertEqual(k, 8)
        self.assertAlmostEqual(x, 0.1 / math.sqrt(3), delta=0.015)  # U(-a, a): sd a/sqrt(3)
        self.assertRegex(placement.spread_text(samples),
                         r"^placement: \u00b1[56]\.\d% over 8 links$")
        self.assertIn("not sampled", placement.spread_text([levels.Sample.processes([1.0, 2.0])]))


def series(rng: random.Random, factors: list[float], n: int,
           noise: float = 0.01) -> levels.Sample:
    """A commit measured in a bisect series: round r (1..k*n) on link (r-1) % k, whose
    placement factor is factors[link], with round noise."""
    k = len(factors)
    rounds = list(range(1, k * n + 1))
    seeds = [(r - 1) % k for r in rounds]
    values = [factors[s] * math.exp(rng.gauss(0, noise)) for s in seeds]
    return levels.Sample.rounds(values, rounds, [f"seed {s}" for s in seeds])


class JudgementsTest(unittest.TestCase):
    def test_a_code_move_is_not_confirmed(self) -> None:
        # The parent has no placement effect; the blamed commit moves code: 1.5x on seed 0 and
        # +-20% on the others. Paired by round over link pairs, it is not confirmed.
        rng = random.Random(2)
        misses = 0
        for _ in range(50):
            parent = series(rng, [1.0] * 3, 4)
            blamed = series(rng, [1.5] + [1 + rng.uniform(-0.2, 0.2) for _ in range(2)], 4)
            new = series(rng, [1.25 * (1 + rng.uniform(-0.03, 0.03)) for _ in range(3)], 4)
            c = judge.confirm(parent, blamed, parent, new, sign=1, alpha=0.05, threshold=0.05,
                              same_sources=False)
            misses += c.confirmed
        self.assertLessEqual(misses, 3)

    def test_a_rare_slow_link_does_not_hide_a_real_change(self) -> None:
        # lz4's compressor: one link in eight of a build at 0.77 of the others. A 1.26x change
        # measured over 8 link pairs (3 rounds each) is established in most trials, where the
        # pooled t over placements of before spanned both sides.
        rng = random.Random(5)
        found = 0
        for _ in range(40):
            slow = rng.randrange(8)
            old = series(rng, [0.77 if s == slow else 1.0 for s in range(8)], 3, 0.03)
            new = series(rng, [1.26 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(8)], 3,
                         0.03)
            c = judge.check_change(old, new, sign=1, threshold=0.05)
            found += c.state == judge.ESTABLISHED
            self.assertEqual(c.unit, "8 link pairs, paired by round (3 rounds each)")
        self.assertGreaterEqual(found, 36)

    def test_one_link_judges_on_paired_rounds(self) -> None:
        old = levels.Sample.rounds([1.0, 1.01, 0.99, 1.0, 1.02], [1, 2, 3, 4, 5])
        new = levels.Sample.rounds([1.3, 1.31, 1.29, 1.3, 1.32], [1, 2, 3, 4, 5])
        c = judge.check_change(old, new, sign=1, threshold=0.05)
        self.assertEqual((c.state, c.unit), (judge.ESTABLISHED, "5 paired rounds"))
        self.assertEqual(judge.classify(old, new, old).verdict, judge.OLD)


class MatrixLayoutsTest(unittest.TestCase):
    """kvb matrix and versions with links: verdicts on link pairs paired by round, and the
    spread line per benchmark."""

    def sides(self, base: list[float], other: list[float], links: int) -> list[Side]:
        """Two sides measured in the same rounds, round r on seed (r - 1) % links."""
        out = []
        for label, values in (("a", base), ("b", other)):
            s = Side(label, kind="gbench")
            s.metrics = {"bytes_per_second": metrics.GBENCH["bytes_per_second"]}
            for r, v in enumerate(values, 1):
                s.at = levels.Where(f"{label} seed {(r - 1) % links}", f"{label}.r{r}", r)
                s.add("lz4/compress/4096", "bytes_per_second", v)
            s.paths.append(f"{label}.json")
            out.append(s)
        return out

    def test_a_placement_effect_is_no_verdict_with_links(self) -> None:
        # 4 links, 3 rounds each: the other build is 25% slower on two seeds of four, a
        # placement effect as large as lz4's compressor's here. Rounds as independent units call
        # it slower; link pairs do not.
        base = [1.0 + 0.005 * (i % 3) for i in range(12)]
        other = [(0.75 if i % 4 >= 2 else 1.0) + 0.005 * (i % 3) for i in range(12)]
        self.assertEqual(levels.judge(levels.Sample.processes(base),
                                      levels.Sample.processes(other),
                                      stats.Judgement(0.05, 0.05)).word, "slower")
        c = compare.build(self.sides(base, other, 4), stats.Judgement(0.05, 0.05))
        v = c.cells[0].verdict
        self.assertEqual(v.word, stats.UNDECIDED, v.note)
        self.assertEqual(v.unit, "4 link pairs, paired by round (3 rounds each)")
        self.assertGreater(v.interval.width, 0.05)
        line = series_report.placement_lines(c)[0]
        self.assertRegex(line, r"^lz4/compress/4096 bytes_per_second: placement: ±\d+\.\d% "
                               r"over 4 links$")


class HonestRangeTest(unittest.TestCase):
    def caveat(self, layouts: int, how_a: str, how_b: str) -> str:
        done = [Step(2, "a" * 40, "", "old", how_a), Step(3, "b" * 40, "", "new", how_b)]
        fake = types.SimpleNamespace(layouts=lambda: layouts,
                                     s=types.SimpleNamespace(old="0" * 40, new="f" * 40),
                                     recorded=lambda kind: [r for r in done
                                                            if isinstance(r, kind)],
                                     judged=lambda: done)
        return steps.placement_caveat(fake, "a" * 40, "b" * 40)  # type: ignore[arg-type]

    def test_one_link_verdicts_widen_the_range_they_bound(self) -> None:
        text = self.caveat(1, MEASURED, "same sources")
        self.assertIn("placement-sensitive: step 2 (aaaaaaaaaaaa like old)", text)
        self.assertIn("the first new commit is in 000000000000..bbbbbbbbbbbb", text)
        both = self.caveat(1, MEASURED, MEASURED)
        self.assertIn("in 000000000000..ffffffffffff", both)

    def test_verdicts_over_several_links_or_by_content_hash_leave_it(self) -> None:
        self.assertEqual(self.caveat(3, MEASURED, MEASURED), "")
        self.assertEqual(self.caveat(1, "same sources", "same sources"), "")


class WitnessTest(unittest.TestCase):
    def test_same_counts_are_a_placement_effect_and_a_real_change_is_not(self) -> None:
        # lz4's compression path per 4 KiB before and after 59273b71 (docs/placement.md).
        real = bisect_witness.Witness(60238 / 4096, 46501 / 4096, "x86-gcc-portable")
        self.assertFalse(real.same)
        self.assertAlmostEqual(real.ratio, 1.295, places=3)
        self.assertIn("1.295x fewer in this commit", real.text())
        moved = bisect_witness.Witness(14.706, 14.71, "x86-gcc-portable")
        self.assertTrue(moved.same)
        self.assertIn(": the same", moved.text())

    @staticmethod
    def search(counts: dict[str, float], judged: list[Step] | None = None) -> Any:
        """A search of lz4's compressor whose commits count as `counts` (old o*40, new n*40,
        parent p*40, blamed b*40: 16.37 and 12.85 instructions per byte at the ends), with the
        steps `judged` in its range."""
        table = {"o" * 40: 16.37, "n" * 40: 12.85, **counts}
        return types.SimpleNamespace(state=lz4_state(), say=lambda m: None,
                                     s=lz4_state().settings, old="o" * 40, new="n" * 40,
                                     refuted="", judged=lambda: judged or [],
                                     counts=lambda shas: [table[x] for x in shas],
                                     count_sign=lambda: -1)

    def check(self, fake: Any, reasons: list[str] | None = None) -> Confirm:
        real = bisect_witness.counter
        try:
            bisect_witness.counter = lambda mode: (  # type: ignore[assignment]
                lambda *a: 0.0, "instructions per byte")
            rec = Confirm("b" * 40, "p" * 40, False, list(reasons or []))
            confirm.check_counts(fake, rec, "p" * 40, "b" * 40)
            return rec
        finally:
            bisect_witness.counter = real  # type: ignore[assignment]

    def test_a_timed_change_with_the_same_instructions_is_a_placement_effect(self) -> None:
        for counts, effect in (((14.71, 14.70), True), ((16.37, 12.85), False)):
            rec = self.check(self.search({"p" * 40: counts[0], "b" * 40: counts[1]}))
            self.assertEqual(rec.placement_effect, effect)
            self.assertEqual(bool(rec.reasons), effect)
            self.assertIn("parent", rec.to_json()["instructions"]["text"])

    def test_same_counts_are_no_placement_effect_where_they_do_not_witness_the_change(
            self) -> None:
        # A commit time judged like new at 86% of old -> new counts as old does: the counts
        # are not a witness of this change (agreement.py), so the same counts of the culprit
        # and its parent decide nothing, and time's confirmation stands.
        timed = Step(1, "t" * 40, "", "new", MEASURED, series=types.SimpleNamespace(
            position=0.86, to_old=[1.35, 1.3, 1.4], change=[1.42, 1.38, 1.46]))
        fake = self.search({"p" * 40: 14.71, "b" * 40: 14.70, "t" * 40: 16.37}, [timed])
        rec = self.check(fake)
        self.assertFalse(rec.placement_effect)
        self.assertTrue(rec.confirmed)
        self.assertEqual(rec.witness_note, "instructions are not a witness of this change: "
                                           "tttttttttttt is at 86% by time and 0% by "
                                           "instructions")
        # Where the counts place it where time did, they do.
        fake = self.search({"p" * 40: 14.71, "b" * 40: 14.70, "t" * 40: 12.85}, [timed])
        self.assertTrue(self.check(fake).placement_effect)

    def test_counts_confirm_what_time_could_not_tell(self) -> None:
        # Time: not significant; the counts: 1.27x fewer instructions, looking for faster.
        rec = self.check(self.search({"p" * 40: 16.37, "b" * 40: 12.85}),
                         ["it does not differ significantly from its parent in that direction "
                          "(p=0.3, alpha 0.05)"])
        self.assertTrue(rec.confirmed)
        self.assertTrue(rec.witness_decided)
        self.assertEqual(rec.to_json()["decided_by"], "instructions")

    def test_a_verdict_by_compiled_sources_is_taken_from_the_same_witness_only(self) -> None:
        # A commit time judged like new lends its verdict to a commit that compiles the same
        # sources while time decides, never once the counts do; old's and new's lend to both.
        fake = types.SimpleNamespace(known={}, s=types.SimpleNamespace(skip_identical=True),
                                     by_counts=False)
        fake.witness = lambda: Search.witness(fake)  # type: ignore[arg-type]
        Search.know(fake, "fp-t", "new", "t" * 40, "time")  # type: ignore[arg-type]
        fake.known["fp-old"] = ("old", "o" * 40, "")
        same = lambda fp: Search.same_sources_as(fake, fp)  # type: ignore[arg-type]  # noqa
        self.assertEqual(same("fp-t"), ("new", "t" * 40, "time"))
        fake.by_counts = True
        self.assertIsNone(same("fp-t"))
        self.assertEqual(same("fp-old"), ("old", "o" * 40, ""))
        Search.know(fake, "fp-i", "old", "i" * 40, "instructions")  # type: ignore[arg-type]
        self.assertEqual(same("fp-i"), ("old", "i" * 40, "instructions"))

    def test_the_instructions_command_is_offered_for_micro_only(self) -> None:
        cmd = bisect_command.instructions_command(lz4_state())
        self.assertIn("--micro lz4/compress/4096 --find faster", cmd)
        self.assertIn("--instructions", cmd)
        generic = lz4_state(GenericMode("make", "./bench", None))
        self.assertEqual(bisect_command.instructions_command(generic), "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
