"""The environment audit of result files (docs/json.md, "The environment audit"), read by the
comparison and the report: facts that make two sides not comparable, runs flagged noisy, and
kvbench_micro runs whose wall time is far above their CPU time (a busy machine, hidden by
CPU-time rates). Whether a run was noisy is decided once, here (noisy_reason, side_reason): the
text tables and the pages (pages/noise.py) say the same."""
from __future__ import annotations

import statistics
from typing import Any

from kvbtools.core.samples import Side

# Facts that change what the code measures: two sides that differ in one are not comparable.
COMPARABLE = ("cpu_model", "kernel", "governor", "thp", "smt", "virtualization")
# kvbench_micro: wall time above CPU time by more than this factor says the machine was busy.
BUSY_RATIO = 1.25


def facts(ctx: dict[str, Any]) -> dict[str, str]:
    """The audit's facts of one file: kvbench's context.environment, kvbench_micro's flat
    environment.<fact> keys; a kvbench file from before the audit gives its cpu_model and
    kernel."""
    env = ctx.get("environment")
    if isinstance(env, dict):
        return {k: v for k, v in env.items() if isinstance(v, str)}
    out = {k[len("environment."):]: v for k, v in ctx.items()
           if k.startswith("environment.") and k.count(".") == 1 and isinstance(v, str)}
    if not out and isinstance(ctx.get("build"), dict):
        out = {k: ctx[k] for k in ("cpu_model", "kernel") if isinstance(ctx.get(k), str)}
    return out


def not_comparable(sides: list[Side]) -> list[str]:
    """One 'not comparable:' line per fact of COMPARABLE whose values differ between (or within)
    the sides; a fact a side does not record is not judged."""
    lines = []
    for fact in COMPARABLE:
        per_side = {s.label: sorted({facts(ctx)[fact] for ctx in s.contexts
                                     if fact in facts(ctx)}) for s in sides}
        if any(not v for v in per_side.values()):
            continue
        if len({v for vals in per_side.values() for v in vals}) > 1:
            shown = "; ".join(f"{label} {' / '.join(repr(v) for v in vals)}"
                              for label, vals in per_side.items())
            lines.append(f"not comparable: {fact} differs ({shown}): the sides ran on different "
                         "machines or set-ups, so their ratios mix the code with the host")
    return lines


def busy_ratio(side: Side) -> tuple[float, str]:
    """kvbench_micro: the largest median real_time / cpu_time over the side's benchmarks, and
    that benchmark; (0, '') when the side has no times."""
    worst, name = 0.0, ""
    for (bench, key), real in side.values.items():
        cpu = side.values.get((bench, "cpu_time"))
        if key != "real_time" or not cpu or statistics.median(cpu) <= 0:
            continue
        r = statistics.median(real) / statistics.median(cpu)
        if r > worst:
            worst, name = r, bench
    return worst, name


def noisy_reason(ctx: dict[str, Any]) -> str:
    """Why kvbench called the run of this context noisy (context.environment.noisy and
    noisy_reason: the hypervisor's steal above 2% or other processes above 10% of the CPUs while
    it ran); "" when it did not, or could not tell (a run that did not finish, a file from
    before the audit)."""
    env = ctx.get("environment")
    if not isinstance(env, dict) or env.get("noisy") is not True:
        return ""
    return str(env.get("noisy_reason") or "kvbench flagged it noisy and gave no reason")


def side_reason(side: Side) -> str:
    """Why a side is noisy ("2 of 5 run(s) noisy, e.g. ..."; a kvbench_micro side: wall time
    above CPU time), or ""."""
    if side.kind == "kvbench":
        reasons = [r for r in (noisy_reason(ctx) for ctx in side.contexts) if r]
        if not reasons:
            return ""
        return f"{len(reasons)} of {len(side.contexts)} run(s) noisy, e.g. {reasons[0]}"
    ratio, bench = busy_ratio(side)
    if ratio <= BUSY_RATIO:
        return ""
    return (f"wall time {ratio:.2f}x CPU time ({bench}): the machine was busy; the rates are per "
            "CPU second and hide it (kvbench_micro measures no steal or foreign CPU time)")


def run_warning(label: str, reason: str) -> str:
    """What a report says of one noisy run."""
    return (f"{label}: this run was noisy: {reason}. Its numbers may be low and spread more "
            "than usual; rerun it on a quiet machine before comparing it.")


def noisy_runs(runs: list[tuple[str, dict[str, Any]]], micro: list[Side]) -> list[str]:
    """A report's lines on noise, its page's and its text's: one per kvbench run (label,
    context) kvbench called noisy, one per kvbench_micro side whose wall time ran well above its
    CPU time."""
    out = [run_warning(label, why) for label, ctx in runs for why in [noisy_reason(ctx)] if why]
    return out + [f"{s.label} (kvbench_micro): {why}" for s in micro
                  for why in [side_reason(s)] if why]


def _load(ctx: dict[str, Any]) -> float | None:
    """The one-minute load average at the start of a kvbench_micro run (Google Benchmark's)."""
    v = ctx.get("load_avg")
    return float(v[0]) if isinstance(v, list) and v and isinstance(v[0], (int, float)) else None


def noise_notes(side: Side, reasons: bool = True) -> list[str]:
    """The 'noisy:' note of one side, and a WARNING when its wall time exceeds its CPU time;
    without `reasons`, the noisy runs counted and not why (a page says why once, at its top)."""
    lines = []
    if any("kvbench_instructions" in ctx for ctx in side.contexts):
        return [f"noisy: {side.label}: not judged: instruction counts (--instructions) do not "
                "depend on what else the machine does"]
    kv = [ctx for ctx in side.contexts if isinstance(ctx.get("environment"), dict)]
    if kv:
        noisy = [why for why in (noisy_reason(ctx) for ctx in kv) if why]
        measured = [ctx for ctx in kv if isinstance(ctx["environment"].get("during"), dict)
                    and ctx["environment"]["during"].get("measured")]
        if noisy:
            lines.append(f"noisy: {side.label}: {len(noisy)} of {len(kv)} run(s) noisy"
                         + (f", e.g. {noisy[0]}" if reasons else " (why: at the top)"))
        elif measured:
            lines.append(f"noisy: {side.label}: none of {len(measured)} run(s) (steal <= 2%, "
                         "other processes <= 10% of the CPUs)")
        else:
            lines.append(f"noisy: {side.label}: not measured (runs that did not finish)")
        return lines
    if any("kvbench_instructions" in ctx for ctx in side.contexts):
        lines.append(f"noisy: {side.label}: not judged: instruction counts (--instructions) do "
                     "not depend on what else the machine does")
    elif side.kind != "kvbench":
        lines += _micro_notes(side)
    else:
        lines.append(f"noisy: {side.label}: not recorded (files from before the environment "
                     "audit)")
    return lines


def _micro_notes(side: Side) -> list[str]:
    """kvbench_micro's 'noisy:' line: its verdict by wall time against CPU time (busy above
    BUSY_RATIO), then the figure (a ratio near 1.00 is said as "not busy", not as a bound "up
    to 1.00x" that read like a finding), and a WARNING when busy."""
    loads = [x for x in (_load(ctx) for ctx in side.contexts) if x is not None]
    ratio, bench = busy_ratio(side)
    if not ratio:
        verdict = "not judged: no benchmark has both wall and CPU time"
    elif ratio > BUSY_RATIO:
        verdict = (f"busy: wall time up to {ratio:.2f}x CPU time ({bench}), above "
                   f"{BUSY_RATIO:g}x")
    else:
        verdict = (f"not busy by wall time: at most {ratio:.2f}x CPU time (busy above "
                   f"{BUSY_RATIO:g}x)")
    text = (f"noisy: {side.label}: {verdict}; kvbench_micro measures no steal or foreign CPU "
            "time" + (f"; load average at the start up to {max(loads):.1f}" if loads else ""))
    if ratio <= BUSY_RATIO:
        return [text]
    return [text, f"WARNING: {side.label}: wall time {ratio:.2f}x CPU time ({bench}): the "
                  "machine was busy; the rates below are per CPU second and do not show it"]


def pinned_cpus(ctx: dict[str, Any]) -> str:
    """The CPUs a run was pinned to, as it records them ('' = not pinned): kvbench's
    context.workload.cpu_affinity, kvbench_micro's cpu_affinity ('none' = not pinned)."""
    work = ctx.get("workload")
    given = work.get("cpu_affinity") if isinstance(work, dict) else ctx.get("cpu_affinity")
    text = str(given or "")
    return "" if text in ("", "none") else text


def cpu_speed(ctx: dict[str, Any]) -> float | None:
    """kvbench's audit: the median ns per reference loop, at the start and the end of the run,
    of the CPUs the run was pinned to (all its allowed CPUs when it was not); None when the
    file has no audit of CPU speed."""
    env = ctx.get("environment")
    speed = env.get("cpu_speed") if isinstance(env, dict) else None
    cpus = speed.get("cpus") if isinstance(speed, dict) else None
    if not isinstance(cpus, list):
        return None
    pinned = {c.strip() for c in pinned_cpus(ctx).split(",")}
    vals = [float(c[k]) for c in cpus if isinstance(c, dict)
            and (pinned == {""} or str(c.get("cpu")) in pinned)
            for k in ("start_ns_per_loop", "end_ns_per_loop")
            if isinstance(c.get(k), (int, float)) and c[k] > 0]
    return statistics.median(vals) if vals else None


# The sides' CPUs ran at different speeds when their canaries differ by more than this (the
# audit's own threshold between CPUs of one run: docs/json.md).
SPEED_DIFFERS = 0.10


def cpu_notes(sides: list[Side]) -> list[str]:
    """WARNING lines when the sides ran pinned to different CPUs, or on CPUs whose speed, by
    kvbench's audit (its reference loop at the start and end of each run), differs: on a
    shared host one vCPU can run 1.5-2x slower than another for minutes (docs/compare.md)."""
    out = []
    pins = {s.label: sorted({pinned_cpus(ctx) for ctx in s.contexts}) for s in sides}
    if any(p != [""] for p in pins.values()) and len({tuple(p) for p in pins.values()}) > 1:
        shown = "; ".join(f"{label} {'/'.join(p or ['-']) if p != [''] else 'not pinned'}"
                          for label, p in pins.items())
        out.append(f"WARNING: the sides ran on different CPUs ({shown}): one vCPU of a shared "
                   "host can run 1.5-2x slower than another; pin both to one CPU (kvb matrix, "
                   "versions and bisect do)")
    speeds = {s.label: [x for x in (cpu_speed(ctx) for ctx in s.contexts) if x is not None]
              for s in sides}
    med = {k: statistics.median(v) for k, v in speeds.items() if v}
    if len(med) == len(sides) and len(med) > 1 and max(med.values()) > \
            min(med.values()) * (1 + SPEED_DIFFERS):
        shown = "; ".join(f"{k} {v:.3g}" for k, v in med.items())
        out.append(f"WARNING: the sides' CPUs ran at different speeds by kvbench's reference "
                   f"loop (ns per loop, median of each side's runs: {shown}): the machine, not "
                   "only the code, differs between them")
    return out


def notes(sides: list[Side], reasons: bool = True) -> list[str]:
    """Every line the comparison prints about the sides' environments (`reasons`: noise_notes)."""
    out = not_comparable(sides) + cpu_notes(sides)
    for s in sides:
        out.extend(noise_notes(s, reasons))
    return out
