"""Loading result files: kvbench run documents (docs/json.md) and Google Benchmark JSON
(kvbench_micro --benchmark_out). Every command that reads a result file reads it here.

A file that cannot be used is a UsageError that lists every problem of the file, one
`FILE: $.json.path: message` line each, never a traceback.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from kvbtools.core import metrics, output, schema
from kvbtools.core.errors import RunError, UsageError

KVBENCH, GBENCH = "kvbench", "gbench"
WHAT = {KVBENCH: "a kvbench run document (docs/json.md)",
        GBENCH: "Google Benchmark JSON (kvbench_micro --benchmark_out=FILE "
                "--benchmark_out_format=json)"}


@dataclass
class Document:
    path: str
    kind: str                  # KVBENCH or GBENCH
    doc: dict[str, Any]

    @property
    def metrics(self) -> dict[str, metrics.Metric]:
        return metrics.of_kvbench(self.doc) if self.kind == KVBENCH else metrics.GBENCH

    @property
    def context(self) -> dict[str, Any]:
        return self.doc["context"]


@dataclass
class Row:
    """One role of one benchmark of one run: the unit the tables show."""
    engine: str
    reference: bool
    benchmark: str
    role: str
    roles_in_benchmark: int
    data: dict[str, Any]       # the role, with its benchmark result under "_result"

    @property
    def label(self) -> str:
        return self.benchmark if self.roles_in_benchmark == 1 else f"{self.benchmark}[{self.role}]"


# What is left after the decoder's error in a document cut inside a number ("12." fails at the
# dot, "1e" at the e) or a literal (tr, fals, nu).
CUT_VALUE = re.compile(r"[-+.eE0-9]*|t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?")


def cut_short(text: str, e: json.JSONDecodeError) -> bool:
    """Whether `text` reads as a JSON document cut short, not as something else: it starts as a
    document starts, with { or [, and fails at its end, in a string that runs to its end, or in
    a number or literal that its end cuts. A text file ("results:", "hello") is not JSON at
    all."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    tail = text.rstrip()
    return (e.pos >= len(tail) or e.msg.startswith("Unterminated string")
            or CUT_VALUE.fullmatch(tail[e.pos:]) is not None)


def read_json(path: str, raw: bytes | None = None) -> Any:
    """The parsed JSON of a file, or of `raw` named `path` (a stored document), or a UsageError
    saying why there is none."""
    try:
        if raw is None:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text (byte {e.start}): not a JSON document") from None
    if not text.strip():
        raise UsageError(f"{path}: empty file: not a JSON document")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not JSON: {e.msg} (line {e.lineno} column {e.colno})"
                         + (": the file ends early (truncated?)" if cut_short(text, e) else "")
                         ) from None
    except RecursionError:
        raise UsageError(f"{path}: not JSON kvb can read: nested too deeply") from None


def kind_of(doc: Any) -> str:
    """KVBENCH or GBENCH; a UsageError message (without the path) for anything else."""
    if isinstance(doc, dict) and doc.get("schema") == "kvbench-run":
        if doc.get("schema_version") != 1:
            raise UsageError(f"schema_version {doc.get('schema_version')!r} is not supported "
                             "(this kvb reads version 1)")
        return KVBENCH
    if isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list):
        return GBENCH
    raise UsageError(f"neither {WHAT[KVBENCH]} nor {WHAT[GBENCH]}")


def open_document(path: str, raw: bytes | None = None) -> Document:
    """A file (or `raw`, read_json) read and its kind told, not yet checked; UsageError
    "FILE: why" when it is not a result file at all."""
    doc = read_json(path, raw)
    try:
        return Document(path, kind_of(doc), doc)
    except UsageError as e:
        raise UsageError(f"{path}: {e}") from None


def problems(document: Document, *, full: bool = False) -> list[str]:
    """Every problem of a loaded document, each "$.path: message"."""
    if document.kind == KVBENCH:
        return schema.check_kvbench(document.doc, full=full)
    return schema.check_gbench(document.doc)


def load(path: str, kinds: Iterable[str] = (KVBENCH, GBENCH)) -> Document:
    """A result file of one of `kinds`, every field the commands use checked."""
    return load_all([path], kinds)[0]


def load_written(path: str, kind: str, writer: str) -> Document:
    """What a run kvb started wrote (`writer`: the binary): load's checks, a problem the run's
    (RunError, exit 1: "WRITER wrote no usable JSON: ..."), not the user's input."""
    try:
        return load(path, [kind])
    except UsageError as e:
        raise RunError(f"{writer} wrote no usable JSON: {e}") from None


def load_all(paths: Iterable[str], kinds: Iterable[str] = (KVBENCH, GBENCH),
             contents: Mapping[str, bytes] | None = None) -> list[Document]:
    """Every file loaded and checked before any is used: one UsageError lists the problems of
    all of them. contents: the bytes of some of them, by name, already read (the documents of
    the results store, named by their ids: core/fleet.py)."""
    kinds = tuple(kinds)
    docs: list[Document] = []
    lines: list[str] = []
    for path in paths:
        try:
            d = open_document(path, (contents or {}).get(path))
        except UsageError as e:
            lines.append(str(e))
            continue
        if d.kind not in kinds:
            lines.append(f"{path}: {WHAT[d.kind]}; this command reads "
                         + " or ".join(WHAT[k].split(" (")[0] for k in kinds))
            continue
        lines.extend(f"{path}: {p}" for p in problems(d))
        docs.append(d)
    if lines:
        raise UsageError("\n".join(lines))
    return docs


def warn_incomplete(d: Document) -> None:
    """A kvbench run that failed or was killed still has results worth a look: say so."""
    if d.kind == KVBENCH and not d.doc["complete"]:
        print(f"kvb: warning: {d.path} is an incomplete run: {d.doc.get('error', '')}",
              file=sys.stderr)


def rows(doc: dict[str, Any]) -> list[Row]:
    engine = doc["context"]["engine"]
    out = []
    for result in doc["results"]:
        for role in result["roles"]:
            out.append(Row(engine["name"], bool(engine["reference"]), result["benchmark"],
                           role["role"], len(result["roles"]), {**role, "_result": result}))
    return out


def occurrences(doc: dict[str, Any]) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(occurrence, result, role) for every role of every result, in order. The occurrence
    counts the entries of --benchmarks naming that benchmark (fillseq,readrandom,readrandom: the
    second readrandom is occurrence 2); the repeats of one entry share it."""
    seen: dict[str, int] = {}
    out = []
    for result in doc["results"]:
        name = result["benchmark"]
        if result.get("repeat", 1) <= 1 or name not in seen:
            seen[name] = seen.get(name, 0) + 1
        out.extend((seen[name], result, role) for role in result["roles"])
    return out


def write_json(path: str, doc: Any) -> None:
    """Writes `doc` to `path` through core/output.py: a reader never sees half a file."""
    output.write_text(path, json.dumps(doc, indent=1) + "\n")
