"""Checks a kvbench run document against the schema in docs/json.md (version 1).

Structure and types of every required field, plus a naming rule: a number's key names its unit
(`_ns`, `_bytes`, `_seconds`, `_per_sec`, `_us_per_op`, `_kb_per_op`, `_per_op`, ...) unless it is
a plain count or ratio listed in DIMENSIONLESS.
"""
from __future__ import annotations

from typing import Any

UNIT_SUFFIXES = ("_ns", "_us", "_bytes", "_seconds", "_per_sec", "_us_per_op", "_kb_per_op",
                 "_per_op", "_mib")
# Numbers that are counts or ratios: no unit to name.
DIMENSIONLESS = {
    "schema_version", "cpu_cores", "num", "reads", "writes", "key_size", "value_size",
    "compression_ratio", "seed", "threads", "seek_nexts", "repeat", "repeats", "ops", "found",
    "not_found", "entries", "count", "min", "max", "mean", "median", "stddev", "cv",
    "ci95_low", "ci95_high", "p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99",
    "below_half_median", "write_amplification", "stall_slowdowns", "stall_stops",
    "cache_eviction_count", "pages_in_use", "depth", "branch_pages", "leaf_pages", "overflow_pages",
    "entries_in_tree", "eviction_clean", "eviction_dirty",
}
# Objects whose numbers carry their unit in the parent key (latency_ns.p99, ops_per_sec.mean) or
# are engine-specific (engine_metrics: checked for numbers only).
UNIT_FROM_PARENT = {"latency_ns", "ops_per_sec"}

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
    "workload": {"num": int, "reads": int, "writes": int, "key_size": int, "value_size": int,
                 "threads": int, "seed": int, "duration_seconds": (int, float),
                 "op_counts": str, "db": str, "compression": str, "cache_size_bytes": int},
    "result": {"benchmark": str, "repeat": int, "repeats": int, "counts": str,
               "seconds": (int, float), "db_size_bytes": int, "rss_bytes": int,
               "peak_rss_bytes": int, "cpu_seconds": (int, float), "engine_metrics": dict,
               "roles": list},
    "role": {"role": str, "threads": int, "background": bool, "ops": int, "bytes": int,
             "seconds": (int, float), "ops_per_sec": (int, float), "mb_per_sec": (int, float),
             "found": int, "not_found": int, "entries": int, "latency_ns": dict, "cost": dict,
             "intervals": dict},
    "latency_ns": {k: (int, float) for k in
                   ("count", "mean", "min", "p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99",
                    "max")},
    "cost": {"cpu_user_us_per_op": (int, float), "cpu_sys_us_per_op": (int, float),
             "thread_cpu_us_per_op": (int, float),
             "voluntary_cs_per_op": (int, float), "involuntary_cs_per_op": (int, float)},
    "intervals": {"count": int, "median_ops_per_sec": (int, float),
                  "p95_exceeded_ops_per_sec": (int, float),
                  "p99_exceeded_ops_per_sec": (int, float), "min_ops_per_sec": (int, float),
                  "below_half_median": int, "series": list},
    "interval": {"end_seconds": (int, float), "seconds": (int, float), "ops": int, "bytes": int},
    "pacing": {"target_bytes_per_sec": (int, float), "achieved_bytes_per_sec": (int, float),
               "p99_exceeded_bytes_per_sec": (int, float), "sustained": bool},
    "summary": {"benchmark": str, "role": str, "repeats": int, "ops_per_sec": dict},
}


def _check(obj: Any, kind: str, where: str, errors: list[str]) -> None:
    if not isinstance(obj, dict):
        errors.append(f"{where}: expected an object")
        return
    for key, typ in REQUIRED[kind].items():
        if key not in obj:
            errors.append(f"{where}.{key}: missing")
        elif isinstance(obj[key], bool) and typ is not bool and bool not in (
                typ if isinstance(typ, tuple) else (typ,)):
            errors.append(f"{where}.{key}: expected {typ}, got a boolean")
        elif not isinstance(obj[key], typ):
            errors.append(f"{where}.{key}: expected {typ}, got {type(obj[key]).__name__}")


def _units(obj: Any, where: str, parent: str, errors: list[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                named = (k.endswith(UNIT_SUFFIXES) or k in DIMENSIONLESS
                         or k in ("bytes", "seconds"))  # a bare unit names itself
                if not named and parent not in UNIT_FROM_PARENT and parent != "engine_metrics":
                    errors.append(f"{where}.{k}: a number whose name gives no unit")
            _units(v, f"{where}.{k}", k, errors)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _units(v, f"{where}[{i}]", parent, errors)


def validate(doc: Any) -> list[str]:
    """Every way `doc` departs from the schema; empty when it conforms."""
    errors: list[str] = []
    _check(doc, "", "$", errors)
    if errors:
        return errors
    if doc["schema"] != "kvbench-run" or doc["schema_version"] != 1:
        errors.append("$: not a kvbench-run version 1 document")
    if not doc["complete"] and not isinstance(doc.get("error"), str):
        errors.append("$.error: an incomplete run must say why")
    ctx = doc["context"]
    _check(ctx, "context", "$.context", errors)
    for name in ("build", "engine", "workload"):
        if isinstance(ctx.get(name), dict):
            _check(ctx[name], name, f"$.context.{name}", errors)
    for i, lib in enumerate(ctx.get("libraries", [])):
        _check(lib, "library", f"$.context.libraries[{i}]", errors)
        if isinstance(lib, dict) and lib.get("origin") not in (None, "system", "prefix", "source"):
            errors.append(f"$.context.libraries[{i}].origin: {lib.get('origin')!r} is not "
                          "system, prefix or source")
    for i, r in enumerate(doc["results"]):
        w = f"$.results[{i}]"
        _check(r, "result", w, errors)
        for j, role in enumerate(r.get("roles", [])):
            rw = f"{w}.roles[{j}]"
            _check(role, "role", rw, errors)
            for part in ("latency_ns", "cost", "intervals"):
                if isinstance(role.get(part), dict):
                    _check(role[part], part, f"{rw}.{part}", errors)
            for k, iv in enumerate(role.get("intervals", {}).get("series", [])):
                _check(iv, "interval", f"{rw}.intervals.series[{k}]", errors)
            if role.get("background"):
                _check(role.get("pacing"), "pacing", f"{rw}.pacing", errors)
        for k, v in r.get("engine_metrics", {}).items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                errors.append(f"{w}.engine_metrics.{k}: expected a number")
    for i, s in enumerate(doc["summaries"]):
        _check(s, "summary", f"$.summaries[{i}]", errors)
    _units(doc, "$", "", errors)
    return errors
