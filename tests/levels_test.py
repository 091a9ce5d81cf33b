#!/usr/bin/env python3
"""The unit of a verdict (scripts/kvbtools/core/levels.py, docs/compare.md, docs/placement.md):
links > processes > repetitions, paired by round where the sides shared rounds, one family of
tests per comparison (Benjamini-Hochberg), Yuen's trimmed t robust to a rare slow link.

`levels_test.py --table` prints the power and false-positive table of docs/placement.md from the
same generator the tests use."""
from __future__ import annotations

import math
import os
import random
import statistics
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
from kvbtools.core import levels, stats  # noqa: E402

S = levels.Sample
J = stats.Judgement(0.05, 0.05)


def one_process(values: list[float]) -> levels.Sample:
    """Every value a repetition of one process."""
    return S(tuple(values), tuple(levels.Where("", "p0") for _ in values))


def noisy(rng: random.Random, centre: float, n: int, sd: float = 0.02) -> list[float]:
    return [centre * math.exp(rng.gauss(0, sd)) for _ in range(n)]


class UnitTest(unittest.TestCase):
    def test_one_process_a_side_is_undecided_unless_repetitions_are_independent(self) -> None:
        # The case (a): one process a side, 5 repetitions, B 1.5x A in each.
        rng = random.Random(1)
        a = noisy(rng, 100, 5, 0.01)
        b = [1.5 * x for x in a]
        v = levels.judge(one_process(a), one_process(b), J)
        self.assertEqual(v.word, stats.UNDECIDED)
        self.assertIn("one process a side", v.note)
        self.assertIn("--repetitions-independent", v.note)
        self.assertEqual(v.unit, "one process a side")
        v = levels.judge(one_process(a), one_process(b), J, repetitions_independent=True)
        self.assertEqual(v.word, "faster")
        self.assertIn("counted as independent", v.unit)

    def test_the_highest_level_with_two_units_a_side(self) -> None:
        rng = random.Random(2)
        # Two links a side, three processes each: links are the unit.
        base = S(tuple(noisy(rng, 100, 6)), tuple(levels.Where(f"a{i % 2}", f"p{i}")
                                                  for i in range(6)))
        other = S(tuple(noisy(rng, 100, 6)), tuple(levels.Where(f"b{i % 2}", f"p{i}")
                                                   for i in range(6)))
        e = levels.estimate(base, other)
        self.assertEqual((e.units.level, e.units.base, e.units.other), (levels.LINK, 2, 2))
        self.assertEqual(e.units.text(), "2 links a side (3 processes a link)")
        # One link a side but several processes: processes.
        e = levels.estimate(S.processes(noisy(rng, 100, 4)), S.processes(noisy(rng, 100, 3)))
        self.assertEqual((e.units.level, e.units.text()), (levels.PROCESS, "4+3 processes a side"))

    def test_rounds_pair_the_sides_and_cancel_what_a_round_shares(self) -> None:
        # A round effect of +-20% (the vCPU a neighbour slows) on both sides alike, 8% apart.
        rng = random.Random(3)
        moments = [math.exp(rng.gauss(0, 0.2)) for _ in range(12)]
        b = [100 * m * math.exp(rng.gauss(0, 0.005)) for m in moments]
        o = [108 * m * math.exp(rng.gauss(0, 0.005)) for m in moments]
        blocks = list(range(12))
        paired = levels.judge(S.rounds(b, blocks), S.rounds(o, blocks), J)
        self.assertEqual(paired.word, "faster")
        self.assertEqual(paired.unit, "12 paired rounds")
        self.assertTrue(1.07 < paired.interval.lo < paired.interval.hi < 1.09)
        unpaired = levels.judge(S.processes(b), S.processes(o), J)
        self.assertEqual(unpaired.word, stats.UNDECIDED)  # the moments swamp it

    def test_link_pairs_are_the_unit_when_rounds_rotate_links(self) -> None:
        rng = random.Random(4)
        blocks = list(range(16))
        links = [f"s{r % 8}" for r in blocks]
        place_a = {f"s{k}": math.exp(rng.gauss(0, 0.03)) for k in range(8)}
        place_b = {f"s{k}": math.exp(rng.gauss(0, 0.03)) for k in range(8)}
        b = [100 * place_a[lk] for lk in links]
        o = [100 * place_b[lk] for lk in links]
        e = levels.estimate(S.rounds(b, blocks, ["A" + x for x in links]),
                            S.rounds(o, blocks, ["B" + x for x in links]))
        self.assertEqual(e.units.level, levels.LINK)
        self.assertEqual(e.units.text(), "8 link pairs, paired by round (2 rounds each)")
        # Two builds' links: each pair joins two placements, trimmed 30%.
        self.assertEqual(e.test, "Yuen's trimmed t (30%)")
        self.assertEqual(levels.components(S.rounds(b, blocks, ["A" + x for x in links]),
                                           S.rounds(o, blocks, ["B" + x for x in links])).trim,
                         levels.TRIM_BUILDS)
        # One binary on both sides (the A/A control on its base's links): 20%.
        same = levels.estimate(S.rounds(b, blocks, ["A" + x for x in links]),
                               S.rounds(o, blocks, ["A" + x for x in links]))
        self.assertEqual(same.test, "Yuen's trimmed t (20%)")

    def test_exact_values_are_decided_at_one_value_a_side(self) -> None:
        # kvb versions --instructions --repeats 1: a 0.88x instruction count is a change.
        v = levels.judge(S.processes([1000.0]), S.processes([880.0]),
                         stats.Judgement(0.05, 0.05, False, "fewer", "more"), exact=True)
        self.assertEqual((v.word, v.unit), ("fewer", "exact values"))
        v = levels.judge(S.processes([1000.0]), S.processes([1001.0]), J, exact=True)
        self.assertEqual(v.word, stats.NO_CHANGE)

    def test_a_constant_count_is_decided_a_single_timed_value_is_not(self) -> None:
        v = levels.judge(one_process([5.0, 5.0]), one_process([7.0, 7.0]),
                         stats.Judgement(0.05, 0.05, False, "smaller", "larger"))
        self.assertEqual(v.word, "larger")
        v = levels.judge(S.processes([5.0]), S.processes([7.0]), J)
        self.assertEqual(v.word, stats.UNDECIDED)

    def test_zeros_are_compared_as_differences(self) -> None:
        v = levels.judge(S.processes([0.0, 0.0, 0.0, 0.0, 0.0]),
                         S.processes([0.0, 0.0, 0.0, 0.0, 0.0]), J)
        self.assertEqual(v.word, stats.NO_CHANGE)
        v = levels.judge(S.processes([0.0, 1.0, 0.0, 1.0, 0.0]),
                         S.processes([9.0, 10.0, 11.0, 9.0, 10.0]),
                         stats.Judgement(0.05, 0.05, False, "fewer", "more"))
        self.assertEqual(v.word, "more")


def fleet(rng: random.Random, ratios: dict[str, float], links: int = 4, rounds: int = 2,
          sd: float = 0.01) -> tuple[levels.Sample, levels.Sample]:
    """Base and other measured as kvb's Slurm executor measures them: every host (ratios: its
    name -> the ratio on it) runs both builds in rounds of its own (numbered on across hosts, as
    the loop numbers them), the round's link rotating; a round's moment (+-20%) is shared."""
    bv, ov, bw, ow = [], [], [], []
    r = 0
    for host, ratio in ratios.items():
        for i in range(links * rounds):
            r += 1
            moment = math.exp(rng.gauss(0, 0.2))
            link = i % links
            bv.append(100 * moment * math.exp(rng.gauss(0, sd)))
            ov.append(100 * ratio * moment * math.exp(rng.gauss(0, sd)))
            bw.append(levels.Where(f"a s{link}", f"{host}.a.r{r}", r, host))
            ow.append(levels.Where(f"b s{link}", f"{host}.b.r{r}", r, host))
    return S(tuple(bv), tuple(bw)), S(tuple(ov), tuple(ow))


class HostTest(unittest.TestCase):
    """Hosts as the top level (docs/placement.md, Hosts): three or more are the unit."""

    def test_three_hosts_are_the_unit_and_are_named(self) -> None:
        base, other = fleet(random.Random(11), {"node1": 1.10, "node2": 1.10, "node4": 1.10})
        e = levels.estimate(base, other)
        self.assertEqual((e.units.level, e.units.base, e.units.paired), (levels.HOST, 3, True))
        self.assertEqual(e.units.text(), "3 hosts (node1, node2, node4) x 4 link pairs, "
                                         "paired by round")
        v = levels.judge(base, other, J)
        self.assertEqual(v.word, "faster")
        self.assertTrue(1.08 < v.interval.lo < 1.10 < v.interval.hi < 1.12, v.interval)
        # One link a build: each host's unit is the median of its paired rounds.
        base, other = fleet(random.Random(12), {"a": 1.0, "b": 1.0, "c": 1.0}, links=1, rounds=6)
        e = levels.estimate(base, other)
        self.assertEqual(e.units.text(), "3 hosts (a, b, c) x 6 paired rounds")
        self.assertEqual(levels.judge(base, other, J).word, stats.NO_CHANGE)

    def test_a_ratio_that_differs_between_hosts_is_not_decided_by_one_hosts_rounds(self) -> None:
        # 1.00, 1.06 and 1.12 on three hosts, each measured precisely: each host alone is sure
        # of its own ratio, the three together are not sure of the builds' (the interval
        # carries the hosts' spread).
        ratios = {"node1": 1.00, "node2": 1.06, "node3": 1.12}
        base, other = fleet(random.Random(13), ratios, sd=0.002)
        v = levels.judge(base, other, J)
        self.assertEqual(v.word, stats.UNDECIDED, v)
        self.assertLess(v.interval.lo, 1.0)
        self.assertGreater(v.interval.hi, 1.12)
        one = fleet(random.Random(13), {"node3": 1.12}, sd=0.002)
        self.assertEqual(levels.judge(*one, J).word, "faster")

    def test_two_hosts_pool_their_link_pairs_and_say_so(self) -> None:
        base, other = fleet(random.Random(14), {"node1": 1.0, "node2": 1.0})
        e = levels.estimate(base, other)
        self.assertEqual((e.units.level, e.units.base), (levels.LINK, 8))
        self.assertEqual(e.units.text(), "8 link pairs, paired by round (2 rounds each), pooled "
                                         "over 2 hosts (node1, node2: too few to rest on, 3 "
                                         "needed)")
        self.assertEqual(levels.judge(base, other, J).word, stats.NO_CHANGE)
        base, other = fleet(random.Random(15), {"node3": 1.0}, links=1, rounds=8)
        self.assertEqual(levels.estimate(base, other).units.text(),
                         "8 paired rounds, on 1 host (node3)")

    def test_values_of_two_hosts_are_never_paired(self) -> None:
        # The base measured on one host and the other on another, in rounds of the same numbers:
        # no round pairs them (they shared no moment), so no host level and no paired unit.
        base, _ = fleet(random.Random(16), {"node1": 1.0}, links=1, rounds=8)
        _, other = fleet(random.Random(17), {"node2": 1.0}, links=1, rounds=8)
        e = levels.estimate(base, other)
        self.assertEqual((e.units.level, e.units.paired), (levels.PROCESS, False))
        self.assertEqual(e.units.text(), "8 processes a side")
        self.assertIsNone(levels.components(base, other))

    def test_many_hosts_are_named_in_part(self) -> None:
        hosts = {f"n{i}": 1.0 for i in range(1, 7)}
        e = levels.estimate(*fleet(random.Random(18), hosts, links=1, rounds=3))
        self.assertEqual(e.units.text(), "6 hosts (n1, n2, n3, n4 and 2 more) x 3 paired rounds")


class FamilyTest(unittest.TestCase):
    def test_benjamini_hochberg_against_hand_values(self) -> None:
        # m = 4: p_(k) * m / k = 0.04, 0.06, 0.0533, 0.8; step-up minima from the top.
        got = levels.benjamini_hochberg([0.01, 0.03, 0.04, 0.8])
        for g, want in zip(got, [0.04, 0.0533333, 0.0533333, 0.8]):
            self.assertAlmostEqual(g, want, places=6)
        self.assertEqual(levels.benjamini_hochberg([]), [])

    def rows(self, rng: random.Random, changed: list[float]) -> list[stats.Verdict]:
        out = []
        for ratio in changed:
            out.append(levels.judge(S.processes(noisy(rng, 100, 5)),
                                    S.processes(noisy(rng, 100 * ratio, 5)), J))
        return out

    def test_one_separated_row_of_twenty_is_not_a_change(self) -> None:
        # The case (b): five single-repetition files a side, twenty benchmarks, one
        # 1.3x apart (p = 0.008, the smallest 5+5 can give), nineteen equal.
        rng = random.Random(5)
        raw = self.rows(rng, [1.3] + [1.0] * 19)
        self.assertEqual(raw[0].word, "faster")
        self.assertAlmostEqual(raw[0].test.p, 2 / 252)  # type: ignore[union-attr]
        fam = levels.family(raw, 0.05)
        self.assertEqual(fam[0].word, stats.UNDECIDED)
        self.assertIn("Benjamini-Hochberg", fam[0].note)
        self.assertAlmostEqual(fam[0].p_adjusted, 20 * 2 / 252)  # type: ignore[arg-type]
        self.assertFalse(any(v.better is not None for v in fam))

    def test_twenty_rows_that_all_doubled_all_stay_changes(self) -> None:
        # Case (c): all twenty rows 2x: every one faster after the adjustment.
        rng = random.Random(6)
        fam = levels.family(self.rows(rng, [2.0] * 20), 0.05)
        self.assertEqual([v.word for v in fam], ["faster"] * 20)

    def test_rows_without_a_test_are_not_counted(self) -> None:
        undecided = levels.judge(one_process([1.0, 1.1]), one_process([2.0, 2.1]), J)
        rng = random.Random(7)
        fam = levels.family([undecided] + self.rows(rng, [1.5]), 0.05)
        self.assertIsNone(fam[0].p_adjusted)
        self.assertEqual(fam[1].word, "faster")


class YuenTest(unittest.TestCase):
    def test_reference_values(self) -> None:
        # n = 10, g = 2: trimmed mean of the middle six; winsorized SS with h = 6.
        d = [-0.5, 0.1, 0.2, 0.25, 0.3, 0.3, 0.35, 0.4, 0.45, 2.0]
        tm, lo, hi, p = levels.yuen(d, 0.95)
        self.assertAlmostEqual(tm, (0.2 + 0.25 + 0.3 + 0.3 + 0.35 + 0.4) / 6)
        w = [0.2, 0.2, 0.2, 0.25, 0.3, 0.3, 0.35, 0.4, 0.4, 0.4]
        wm = sum(w) / 10
        se = math.sqrt(sum((x - wm) ** 2 for x in w) / (6 * 5))
        q = 2.5705818366147395  # t(0.975, 5)
        self.assertAlmostEqual(lo, tm - q * se, places=6)
        self.assertAlmostEqual(hi, tm + q * se, places=6)
        self.assertLess(p, 0.01)

    def test_thirty_percent_keeps_two_degrees_of_freedom(self) -> None:
        # 4 values are not trimmed to 2 (one degree of freedom): the plain t on all 4.
        d = [0.1, 0.12, 0.09, 0.11]
        self.assertEqual(levels.yuen(d, 0.95, 0.3), levels.yuen(d, 0.95, 0.0))
        # 10 values at 30%: 3 trimmed from each end, the mean of the middle 4.
        d = [float(i) for i in range(10)]
        self.assertAlmostEqual(levels.yuen(d, 0.95, 0.3)[0], 4.5)
        self.assertNotEqual(levels.yuen(d + [100.0], 0.95, 0.3)[0], 100.0)

    def test_trimmed_efficiency_on_normal_data(self) -> None:
        # The asymptotic relative efficiency of trimmed means (e.g. Wilcox, 3.3): 0.94 at 10%.
        self.assertAlmostEqual(levels.trimmed_efficiency(0.1), 0.943, places=3)
        self.assertAlmostEqual(levels.trimmed_efficiency(0.2), 0.874, places=3)
        self.assertAlmostEqual(levels.trimmed_efficiency(0.3), 0.799, places=3)


# ---- power and false positives on generated data (docs/placement.md) ----------------------------

SLOW = 0.77      # lz4 compress/4096: one link in eight of one build ran at 0.77 of the others


def generated(rng: random.Random, k: int, ratio: float, *, slow_share: float,
              slow_other: float | None = None, slow: float = SLOW, rounds_per_link: int = 2,
              placement_sd: float = 0.015, round_sd: float = 0.03, moment_sd: float = 0.1
              ) -> tuple[S, S]:
    """Two builds measured in K * R interleaved rounds (round r on link r % K): each link's
    placement effect (a slow link with probability slow_share, in the other build slow_other),
    a moment effect shared by the round, and process noise."""
    def place(share: float) -> float:
        return (math.log(slow) if rng.random() < share else 0.0) + rng.gauss(0, placement_sd)
    other_share = slow_share if slow_other is None else slow_other
    pa, pb = [place(slow_share) for _ in range(k)], [place(other_share) for _ in range(k)]
    b, o, blocks, links = [], [], [], []
    for r in range(k * rounds_per_link):
        m = rng.gauss(0, moment_sd)
        b.append(100 * math.exp(m + pa[r % k] + rng.gauss(0, round_sd)))
        o.append(100 * ratio * math.exp(m + pb[r % k] + rng.gauss(0, round_sd)))
        blocks.append(r)
        links.append(f"s{r % k}")
    return (S.rounds(b, blocks, ["A" + x for x in links]),
            S.rounds(o, blocks, ["B" + x for x in links]))


def link_pair_diffs(base: S, other: S) -> list[float]:
    pairs: dict[str, list[float]] = {}
    for (v, w), (u, x) in zip(zip(base.values, base.where), zip(other.values, other.where)):
        pairs.setdefault(w.link, []).append(math.log(u / v))
    return [statistics.median(x) for x in pairs.values()]


def verdict(est: float, lo: float, hi: float, p: float) -> stats.Verdict:
    iv = stats.Interval(math.exp(est), math.exp(lo), math.exp(hi), 0)
    if p < 0.05 and abs(iv.estimate - 1) >= 0.05:
        return stats.Verdict(iv.estimate, True, "changed", None, "", iv)
    word = stats.NO_CHANGE if stats.within(iv, 0.05) else stats.UNDECIDED
    return stats.Verdict(iv.estimate, None, word, None, "", iv)


def t_on_link_medians(base: S, other: S) -> stats.Verdict:
    """The verdict before levels.py: a t interval on the per-link medians' log ratios (what
    kvb's placement.py did, without the pooling over other builds)."""
    from kvbtools.core import tdist
    d = link_pair_diffs(base, other)
    n = len(d)
    mean = sum(d) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)
    q = tdist.t_quantile(0.95, n - 1)
    p = tdist.t_sf2(mean / se, n - 1) if se else 0.0
    return verdict(mean, mean - q * se, mean + q * se, p)


def yuen20(base: S, other: S) -> stats.Verdict:
    """Yuen's t trimmed 20% over the same link pairs (what levels.py did for two builds before
    it trimmed 30%)."""
    return verdict(*levels.yuen(link_pair_diffs(base, other), 0.95, levels.TRIM))


def rates(k: int, ratio: float, slow_share: float, trials: int, seed: int,
          slow_other: float | None = None, slow: float = SLOW) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    out = {n: {"changed": 0.0, "no change": 0.0} for n in ("yuen", "yuen20", "t")}
    for _ in range(trials):
        base, other = generated(rng, k, ratio, slow_share=slow_share, slow_other=slow_other,
                                slow=slow)
        for name, v in (("yuen", levels.judge(base, other, J)), ("yuen20", yuen20(base, other)),
                        ("t", t_on_link_medians(base, other))):
            key = "changed" if v.better is not None or v.word == "changed" else v.word
            if key in out[name]:
                out[name][key] += 1 / trials
    return out


class PowerTest(unittest.TestCase):
    """Seeded, so deterministic: these rates are properties of the method, not of a machine.
    "yuen" is levels.judge (two builds' link pairs: 30% trimmed)."""

    def test_no_false_changes_with_slow_links(self) -> None:
        for k in (8, 16):
            r = rates(k, 1.0, 1 / 8, 150, seed=10 + k)
            self.assertLessEqual(r["yuen"]["changed"], 0.03, f"K={k}: {r}")
        r = rates(28, 1.0, 1 / 4, 150, seed=17)
        self.assertLessEqual(r["yuen"]["changed"], 0.03, r)

    def test_a_slow_link_in_eight_hides_a_ten_percent_change_less_from_yuen(self) -> None:
        r = rates(16, 1.10, 1 / 8, 150, seed=21)
        self.assertGreaterEqual(r["yuen"]["changed"], 0.8, r)
        self.assertGreater(r["yuen"]["changed"], r["t"]["changed"] + 0.05, r)

    def test_without_slow_links_yuen_loses_little(self) -> None:
        r = rates(8, 1.10, 0.0, 150, seed=22)
        self.assertGreaterEqual(r["yuen"]["changed"], 0.95, r)
        r = rates(16, 1.0, 0.0, 150, seed=23)
        self.assertGreaterEqual(r["yuen"]["no change"], 0.9, r)

    def test_one_slow_link_in_four_more_links_find_the_change(self) -> None:
        # lz4 compress/4096 gcc vs clang: one slow link in five of one build, one in four of the
        # other, both at about 0.72. Trimmed 20%, the interval winsorizes at the edge of the slow
        # group: going from 16 to 28 links does not find a 1.08x change more often. Trimmed 30%,
        # it does.
        r16 = rates(16, 1.08, 1 / 5, 150, seed=40, slow_other=1 / 4, slow=0.72)
        r28 = rates(28, 1.08, 1 / 5, 150, seed=52, slow_other=1 / 4, slow=0.72)
        self.assertGreaterEqual(r28["yuen"]["changed"], 0.8, r28)
        self.assertGreater(r28["yuen"]["changed"], r16["yuen"]["changed"] + 0.1, (r16, r28))
        self.assertGreater(r28["yuen"]["changed"], r28["yuen20"]["changed"] + 0.2, r28)
        self.assertLess(r28["yuen20"]["changed"], r16["yuen20"]["changed"] + 0.05, (r16, r28))


def table() -> None:
    print("| links | slow links | ratio | Yuen 30%: changed | no change | Yuen 20%: changed "
          "| no change | t: changed | no change |")
    print("|---|---|---|---|---|---|---|---|---|")
    for slow, other, name in ((0.0, None, "none"), (1 / 8, None, "1 in 8"),
                              (1 / 5, 1 / 4, "1 in 5, 1 in 4")):
        for ratio in (1.0, 1.1, 1.3):
            for k in (4, 8, 16, 28, 56):
                r = rates(k, ratio, slow, 400, seed=100 + k, slow_other=other)
                print(f"| {k} | {name} | {ratio:.2f} | "
                      + " | ".join(f"{r[m]['changed']:.0%} | {r[m]['no change']:.0%}"
                                   for m in ("yuen", "yuen20", "t")) + " |")


if __name__ == "__main__":
    if "--table" in sys.argv:
        table()
    else:
        unittest.main()
