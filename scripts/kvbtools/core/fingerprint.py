"""What the results store keeps of one document: its measurements, its series key, its attributes.

A series is one benchmark row x one metric x one fingerprint. The fingerprint is the set of KEY
fields below: what must not change for two points to be comparable (the same machine, the same
build configuration, the same workload). Everything else the document says is an ATTRIBUTE of
its point: what may change along a history and may explain a change (library versions and
origins, the kvbench commit, the compiler's version, the kernel, microcode, the engine's
effective configuration, the environment audit). So "which rocksdb version made it slower" is a
question about the attributes of neighbouring points of one series, never a question across
series.

Only the fields named in KEY_* are key fields. A field a later kvbench adds to its JSON (the
environment block of a later issue, say) is an attribute until someone adds it here, so new
fields never split old series. Every context field is kept as an attribute under its own path
(`context.<path>`), besides the normalised names below that kvbench and kvbench_micro share.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from kvbtools.core import metrics, results
from kvbtools.core.errors import UsageError
from kvbtools.core.samples import Side, _add_gbench

# Key fields shared by both kinds (normalised names; absent ones are left out).
KEY_HOST = ("host", "cpu_model", "cpu_cores", "memory_gib")
KEY_BUILD = ("preset", "compiler", "build_type", "cxx_flags", "target_arch", "assertions")
# kvbench workload parameters that define "the same workload" (docs/json.md, context.workload).
# Left out: db (a path), report_interval_seconds (reporting only), op_counts (a constant text).
KEY_WORKLOAD = ("num", "reads", "writes", "key_size", "value_size", "compression_ratio", "seed",
                "duration_seconds", "threads", "seek_nexts", "write_rate_limit_bytes_per_sec",
                "verify", "use_existing_db", "compression", "cache_size_bytes", "sync",
                "engine_options")
# kvbench_micro context entries that describe the input (also comparison.INPUT_KEYS).
KEY_MICRO_INPUT = ("input", "cache_mode")
# The crc32c kernel KVBENCH_CRC32C forced (docs/micro.md): crc32c/extend ran that kernel, not the
# one measured fastest, so a forced run is another series. In the key only when forced: the
# dispatched runs keep the series they had before the field existed.
KEY_CRC32C = "crc32c"

# Context names of things that may be absent today and arrive with the environment audit; found
# wherever they sit in the context (a key whose last component is one of these).
HOST_EXTRAS = {"microcode": "microcode", "virtualised": "virtualised",
               "virtualized": "virtualised", "hypervisor": "virtualised"}


@dataclass
class RowValue:
    row: str          # compare's row name: "memory fillseq", "memory rww[reader]", "xxh3_64/..."
    engine: str       # kvbench engine; "" for kvbench_micro
    benchmark: str
    role: str         # kvbench role; "" for kvbench_micro
    metric: metrics.Metric   # as the document describes it (metrics.py): path, unit, better
    repeat: int       # 1-based
    value: float


@dataclass
class Extracted:
    kind: str                         # "kvbench" or "gbench"
    hash: str                         # sha256 of the document's canonical JSON
    run_utc: str                      # "YYYY-MM-DDTHH:MM:SSZ"
    complete: bool
    key: dict[str, str]
    attributes: dict[str, str]
    measurements: list[RowValue] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def host(self) -> str:
        return self.key.get("host", "")

    @property
    def fingerprint(self) -> str:
        return fingerprint_hash(self.kind, self.key)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint_hash(kind: str, key: dict[str, str]) -> str:
    return hashlib.sha256(canonical({"kind": kind, **key}).encode()).hexdigest()


def text(v: Any) -> str:
    """Field values are text: strings as they are, everything else as JSON (true, 2, 0.5)."""
    return v if isinstance(v, str) else canonical(v)


def flatten(prefix: str, v: Any, out: dict[str, str]) -> None:
    """context.build.preset = ..., context.libraries.rocksdb.version = ... (lists of objects
    with a "name" are keyed by it, other lists by index)."""
    if isinstance(v, dict):
        for k, x in v.items():
            flatten(f"{prefix}.{k}", x, out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) and "name" in x for x in v):
        for x in v:
            flatten(f"{prefix}.{x['name']}", {k: y for k, y in x.items() if k != "name"}, out)
    elif isinstance(v, list) and v and all(isinstance(x, dict) and "message" in x for x in v):
        out[prefix] = "; ".join(str(x["message"]) for x in v)
    elif isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
        for i, x in enumerate(v):
            flatten(f"{prefix}.{i}", x, out)
    else:
        out[prefix] = text(v)


def utc(stamp: Any, what: str) -> str:
    if not isinstance(stamp, str) or not stamp:
        raise UsageError(f"{what}: no date in the context: a point needs a time")
    try:
        t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{what}: unreadable date {stamp!r}") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _bool_text(v: Any) -> str:
    return "true" if v in (True, "on", "true", "yes", "ON") else "false"


def _host_extras(flat: dict[str, str], attrs: dict[str, str]) -> None:
    for path, value in flat.items():
        last = path.rsplit(".", 1)[-1].lower()
        if last in HOST_EXTRAS and HOST_EXTRAS[last] not in attrs:
            attrs[HOST_EXTRAS[last]] = value


_FORCED = re.compile(r"KVBENCH_CRC32C=(\S+)")


def crc32c_forced(kind: str, ctx: dict[str, Any]) -> str | None:
    """The kernel KVBENCH_CRC32C forced on the run ("hw_1way"); "" when the run records a choice
    that was not forced (measured, or the only kernel); None when it records none (older)."""
    if kind == results.KVBENCH:
        choice = ctx.get("crc32c")
        if not isinstance(choice, dict) or "chosen_by" not in choice:
            return None
        if choice["chosen_by"] != "forced":
            return ""
        how = str(choice.get("how", ""))
    else:
        how = ctx.get("crc32c_extend_chosen_by")
        if not isinstance(how, str):
            return None
        if not how.startswith("forced"):
            return ""
    forced = _FORCED.search(how)  # "forced by KVBENCH_CRC32C=hw_1way"
    return forced.group(1) if forced else "?"


def _kvbench_fields(ctx: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    build, workload = ctx.get("build") or {}, ctx.get("workload") or {}
    key: dict[str, Any] = {
        "host": ctx.get("hostname"), "cpu_model": ctx.get("cpu_model"),
        "cpu_cores": ctx.get("cpu_cores"),
        "memory_gib": round(ctx["memory_bytes"] / 2**30) if isinstance(
            ctx.get("memory_bytes"), (int, float)) else None,
        "preset": build.get("preset"), "compiler": build.get("compiler_id"),
        "build_type": build.get("build_type"), "cxx_flags": build.get("cxx_flags"),
        "target_arch": build.get("target_arch"),
        "assertions": _bool_text(build["assertions"]) if "assertions" in build else None}
    for k in KEY_WORKLOAD:
        key[f"workload.{k}"] = workload.get(k)
    # Sampled latency (--latency_sample=N > 1) is another series' latency; 1, the default, stays out
    # of the key so that runs from before the flag keep their series.
    if isinstance(workload.get("latency_sample"), int) and workload["latency_sample"] > 1:
        key["workload.latency_sample"] = workload["latency_sample"]
    engine = ctx.get("engine") or {}
    # The memory the engine was given and how an IO-bound run was bounded (docs/engines.md).
    config = engine.get("config") if isinstance(engine.get("config"), dict) else {}
    for k in ("memory_budget", "io_bound"):
        key[f"engine.{k}"] = config.get(k)
    attrs: dict[str, Any] = {
        "kernel": ctx.get("kernel"), "commit": build.get("git_revision"),
        "kvbench_version": build.get("kvbench_version"),
        "compiler_version": build.get("compiler_version"), "engine.version": engine.get("version")}
    for lib in ctx.get("libraries") or []:
        if isinstance(lib, dict) and lib.get("name"):
            for k in ("version", "origin", "package", "source_dir", "build_flags"):
                attrs[f"lib.{lib['name']}.{k}"] = lib.get(k)
    return _present(key), _present(attrs)


_MICRO_LIB = re.compile(r"^([a-z0-9]+)_(library_version|version|header_version|origin)$")


def _gbench_fields(ctx: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    compiler = str(ctx.get("kvbench_compiler", "")).split(" ", 1)
    key: dict[str, Any] = {
        "host": ctx.get("host_name"), "cpu_cores": ctx.get("num_cpus"),
        "preset": ctx.get("kvbench_preset"), "compiler": compiler[0] or None,
        "build_type": ctx.get("kvbench_build_type"), "cxx_flags": ctx.get("kvbench_cxx_flags"),
        "target_arch": ctx.get("kvbench_target_arch"),
        "assertions": _bool_text(ctx["kvbench_assertions"]) if "kvbench_assertions" in ctx
        else None}
    for k in KEY_MICRO_INPUT:
        key[f"workload.{k}"] = ctx.get(k)
    attrs: dict[str, Any] = {
        "commit": ctx.get("kvbench_git_revision"), "kvbench_version": ctx.get("kvbench_version"),
        "compiler_version": compiler[1] if len(compiler) > 1 else None}
    for k, v in ctx.items():
        m = _MICRO_LIB.match(k)
        if not m or m.group(1) == "kvbench":
            continue
        dep, what = m.groups()
        if what == "origin":  # "system liblz4-1:amd64 1.9.4-1"
            origin = str(v).split(" ", 1)
            attrs[f"lib.{dep}.origin"] = origin[0]
            if len(origin) > 1:
                attrs[f"lib.{dep}.package"] = origin[1]
        elif what in ("library_version", "version"):
            attrs.setdefault(f"lib.{dep}.version", v)
        else:
            attrs[f"lib.{dep}.{what}"] = v
    return _present(key), _present(attrs)


def key_fields(kind: str, ctx: dict[str, Any]) -> dict[str, str]:
    """The key fields of a context of either kind (kvb compare's comparability check too)."""
    return _fields(kind, ctx)[0]


def _fields(kind: str, ctx: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    key, attrs = (_kvbench_fields if kind == results.KVBENCH else _gbench_fields)(ctx)
    forced = crc32c_forced(kind, ctx)
    if forced:
        key[KEY_CRC32C] = f"forced {forced}"
    node = slurm_node(ctx)
    if node:   # the machine's own name stays an attribute (context.hostname, context.host_name)
        key["host"] = node
    return key, attrs


def slurm_node(ctx: dict[str, Any]) -> str:
    """The Slurm node a run was measured on (context.slurm.node, which kvb's Slurm executor
    adds: measure/fleet.mark_node), '' when none: the host a store keys it by, for the node is
    what a cluster's users name (several nodes may share a machine's hostname)."""
    where = ctx.get("slurm")
    return str(where.get("node") or "") if isinstance(where, dict) else ""


def _present(d: dict[str, Any]) -> dict[str, str]:
    return {k: text(v) for k, v in d.items() if v is not None and v != ""}


def _kvbench_measurements(doc: dict[str, Any]) -> list[RowValue]:
    out = []
    described = metrics.of_kvbench(doc)
    for row in results.rows(doc):
        result = row.data["_result"]
        for m in described.values():
            v = metrics.value(row.data, result, m.path)
            if v is not None:
                out.append(RowValue(f"{row.engine} {row.label}", row.engine, row.benchmark,
                                       row.role, m, int(result.get("repeat", 1)), v))
    return out


def _gbench_measurements(d: results.Document) -> tuple[list[RowValue], list[str]]:
    side = Side("store")
    _add_gbench(side, d)
    out = []
    for (name, key), values in side.values.items():
        for i, v in enumerate(values, 1):
            out.append(RowValue(name, "", name, "", metrics.GBENCH[key], i, v))
    return out, [f"{b}: {m}" for b, m in side.skipped.items()]


def extract(d: results.Document, user_attrs: dict[str, str] | None = None) -> Extracted:
    """Everything the store keeps of one document, loaded and checked by results.load.
    Raises UsageError when it lacks what a point needs."""
    doc, what, kind = d.doc, d.path, d.kind
    ctx = doc["context"]
    key, attrs = _fields(kind, ctx)
    if kind == results.KVBENCH:
        run_utc = utc(ctx.get("date_utc"), what)
        measurements, skipped = _kvbench_measurements(doc), []
        complete = doc.get("complete") is not False
    else:
        run_utc = utc(ctx.get("date"), what)
        measurements, skipped = _gbench_measurements(d)
        complete = True
    if "host" not in key:
        raise UsageError(f"{what}: the context names no host")
    flat: dict[str, str] = {}
    flatten("context", ctx, flat)
    _host_extras(flat, attrs)
    attrs.update(flat)
    for k, v in (user_attrs or {}).items():
        if k in key or k in attrs:
            raise UsageError(f"--attr {k}: the document itself has {k}="
                             f"{key.get(k, attrs.get(k))!r}")
        attrs[k] = v
    digest = hashlib.sha256(canonical(doc).encode()).hexdigest()
    return Extracted(kind, digest, run_utc, complete, key, attrs, measurements, skipped)
