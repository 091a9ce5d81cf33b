"""Multisection (docs/compare.md, the steps): how many candidates a step measures, which commits
cut the range left into k + 1 parts, and what their verdicts leave of it.

The cost model. n commits may be the first new one; a step of k candidates builds them side by
side, s at a time (s: as many as fit the cores, Workspace.build_slots), then measures old, new
and the k in the same rounds. With B the seconds one candidate's build takes alone, W_s the
seconds one takes with s - 1 others beside it (B until such a build was timed: compile-bound
builds slow each other, a configure and a link hardly) and M the seconds of measuring and
relinking a step of one candidate takes (all as measured so far in this bisect), a search of k
candidates a step takes about S(k) = ln(n) / ln(k + 1) steps, each

    T(k) = ceil(k / s) * W_s + (k + 2) / 3 * M        (W_1 = B)

(the builds in waves of s; a round runs k + 2 commits where a step of one runs 3, and a step
stops when its last candidate is decided, which for a change in one commit is at its first
rounds). `--candidates auto` takes the k in 1 .. min(n - 1, MOST) with the least S(k) * T(k), the
smaller on a tie; `--candidates K` takes K (at most n - 1). Before a step has run, M is the
endpoints' (old and new: a round of two) times 3/2, and B the quicker of their builds.

On a cluster (--slurm) `--candidates auto` takes k = the measurement nodes of the plan's
architecture up (Fleet.hosts; at most n - 1): each candidate is measured with old and new on a
node of its own, in rounds of its own (multistep.py), so the nodes measure k candidates in the
time one measures a step of one, and the builds are jobs of the build partition, side by side
(Fleet.build_slots). One node up: git bisect's one commit a step, measured as every series is.

The range after a step: the candidates' verdicts in history order (by how many commits each
reaches); the first new commit lies after the newest candidate like old that comes before the
oldest candidate like new, and at or before that one. A candidate like old that comes after one
like new (the change undone, or noise) leaves the range as it is and is named. A candidate time
could not place (uncertain) ends the search there, as a step of one does, only when it lies in
the range left; elsewhere the verdicts around it have placed it.
"""
from __future__ import annotations

import math
import statistics
from typing import Callable

from kvbtools.measure.bisect import judge
from kvbtools.measure.bisect.records import Endpoints, MultiStep, Step
from kvbtools.measure.bisect.search import Search
from kvbtools.measure.bisect.trees import git

MOST = 8    # candidates a step at most, unless --candidates says: a round of 10 commits


def steps_needed(k: int, n: int) -> float:
    """S(k): steps a search of `n` commits takes at k candidates a step."""
    return max(1.0, math.log(max(n, 2)) / math.log(k + 1))


def step_cost(k: int, build: float, measure: float, slots: int,
              wave: float | None = None) -> float:
    """T(k): seconds one step of k candidates takes (the module doc); `wave`: the seconds a
    build took beside slots - 1 others, when measured (else `build`: side by side for free)."""
    w = wave if slots > 1 and wave is not None else build
    return math.ceil(k / max(1, slots)) * w + (k + 2) / 3 * measure


def choose(n: int, build: float, measure: float, slots: Callable[[int], int],
           most: int = MOST, waves: dict[int, float] | None = None) -> int:
    """The k with the least S(k) * T(k), 1 <= k <= min(n - 1, most); the smaller on a tie.
    `waves`: by how many ran at once, the seconds a build side by side took (measured_costs)."""
    top = max(1, min(n - 1, most))
    return min(range(1, top + 1), key=lambda k: (
        round(steps_needed(k, n) * step_cost(k, build, measure, slots(k),
                                             (waves or {}).get(slots(k))), 6), k))


def measured_costs(search: Search) -> tuple[float, float, dict[int, float]]:
    """(B, M, the build's seconds side by side by how many ran at once) as measured so far in
    this range (the module doc)."""
    judged = {s.commit for s in search.judged()}
    alone = [t for sha, t in search.build_seconds.items()
             if sha in judged and search.build_width.get(sha, 1) == 1]
    ends = [search.build_seconds[x] for x in (search.old, search.new)
            if x in search.build_seconds]
    build = statistics.median(alone) if alone else min(ends, default=0.0)
    beside: dict[int, list[float]] = {}
    for sha, t in search.build_seconds.items():
        if search.build_width.get(sha, 1) > 1:
            beside.setdefault(search.build_width[sha], []).append(t)
    waves = {w: statistics.median(ts) for w, ts in beside.items()}
    per_step = []
    for r in search.records:
        spent, variants = None, 3
        if isinstance(r, Step) and r.series is not None:
            spent = r.series.spent
        elif isinstance(r, MultiStep) and r.series is not None:
            spent, variants = r.series.spent, r.paced
        if spent is not None:
            per_step.append((spent.measuring + spent.relinking) * 3 / variants)
    ends_spent = [r.spent for r in search.recorded(Endpoints) if r.spent is not None]
    if not per_step and ends_spent:
        per_step = [(x.measuring + x.relinking) * 3 / 2 for x in ends_spent]
    return build, statistics.median(per_step) if per_step else 0.0, waves


def how_many(search: Search, n: int) -> tuple[int, str]:
    """k for the next step of `n` commits left, and how it was chosen (for the progress line
    and the report)."""
    asked = search.s.candidates
    if asked:
        k = max(1, min(asked, n - 1))
        return k, f"--candidates {asked}"
    if search.fleet is not None:
        nodes = search.fleet.hosts(search.node_arch())
        k = max(1, min(len(nodes), n - 1))
        return k, (f"k={k}: {len(nodes)} measurement node(s) of {search.fleet.config.partition} "
                   f"up ({', '.join(nodes)}), a candidate each")
    build, measure, waves = measured_costs(search)
    k = choose(n, build, measure, search.ws.build_slots, waves=waves)
    s = search.ws.build_slots(k)
    beside = f" (each {waves[s]:.3g} s when {s} ran at once)" if s > 1 and s in waves else ""
    return k, (f"k={k} by cost: a build {build:.3g} s, {s} side by side{beside}; a step of "
               f"one {measure:.3g} s measuring and relinking")


def cuts(search: Search, k: int) -> list[str]:
    """k commits that cut the range left into k + 1 parts of about equal size, oldest first:
    for each j in 1..k the commit (not new's reference, not skipped) whose count of commits of
    the range it reaches, itself included, is nearest j * n / (k + 1)."""
    out = git(search.s.repo, "rev-list", "--topo-order", "--reverse", "--parents",
              search.new_ref, "--not", *search.olds).stdout
    rows = [line.split() for line in out.splitlines() if line.strip()]
    index = {r[0]: i for i, r in enumerate(rows)}
    below: list[int] = []
    for i, r in enumerate(rows):   # parents come first (--reverse --topo-order)
        bits = 1 << i
        for p in r[1:]:
            if p in index:
                bits |= below[index[p]]
        below.append(bits)
    n = len(rows)
    reach = {r[0]: bin(below[i]).count("1") for i, r in enumerate(rows)}
    free = [c for c in reach if c != search.new_ref and c not in search.skipped]
    chosen: list[str] = []
    for j in range(1, k + 1):
        left = [c for c in free if c not in chosen]
        if not left:
            break
        chosen.append(min(left, key=lambda c: (abs(reach[c] - j * n / (k + 1)), reach[c])))
    return sorted(chosen, key=lambda c: reach[c])


def settle(search: Search, rec: MultiStep) -> tuple[Step | None, list[str]]:
    """Narrows the range by the step's verdicts (the module doc). Returns the uncertain
    candidate that lies in the range left (the search cannot go on past it by these verdicts),
    or None; and what it says of candidates like old after one like new."""
    repo = search.s.repo
    for s in rec.steps:
        if s.verdict == "skip":
            search.mark("skip", s.commit)
    news = [s.commit for s in rec.steps if s.verdict == judge.NEW]
    depth = {s.commit: int(git(repo, "rev-list", "--count", s.commit).stdout.strip() or 0)
             for s in rec.steps}
    first_new = min(news, key=lambda c: depth[c]) if news else ""
    said = []
    for s in rec.steps:
        if s.verdict != judge.OLD:
            continue
        if first_new and git(repo, "merge-base", "--is-ancestor", first_new, s.commit,
                             check=False).returncode == 0:
            said.append(f"step {rec.step}: {s.commit[:12]} like old comes after "
                        f"{first_new[:12]} like new: the range follows the oldest like new")
        else:
            search.mark(judge.OLD, s.commit)
    if first_new:
        search.mark(judge.NEW, first_new)
    left = set(search.candidates())
    stuck = [s for s in rec.steps if s.verdict == judge.UNCERTAIN and s.commit in left]
    return (stuck[0] if stuck else None), said
