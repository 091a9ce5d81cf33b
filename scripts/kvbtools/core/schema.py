"""What a kvbench run document (docs/json.md, version 1) and Google Benchmark JSON must hold.

`check_kvbench(doc, full=False)` checks every field a kvb command reads: the results, their roles
and the numbers in them, the engine, and the metrics the document describes (metrics.py). With
full=True (`kvb validate`) it checks the whole documented schema: the context blocks too, and a
naming rule: a number's key names its unit (`_ns`, `_bytes`, `_seconds`, `_per_sec`,
`_us_per_op`, `_kb_per_op`, `_per_op`, ...) unless it is a plain count or ratio listed in
DIMENSIONLESS. Both list every problem, each as "$.json.path: message". NaN and Infinity (which
JSON does not have, but Python reads) are a problem wherever they stand.
"""
from __future__ import annotations

import json
import math
from typing import Any

from kvbtools.core import metrics, profiles

UNIT_SUFFIXES = ("_ns", "_us", "_bytes", "_seconds", "_per_sec", "_us_per_op", "_kb_per_op",
                 "_per_op", "_mib", "_ns_per_loop")
# Numbers that are counts or ratios: no unit to name.
DIMENSIONLESS = {
    "schema_version", "cpu_cores", "num", "reads", "writes", "key_size", "value_size",
    "compression_ratio", "seed", "threads", "seek_nexts", "latency_sample", "repeat", "repeats", "ops", "found",
    "not_found", "entries", "count", "min", "max", "mean", "median", "stddev", "cv",
    "ci95_low", "ci95_high", "p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99",
    "below_half_median", "write_amplification", "stall_slowdowns", "stall_stops",
    "cache_eviction_count", "pages_in_use", "depth", "branch_pages", "leaf_pages", "overflow_pages",
    "entries_in_tree", "eviction_clean", "eviction_dirty",
    "buckets", "sub_buckets",  # latency_ns.hdr_layout: the histogram's shape
    # context.environment.during (docs/json.md): shares of the CPU capacity, load averages
    "steal_share", "foreign_share", "noisy_steal_share_threshold", "noisy_foreign_share_threshold",
    "load_average_start", "load_average_end",
    "ipc", "counted_fraction",
    "samples", "lost_samples",  # results[].profile (docs/profile.md)
    "delivered_share", "slowest_window_share", "windows",  # roles[].pacing (docs/metrics.md)
    # context.environment.cpu_speed (docs/json.md): CPU numbers, loop counts, ratios, shares
    "cpu", "loops_per_window", "differs_threshold", "end_over_start",
    "slowest_over_fastest_start", "slowest_over_fastest_end",
    "low_share_threshold", "start_cpu_share", "end_cpu_share",
    "wall_slowest_over_fastest_start", "wall_slowest_over_fastest_end",
    # callgrind's counts (kvb --instructions: measure/callgrind.py), totals over a benchmark run
    "instructions", "background_instructions", "background_threads",
    "interrupted_bursts",  # context.crc32c: the calibration's discarded bursts (docs/micro.md)
}
# Objects whose numbers carry their unit in the parent key (latency_ns.p99, ops_per_sec.mean) or
# are engine-specific (engine_metrics: checked for numbers only).
UNIT_FROM_PARENT = {"latency_ns", "ops_per_sec"}

NUM = (int, float)
REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "": {"schema": str, "schema_version": int, "complete": bool, "context": dict,
         "results": list, "summaries": list},
    "context": {"date_utc": str, "hostname": str, "kernel": str, "cpu_model": str,
                "cpu_cores": int, "memory_bytes": int, "clock": str, "command_line": str,
                "build": dict, "libraries": list, "warnings": list, "engine": dict,
                "workload": dict},
    "build": {"kvbench_version": str, "git_revision": str, "preset": str, "build_type": str,
              "compiler_id": str, "compiler_version": str, "cxx_flags": str, "arch_flags": str,
              "target_arch": str, "assertions": bool},
    "library": {"name": str, "version": str, "path": str, "compiler": str, "assertions": bool,
                "debug_info": bool, "origin": str, "linked_file": str, "package": str,
                "prefix": str, "source_dir": str, "build_compiler": str, "build_flags": str,
                "notes": str},
    "engine": {"name": str, "version": str, "reference": bool, "config": dict},
    # Optional in files written before the audit existed; checked whenever it is there.
    "environment": {"cpu_model": str, "microcode": str, "governor": str, "boost": str,
                    "smt": str, "thp": str, "kernel": str, "virtualization": str,
                    "memory_available_bytes": str, "load_average_start": str, "unknown": dict,
                    "warnings": list, "during": dict, "noisy": bool, "noisy_reason": str},
    "during": {"measured": bool},
    "workload": {"num": int, "reads": int, "writes": int, "key_size": int, "value_size": int,
                 "threads": int, "seed": int, "duration_seconds": NUM,
                 "op_counts": str, "db": str, "compression": str, "cache_size_bytes": int},
    "result": {"benchmark": str, "repeat": int, "repeats": int, "counts": str,
               "seconds": NUM, "db_size_bytes": int, "rss_bytes": int,
               "peak_rss_bytes": int, "cpu_seconds": NUM, "engine_metrics": dict,
               "roles": list},
    "role": {"role": str, "threads": int, "background": bool, "ops": int, "bytes": int,
             "seconds": NUM, "ops_per_sec": NUM, "mb_per_sec": NUM,
             "found": int, "not_found": int, "entries": int, "latency_ns": dict, "cost": dict,
             "intervals": dict},
    "latency_ns": {k: NUM for k in
                   ("count", "mean", "min", "p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99",
                    "max")},
    "cost": {"cpu_user_us_per_op": NUM, "cpu_sys_us_per_op": NUM,
             "thread_cpu_us_per_op": NUM,
             "voluntary_cs_per_op": NUM, "involuntary_cs_per_op": NUM},
    "intervals": {"count": int, "median_ops_per_sec": NUM,
                  "p95_exceeded_ops_per_sec": NUM,
                  "p99_exceeded_ops_per_sec": NUM, "min_ops_per_sec": NUM,
                  "below_half_median": int, "series": list},
    "interval": {"end_seconds": NUM, "seconds": NUM, "ops": int, "bytes": int},
    "pacing": {"target_bytes_per_sec": NUM, "achieved_bytes_per_sec": NUM,
               "p99_exceeded_bytes_per_sec": NUM, "sustained": bool},
    # Present unless --perf_counters=off; the per-op counts are metrics (each optional: what was
    # not counted is absent, and "unavailable"/"software_unavailable" say why).
    "counters": {"multiplexed": bool, "counted_fraction": NUM},
    "summary": {"benchmark": str, "role": str, "repeats": int, "ops_per_sec": dict},
    "metric": {"path": str, "unit": str, "better": str},
}

_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          dict: "an object", list: "an array", type(None): "null"}


def describe(v: Any) -> str:
    """A JSON value as a problem message names it: a string ('fast'), null, an object."""
    if isinstance(v, str):
        return f"a string ({v[:40]!r})"
    if isinstance(v, float) and not math.isfinite(v):
        return json.dumps(v)  # NaN, Infinity, -Infinity: as the file spells it
    return _NAMES.get(type(v), type(v).__name__)


def _wrong(v: Any, typ: type | tuple[type, ...]) -> str:
    """'' when v has type typ (a boolean is not a number), else what is wrong."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(v, bool) and bool not in types:
        return f"expected {_NAMES.get(types[0], 'a number')}, got true or false"
    if not isinstance(v, types):
        wanted = "a number" if types == NUM else _NAMES.get(types[0], types[0].__name__)
        return f"expected {wanted}, got {describe(v)}"
    return ""


def _check(obj: Any, kind: str, where: str, problems: list[str]) -> bool:
    """The fields of one object of a kind; False when it is not even an object."""
    if not isinstance(obj, dict):
        problems.append(f"{where}: expected an object, got {describe(obj)}")
        return False
    for key, typ in REQUIRED[kind].items():
        if key not in obj:
            problems.append(f"{where}.{key}: missing")
        else:
            wrong = _wrong(obj[key], typ)
            if wrong:
                problems.append(f"{where}.{key}: {wrong}")
    return True


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    v = obj.get(key)
    return v if isinstance(v, list) else []


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    v = obj.get(key)
    return v if isinstance(v, dict) else {}


def _finite(obj: Any, where: str, problems: list[str]) -> None:
    """Every NaN or Infinity in a parsed document, by its path. json's encoder finds whether
    there is one at C speed (a 2.5 MB run document: the walk below built 218,000 paths); the
    walk runs only when there is."""
    try:
        json.dumps(obj, allow_nan=False)
        return
    except (ValueError, TypeError):
        _nonfinite(obj, where, problems)


def _nonfinite(obj: Any, where: str, problems: list[str]) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        problems.append(f"{where}: {json.dumps(obj)} is not a number (JSON has no NaN or "
                        "Infinity)")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _nonfinite(v, f"{where}.{k}", problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _nonfinite(v, f"{where}[{i}]", problems)


def _units(obj: Any, where: str, parent: str, problems: list[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                named = (k.endswith(UNIT_SUFFIXES) or k in DIMENSIONLESS
                         or k in ("bytes", "seconds"))  # a bare unit names itself
                if not named and parent not in UNIT_FROM_PARENT and parent != "engine_metrics":
                    problems.append(f"{where}.{k}: a number whose name gives no unit")
            _units(v, f"{where}.{k}", k, problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _units(v, f"{where}[{i}]", parent, problems)


def _context(ctx: dict[str, Any], full: bool, problems: list[str]) -> None:
    if not full:
        _check(ctx.get("engine"), "engine", "$.context.engine", problems)
        return
    _check(ctx, "context", "$.context", problems)
    for name in ("build", "engine", "workload", "environment"):
        if isinstance(ctx.get(name), dict):
            _check(ctx[name], name, f"$.context.{name}", problems)
    during = _dict(_dict(ctx, "environment"), "during")
    if during:
        _check(during, "during", "$.context.environment.during", problems)
    for i, lib in enumerate(_list(ctx, "libraries")):
        _check(lib, "library", f"$.context.libraries[{i}]", problems)
        if isinstance(lib, dict) and lib.get("origin") not in (None, "system", "prefix", "source"):
            problems.append(f"$.context.libraries[{i}].origin: {lib.get('origin')!r} is not "
                            "system, prefix or source")


def _role(role: Any, where: str, problems: list[str]) -> None:
    if not _check(role, "role", where, problems):
        return
    for part in ("latency_ns", "cost", "intervals"):
        if isinstance(role.get(part), dict):
            _check(role[part], part, f"{where}.{part}", problems)
    for k, iv in enumerate(_list(_dict(role, "intervals"), "series")):
        _check(iv, "interval", f"{where}.intervals.series[{k}]", problems)
    if role.get("background"):
        _check(role.get("pacing"), "pacing", f"{where}.pacing", problems)
    if "counters" in role:
        _check(role["counters"], "counters", f"{where}.counters", problems)
        for key in ("unavailable", "software_unavailable"):
            if key in _dict(role, "counters") and not isinstance(role["counters"][key], str):
                problems.append(f"{where}.counters.{key}: expected a string, got "
                                f"{describe(role['counters'][key])}")
    lat = role.get("latency_ns")
    if isinstance(lat, dict) and "buckets" in lat:
        _buckets(lat, f"{where}.latency_ns", problems)


def _buckets(lat: dict[str, Any], where: str, problems: list[str]) -> None:
    """latency_ns.buckets: [low_ns, high_ns, count] per non-empty bucket, ascending, counting
    every operation; hdr_layout beside it."""
    buckets = lat["buckets"]
    if not isinstance(buckets, list):
        problems.append(f"{where}.buckets: expected an array, got {describe(buckets)}")
        return
    total, last = 0, -1
    for i, b in enumerate(buckets):
        if (not isinstance(b, list) or len(b) != 3
                or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in b)):
            problems.append(f"{where}.buckets[{i}]: expected [low_ns, high_ns, count], "
                            "integers")
            return
        low, high, count = b
        if low <= last or high < low or count == 0:
            problems.append(f"{where}.buckets[{i}]: buckets must be non-empty, ascending and "
                            "apart")
            return
        last, total = high, total + count
    if isinstance(lat.get("count"), int) and total != lat["count"]:
        problems.append(f"{where}.buckets: they count {total} operations, latency_ns.count "
                        f"says {lat['count']}")
    layout = lat.get("hdr_layout")
    if not isinstance(layout, dict) or not all(isinstance(layout.get(k), int)
                                               for k in ("buckets", "sub_buckets")):
        problems.append(f"{where}.hdr_layout: expected {{\"buckets\": N, \"sub_buckets\": N}}")


def _described_metrics(doc: dict[str, Any], problems: list[str]) -> dict[str, metrics.Metric]:
    """The document's "metrics" array, each entry checked; the well-formed ones by path."""
    if "metrics" not in doc:
        return metrics.of_kvbench(doc)
    if not isinstance(doc["metrics"], list):
        problems.append(f"$.metrics: expected an array, got {describe(doc['metrics'])}")
        return {}
    good = []
    for i, m in enumerate(doc["metrics"]):
        n = len(problems)
        if _check(m, "metric", f"$.metrics[{i}]", problems) and m.get("better") not in (
                "higher", "lower", None):
            problems.append(f"$.metrics[{i}].better: {m['better']!r} is not higher or lower")
        if len(problems) == n:
            good.append(m)
    return metrics.parse(good)


def _metric_values(doc: dict[str, Any], described: dict[str, metrics.Metric],
                   problems: list[str]) -> None:
    """Every described metric is a number where it stands. A role may lack one (the storage
    figures need /proc/self/io)."""
    reported = {p.split(": ", 1)[0] for p in problems}
    for i, r in enumerate(_list(doc, "results")):
        for j, role in enumerate(_list(r, "roles") if isinstance(r, dict) else []):
            if not isinstance(role, dict):
                continue
            for path in described:
                in_role = metrics.lookup(role, path) is not metrics.MISSING
                v = metrics.lookup(role if in_role else r, path)
                where = f"$.results[{i}]" + (f".roles[{j}]" if in_role else "") + f".{path}"
                if v is not metrics.MISSING and _wrong(v, NUM) and where not in reported:
                    problems.append(f"{where}: {_wrong(v, NUM)} (a metric)")
                    reported.add(where)


def check_kvbench(doc: Any, *, full: bool = False) -> list[str]:
    """Every way `doc` departs from what kvb reads (full: from the whole schema); empty when it
    conforms."""
    problems: list[str] = []
    if not _check(doc, "", "$", problems):
        return problems
    if doc.get("schema") != "kvbench-run" or doc.get("schema_version") != 1:
        problems.append("$: not a kvbench-run version 1 document")
    if doc.get("complete") is False and not isinstance(doc.get("error"), str):
        problems.append("$.error: an incomplete run must say why")
    if isinstance(doc.get("context"), dict):
        _context(doc["context"], full, problems)
    for i, r in enumerate(_list(doc, "results")):
        w = f"$.results[{i}]"
        if not _check(r, "result", w, problems):
            continue
        for j, role in enumerate(_list(r, "roles")):
            _role(role, f"{w}.roles[{j}]", problems)
        if "profile" in r:  # kvbench --profile
            problems.extend(profiles.check(r["profile"], f"{w}.profile"))
        for k, v in _dict(r, "engine_metrics").items():
            if _wrong(v, NUM):
                problems.append(f"{w}.engine_metrics.{k}: expected a number, got {describe(v)}")
    for i, s in enumerate(_list(doc, "summaries")):
        _check(s, "summary", f"$.summaries[{i}]", problems)
    _metric_values(doc, _described_metrics(doc, problems), problems)
    _finite(doc, "$", problems)
    if full:
        _units(doc, "$", "", problems)
    return problems


# ---- Google Benchmark JSON (kvbench_micro --benchmark_out) ------------------------------------

TIME_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def check_gbench(doc: Any) -> list[str]:
    """Every way a Google Benchmark document departs from what kvb reads."""
    problems: list[str] = []
    if not isinstance(doc.get("context"), dict):
        problems.append(f"$.context: expected an object, got {describe(doc.get('context'))}")
    for i, b in enumerate(_list(doc, "benchmarks")):
        w = f"$.benchmarks[{i}]"
        if not isinstance(b, dict):
            problems.append(f"{w}: expected an object, got {describe(b)}")
            continue
        if not isinstance(b.get("name"), str):
            problems.append(f"{w}.name: " + ("missing" if "name" not in b else
                                             f"expected a string, got {describe(b['name'])}"))
        for key in ("run_name", "run_type", "aggregate_name", "error_message", "label"):
            if key in b and not isinstance(b[key], str):
                problems.append(f"{w}.{key}: expected a string, got {describe(b[key])}")
        if b.get("time_unit", "ns") not in TIME_TO_NS:
            problems.append(f"{w}.time_unit: {b.get('time_unit')!r} is not one of "
                            f"{', '.join(TIME_TO_NS)}")
        if b.get("error_occurred") or b.get("run_type", "iteration") != "iteration":
            continue
        for key in (*metrics.GBENCH, "compression_ratio"):
            if key in b and _wrong(b[key], NUM):
                problems.append(f"{w}.{key}: {_wrong(b[key], NUM)}")
    _finite(doc, "$", problems)
    return problems
