"""What the builds of a comparison compiled: which library a row's benchmark runs, and where
each run's copy of it came from, as the run's own context records it.

A kvbench_micro row runs a library's code when its name matches that library's `micro_rows` in
cmake/deps.json (`lz4/compress/4096`: lz4; `xxh3_64/lib/4096`: xxhash as built, where
`xxh3_64/inline/4096` is xxhash.h compiled into kvbench_micro itself); a kvbench row runs its
engine's (`rocksdb readrandom`). The origin is the run's: kvbench_micro's `<lib>_origin`
("system liblz4-1:amd64 1.9.4-1", "prefix DIR", "source DIR VERSION (COMPILER: FLAGS)"), kvbench's
`context.libraries[]`. A row whose library every build of both sides took as installed, the
same one, compares kvbench's code around it, not the library's: kvb matrix and versions say so
on the row, in their JSON and on their page (docs/compare.md), instead of a bare "no change".
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvbtools.core import manifest, results
from kvbtools.core.comparison import Comparison
from kvbtools.core.samples import Side


@dataclass(frozen=True)
class Origin:
    """Where one run's copy of a library came from."""
    kind: str       # system, prefix or source
    text: str       # as the run's context says it
    what: str       # as a note names it: 'liblz4-1 1.9.4-1 (installed)'


def row_library(kind: str, bench: str) -> str | None:
    """The library whose own code a row runs: a kvbench_micro benchmark by the manifest's
    micro_rows, a kvbench row ('ENGINE WORKLOAD') by its engine; None for kvbench's own code
    (crc32c's kernels, memory/*, xxhash.h inlined, the reference engines)."""
    deps = manifest.deps()
    if kind == results.KVBENCH:
        engine = bench.split(" ", 1)[0]
        return engine if engine in deps else None
    return next((d.name for d in deps.values() if d.micro_rows and re.search(d.micro_rows,
                                                                             bench)), None)


def _installed(package: str) -> str:
    """'liblz4-1:amd64 1.9.4-1' -> 'liblz4-1 1.9.4-1 (installed)'."""
    return re.sub(r":[A-Za-z0-9_]+(?=\s|$)", "", package.strip()) + " (installed)"


def origin(ctx: dict[str, Any], dep: str) -> Origin | None:
    """`dep`'s origin in one run's context; None when the context does not say."""
    micro = ctx.get(f"{dep}_origin")
    if isinstance(micro, str) and micro.strip():
        kind, _, rest = micro.strip().partition(" ")
        what = _installed(rest) if kind == "system" and rest else f"{dep} from {kind} {rest}"
        return Origin(kind, micro.strip(), what.strip())
    libs = ctx.get("libraries")
    lib = next((x for x in libs if isinstance(x, dict) and x.get("name") == dep), None) \
        if isinstance(libs, list) else None
    if lib is None or not lib.get("origin"):
        return None
    kind = str(lib["origin"])
    where = {"system": str(lib.get("package") or ""), "prefix": str(lib.get("prefix") or ""),
             "source": f"{lib.get('source_dir', '')} {lib.get('version', '')} "
                       f"({lib.get('build_compiler', '')}: {lib.get('build_flags', '')})"}
    text = f"{kind} {where.get(kind, '')}".strip()
    what = _installed(where["system"]) if kind == "system" and where["system"] else \
        f"{dep} {lib.get('version', '')} from {kind} {where.get(kind, '')}".strip()
    return Origin(kind, text, what)


def side_origins(side: Side, dep: str) -> list[Origin] | None:
    """Every distinct origin of `dep` over a side's runs, in order; None when a run does not
    say (a context from before the origins were recorded)."""
    got = [origin(ctx, dep) for ctx in side.contexts]
    if not got or any(o is None for o in got):
        return None
    return list(dict.fromkeys(o for o in got if o is not None))


def note(base: Side, other: Side, bench: str) -> str:
    """'same liblz4-1 1.9.4-1 (installed) in every build: this compares kvbench's code, not the
    library's' when the row's library is one installed copy in every run of both sides; ''
    otherwise (a build compiled it, the builds took different copies, or a run does not say)."""
    dep = row_library(base.kind, bench)
    if dep is None:
        return ""
    a, b = side_origins(base, dep), side_origins(other, dep)
    if not a or a != b or len(a) != 1 or a[0].kind == "source":
        return ""
    return f"same {a[0].what} in every build: this compares kvbench's code, not the library's"


def notes(c: Comparison, skip: tuple[str, ...] = ()) -> dict[tuple[str, str], str]:
    """(benchmark, side) -> note, for the rows that have one (the sides in `skip` left out: the
    control, an A/A comparison of the base's own binaries, compares no code at all)."""
    sides = {s.label: s for s in c.sides}
    out = {}
    for x in c.cells:
        if x.side in skip:
            continue
        text = note(c.sides[0], sides[x.side], x.bench)
        if text:
            out[(x.bench, x.side)] = text
    return out


def origins(c: Comparison, skip: tuple[str, ...] = ()) -> dict[str, dict[str, list[str]]]:
    """Side -> library -> its origins as the side's runs record them, for every library the
    rows run (the sides in `skip` left out, e.g. the control: the base's binaries)."""
    deps = list(dict.fromkeys(d for names in c.benches.values() for b in names
                              for d in [row_library(c.sides[0].kind, b)] if d))
    out: dict[str, dict[str, list[str]]] = {}
    for s in c.sides:
        if s.label in skip:
            continue
        got = {d: [o.text for o in side_origins(s, d) or []] for d in deps}
        out[s.label] = {d: texts for d, texts in got.items() if texts}
    return out


def origin_lines(c: Comparison, skip: tuple[str, ...] = ()) -> list[str]:
    """'x86-clang-native: lz4 source DIR 1.9.4 (Clang 14.0.6: ...)', a line per side and
    library (the 'what the builds compiled' block of kvb matrix and versions)."""
    return [f"{side}: {dep} {'; '.join(texts)}" for side, libs in origins(c, skip).items()
            for dep, texts in libs.items()]


def note_lines(c: Comparison, skip: tuple[str, ...] = ()) -> list[str]:
    """Each note once, with the rows it is about: 'same liblz4-1 1.9.4-1 (installed) in every
    build: ... (lz4/compress/4096 [x86-clang-native, control], lz4/decompress/4096 [...])'."""
    by_note: dict[str, dict[str, list[str]]] = {}
    for (bench, side), text in notes(c, skip).items():
        by_note.setdefault(text, {}).setdefault(bench, []).append(side)
    return [f"{text} (" + ", ".join(f"{b} [{', '.join(s)}]" for b, s in rows.items()) + ")"
            for text, rows in by_note.items()]
