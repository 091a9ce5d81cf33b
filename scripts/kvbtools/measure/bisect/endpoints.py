"""kvb bisect's first phase: old against new (docs/compare.md, the bisect's step 1).

old and new are built (traced, the first time, to learn what the build compiles: trees.learn) and
measured in one series until the interval of new/old lies beyond the threshold in the --find
direction (judge.check_change); a change in the other direction, or within the threshold, is
refused (Refused: exit 4); time that cannot decide within the budget hands over to the
instruction counts, where the commits can be counted.
"""
from __future__ import annotations

from kvbtools.core import levels
from kvbtools.core.errors import EXIT_UNDECIDED, RunError, UsageError
from kvbtools.core import placement
from kvbtools.measure.bisect import judge
from kvbtools.measure.bisect.records import INSTRUCTIONS, Endpoints, Measured, iv_text, ivjson
from kvbtools.measure.bisect.search import Ending, Refused, Search, rows
from kvbtools.measure.bisect.state import GenericMode
from kvbtools.measure.bisect.trees import learn, tracer
from kvbtools.measure.runner import BuildError


def endpoints(search: Search) -> Ending | None:
    """Measures old against new until the change is established; an Ending when it is not
    (or when nothing compiled differs)."""
    old, new = search.old, search.new
    done = search.recorded(Endpoints)
    rec = done[0] if done else measure_endpoints(search, old, new)
    search.by_counts = search.by_counts or rec.witness == INSTRUCTIONS
    for sha, label in ((old, "old"), (new, "new")):
        fp = rec.fingerprints.get(sha)
        if fp:
            search.known[fp] = (label, sha, "")   # old and new: either witness's
    return endpoint_ending(search, rec)


def measure_endpoints(search: Search, old: str, new: str) -> Endpoints:
    if search.sub:
        for sha in (old, new):
            search.built(sha)
    else:
        learn_compiled(search, old, new)
    fo, fn = search.fingerprint(old), search.fingerprint(new)
    if fo and fo == fn and search.s.skip_identical:
        raise Refused(f"old {old[:12]} and new {new[:12]} compile identical sources "
                      "(the files their builds read hash alike): no commit between "
                      "them changes the compiled code, so the difference does not "
                      "come from it. --no-skip-identical measures every commit anyway")
    if search.by_counts:
        return counted_endpoints(search, old, new, {old: fo, new: fn}, None)
    search.say(f"measuring old {old[:12]} and new {new[:12]} in interleaved rounds")
    threshold = search.s.judgement.threshold

    def check(m: Measured) -> judge.ChangeCheck:
        v = m.levels()
        return judge.check_change(v["old"], v["new"], sign=search.sign(), threshold=threshold,
                                  exact=search.exact)

    roles = {"old": old, "new": new}
    m, out = search.series(search.plan("endpoints", [old, new]), roles,
                           lambda m: check(m).state != judge.UNDECIDED,
                           lambda m: rows(m, [("old", "new")]))
    c = check(m)
    rec = Endpoints(old, new, c.state, out.spent.rounds, out.spent.stopped_by, m,
                    ivjson(c.interval), {old: fo, new: fn}, c.unit, out.spent)
    if c.state == judge.UNDECIDED and search.can_count():
        try:
            return counted_endpoints(search, old, new, {old: fo, new: fn}, rec)
        except (BuildError, RunError, UsageError) as e:
            search.say(f"counting the instructions of old and new failed: {e}")
    search.record(rec)
    return rec


def learn_compiled(search: Search, old: str, new: str) -> None:
    """Builds old and new, traced when that can work, and keeps the compiled set."""
    st = search.state
    why = tracer()
    trace = not why and st.compiled is None
    reads = []
    for label, sha in (("old", old), ("new", new)):
        if sha in search.ws.built:
            reads.append((set(), set()))
            continue
        search.say(f"building the {label} commit {sha[:12]}" + (" (traced)" if trace else ""))
        try:
            reads.append(search.build(sha, trace=trace))
        except BuildError as e:
            raise RunError(f"the {label} commit {sha[:12]} does not build: {e}") from None
    if trace:
        measure_cmd = st.mode.measure_cmd if isinstance(st.mode, GenericMode) else ""
        cset = learn(search.s.repo, [old, new], reads, measure_cmd)
        if cset.files:
            st.compiled = cset
        else:
            why = ("the traced builds of old and new read no file of the repository "
                   "(a build reused from a cache?)")
    if st.compiled is None:
        st.compiled_note = f"no commit is skipped for identical sources: {why}"
    elif not search.s.skip_identical:
        st.compiled_note = ("--no-skip-identical: every commit is measured, even when "
                            "it compiles the same sources as a judged one")
    search.save_state()


def counted_endpoints(search: Search, old: str, new: str, fps: dict[str, str],
                      timed: Endpoints | None) -> Endpoints:
    """The ends told apart by their instruction counts (time could not, or --witness
    instructions); then every step is counted."""
    co, cn = search.counts([old, new])
    c = judge.check_change(levels.Sample.processes([co]), levels.Sample.processes([cn]),
                           sign=search.count_sign(), threshold=search.s.judgement.threshold,
                           exact=True)
    base = timed or Endpoints(old, new, c.state, 0, "counted", Measured({}),
                              ivjson(c.interval), fps)
    rec = Endpoints(old, new, c.state, base.rounds, base.stopped_by, base.measured,
                    base.change, fps, base.unit, base.spent, INSTRUCTIONS,
                    {"old": co, "new": cn})
    search.by_counts = True
    search.record(rec)
    return rec


def endpoint_ending(search: Search, rec: Endpoints) -> Ending | None:
    if rec.state == judge.ESTABLISHED:
        return None
    j = search.state.judgement
    m = search.state.metric() if search.state.watched else None
    what = m.path if m else "the metric"
    if rec.witness == INSTRUCTIONS and rec.counts:
        c = rec.counts
        shown = (f"instructions new/old {c['new'] / c['old']:.3f}; time: new/old "
                 f"{iv_text(rec.change)}" if rec.measured.values else
                 f"instructions new/old {c['new'] / c['old']:.3f}")
        what, n = "instructions", rec.measured.n if rec.measured.values else 0
    else:
        shown = f"new/old {iv_text(rec.change)}"
        n = rec.measured.n
    find = search.s.find
    unit = f"; {rec.unit}" if rec.unit else ""
    if rec.state == judge.UNDECIDED:
        got = list(rec.measured.levels(True).values())
        noise = ("the code placement effect" if placement.spread(got)[0] > j.threshold
                 else "the noise")
        why = "; the instructions could not be counted" if search.s.witness != "time" \
            else ""
        return Ending(EXIT_UNDECIDED,
                      f"could not decide between old {rec.old[:12]} and new "
                      f"{rec.new[:12]}: the change is within {noise} at n={n} "
                      f"({shown}{unit}; {placement.spread_text(got)}){why}; nothing was "
                      "bisected")
    other = "faster" if find == "slower" else "slower"
    word = j.better_word if find == "slower" else j.worse_word
    if search.sub:
        return Ending(0, f"{rec.old[:12]}..{rec.new[:12]} holds no change of "
                         f"{j.threshold * 100:g}% or more {find} ({shown}{unit})")
    if rec.state == judge.OPPOSITE:
        raise Refused(f"old -> new is not {find} but {word} ({what}, {shown}, n={n}{unit}): "
                      f"to find that change, --find {other}")
    raise Refused(f"old -> new is not a change of {j.threshold * 100:g}% or more "
                  f"({what}, {shown}, n={n}{unit}): nothing to bisect")
