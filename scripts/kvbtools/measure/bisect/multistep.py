"""A step of several candidates (multisection: docs/compare.md, the steps; sections.py chooses
them): the k commits that cut the range are built side by side while they fit the cores
(trees.build_many), then measured with old and new in the same rounds, one plan of k + 2
variants run by the one loop (role c1 ... ck), and each is judged against old and new as a step
of one is (judge.classify); the series stops when every candidate is decided or its budget
(as long as building the candidates took, FLOOR at least) is spent. A candidate that compiles
a judged commit's sources, or another candidate's, takes that verdict without a run; one that
does not build or run is skipped (a failed run measures the others again without it). Those
time could not decide go to the counts where they witness the change (agreement.py).

On a cluster (--slurm, measure/fleet.py) the candidates' builds are build jobs side by side, as
many as the build partition holds, and the plan is in groups (Plan.groups): each candidate is
measured with old and new on a measurement node of its own, in rounds of its own, so its
verdict rests on its node's paired rounds alone (Measured.view: the rounds that measured it);
a node lost mid-step loses its job, whose rounds are set apart and run again, in that
candidate's group, on whichever node Slurm gives. The record names each candidate's node(s).
"""
from __future__ import annotations

import dataclasses
import math
import os
import time

from kvbtools.measure.bisect import agreement, judge
from kvbtools.measure.bisect.records import (MEASURED, SAME_SOURCES, TIME, Measured, MultiStep,
                                             Step, StepSeries, ivjson)
from kvbtools.measure.bisect.search import Search, rows
from kvbtools.measure.bisect.series import CommitCannotRun


def step(search: Search, n: int, shas: list[str]) -> MultiStep:
    """Step n over the candidates `shas` (oldest first)."""
    done: dict[str, Step] = {}
    like: dict[str, str] = {}         # candidate -> the earlier candidate it compiles like
    first: dict[str, str] = {}        # fingerprint -> the first candidate that compiles it
    todo: list[str] = []
    fps = {sha: search.fingerprint(sha) for sha in shas}
    for sha in shas:
        fp = fps[sha]
        same = search.same_sources_as(fp)
        if same:
            done[sha] = Step(n, sha, fp, same[0], SAME_SOURCES, same_as=same[1],
                             witness=same[2] or TIME)
        elif fp and fp in first and search.s.skip_identical:
            like[sha] = first[fp]
        else:
            first.setdefault(fp, sha)
            todo.append(sha)
    series, roles, nodes = None, {}, {}
    if search.by_counts:
        agreement.count_all(search, todo)
        done |= {sha: agreement.counted_step(search, n, sha, fps[sha], None) for sha in todo}
    else:
        for sha, e in search.build_many(todo).items():
            search.know(fps[sha], "skip", sha, "")
            done[sha] = Step(n, sha, fps[sha], "skip", "does not build",
                             why=str(e).replace(search.dir + os.sep, ""))
        series, roles, judged, nodes = measure(search, n, [x for x in todo if x not in done],
                                               fps, done)
        done |= judged
    for sha, to in like.items():
        src = done[to]
        done[sha] = Step(n, sha, fps[sha], src.verdict, SAME_SOURCES, same_as=to,
                         witness=src.witness)
    return MultiStep(n, [done[x] for x in shas], [roles.get(x, "") for x in shas], series,
                     nodes=nodes)


def measure(search: Search, n: int, shas: list[str], fps: dict[str, str],
            done: dict[str, Step]) -> tuple[StepSeries | None, dict[str, str], dict[str, Step],
                                            dict[str, list[str]]]:
    """The built candidates measured with old and new (a failed run skips its commit and
    measures the others again); the shared series, each measured candidate's role, the
    candidates judged (those time could not decide by the counts, where they witness it), and
    on a cluster each role's nodes."""
    old, new = search.old, search.new
    search.built(old)
    search.built(new)
    while shas:
        roles = {sha: f"c{i}" for i, sha in enumerate(shas, 1)}
        try:
            m, series, nodes = _series(search, n, shas, roles)
        except CommitCannotRun as e:
            done[e.sha] = Step(n, e.sha, fps[e.sha], "skip", "does not run", why=str(e))
            shas = [x for x in shas if x != e.sha]
            continue
        judged = {sha: _judged(search, n, sha, fps[sha], m, roles[sha], series)
                  for sha in shas}
        timed = [s for s in judged.values() if s.verdict in (judge.OLD, judge.NEW)]
        for s in timed:
            search.know(s.fingerprint, s.verdict, s.commit, TIME)
        unsure = [s for s in judged.values() if s.verdict == judge.UNCERTAIN]
        judged |= {s.commit: s for s in agreement.by_counts(search, n, unsure, timed)}
        return series, roles, judged, nodes
    return None, {}, {}, {}


def _call(m: Measured, role: str, final: bool, exact: bool) -> judge.StepCall:
    """The candidate of `role` judged on the rounds that measured it (Measured.view)."""
    v = m.view({"old": "old", "new": "new", "this": role}).levels()
    return judge.classify(v["old"], v["new"], v["this"], final=final, exact=exact)


def _series(search: Search, n: int, shas: list[str], roles: dict[str, str]
            ) -> tuple[Measured, StepSeries, dict[str, list[str]]]:
    """One series of old, new and the candidates (role c1 ... ck): until each is decided; on a
    cluster a group a candidate (the module doc), and the node(s) of each one's kept rounds."""
    old, new = search.old, search.new
    by_role = {"old": old, "new": new} | {roles[s]: s for s in shas}
    t = time.monotonic()
    plan = search.plan(f"step {n}", [old, new, *shas], paid=shas)
    if search.fleet is not None:
        ends = tuple(v.label for v in plan.variants[:2])
        plan = dataclasses.replace(plan, groups=tuple((*ends, v.label)
                                                      for v in plan.variants[2:]))
    m, out = search.series(
        plan, by_role,
        lambda m: all(_call(m, roles[s], False, search.exact).settled for s in shas),
        lambda m: rows(m, [(a, roles[s]) for s in shas for a in ("old", "new")]),
        under_test=shas)
    first = _call(m, roles[shas[0]], True, search.exact)
    kept = [x for x in out.measurements if x.round not in out.set_apart and x.host]
    nodes = {roles[s]: sorted({x.host for x in kept if x.build == s}) for s in shas} \
        if search.fleet is not None else {}
    return m, StepSeries(out.spent.rounds, out.spent.stopped_by, False,
                         round(time.monotonic() - t, 3), m, None, None, ivjson(first.change),
                         math.nan, first.unit, "", out.spent), nodes


def _judged(search: Search, n: int, sha: str, fp: str, m: Measured, role: str,
            shared: StepSeries) -> Step:
    """A candidate judged on the shared series: its view (old, new and it as `this`)."""
    c = _call(m, role, True, search.exact)
    view = m.view({"old": "old", "new": "new", "this": role})
    st = StepSeries(shared.rounds, shared.stopped_by, c.narrow, shared.seconds, view,
                    ivjson(c.to_old), ivjson(c.to_new), ivjson(c.change), c.position, c.unit,
                    c.rule)
    return Step(n, sha, fp, c.verdict, MEASURED, series=st)
