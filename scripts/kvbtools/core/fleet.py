"""`kvb compare --store URL --base host=A --other host=B`: the sides picked from the results store.

Each side is the stored runs matching all of its NAME=VALUE selectors (engine, benchmark, host,
preset, commit, lib.rocksdb.version, workload.num, document=HASH, ...: core/store_runs.py's one
vocabulary, which kvb store rm and --filter share); a run picked by two sides is refused. The
documents, as they were stored, go through kvb compare's own loading, checks, pooling and
statistics, so the table is the one compare prints for files; each is named by its id
(document=HASH12, which kvb store and --filter take) wherever compare names a run. The runs
of both sides must share one workload (core/comparability.py), except in the fields the
selectors name: those are the axis (--base workload.compression=none --other
workload.compression=zstd).
"""
from __future__ import annotations

from dataclasses import dataclass

from kvbtools.core import compare_sides, store as store_mod, store_runs
from kvbtools.core.errors import UsageError


def _documents(st: store_mod.Store, selectors: dict[str, str]) -> list[tuple[int, str, str]]:
    store_runs.check_names(st, selectors)
    where, params = store_runs.selector_where(selectors)
    if not where:
        raise UsageError("a side needs at least one NAME=VALUE selector, e.g. host=A")
    return [(int(r[0]), r[1], r[2]) for r in st.q(
        "SELECT d.id, d.hash, d.kind FROM documents d JOIN fingerprints f ON f.id = "
        "d.fingerprint_id WHERE d.complete = 1 AND " + " AND ".join(where)
        + " ORDER BY d.run_utc, d.id", params)]


@dataclass
class Selected:
    """The runs each side's selectors picked, named by their ids as the store's commands take
    them (document=HASH12), with their documents as stored."""
    groups: list[list[str]]     # the names of each side's runs, the base's first
    labels: list[str]           # each side's selectors
    axes: set[str]              # the field names the selectors use: the comparison's axes
    contents: dict[str, bytes]  # each name's document


def name(digest: str) -> str:
    """A stored run as kvb compare names it: a selector of it that kvb compare --store, kvb
    store rm and --filter take (its 12 first hash characters, as kvb history prints)."""
    return f"document={digest[:12]}"


def selected(location: str, sides: list[list[str]]) -> Selected:
    """The documents of each side (its NAME=VALUE selectors, the base's first) in the store at
    `location`; a run picked by two sides, or runs of two kinds, are refused."""
    with store_mod.open_store(location) as st:
        picked = []
        for sel in sides:
            docs = _documents(st, store_runs.parse_selectors(sel, "selector"))
            if not docs:
                raise UsageError(f"no stored run matches {' '.join(sel)} in "
                                 f"{store_mod.shown(st.loc)}")
            picked.append(docs)
        compare_sides.check_stored([[h for _, h, _ in docs] for docs in picked],
                                   [" ".join(sel) for sel in sides])
        if len({k for docs in picked for _, _, k in docs}) > 1:
            raise UsageError("the selected runs mix kvbench and kvbench_micro results: add "
                             "kind=kvbench or kind=gbench to the selectors")
        contents = {name(h): st.document(h)[1] for docs in picked for _, h, _ in docs}
    named = {k for sel in sides for k in store_runs.parse_selectors(sel, "selector")}
    return Selected([[name(h) for _, h, _ in docs] for docs in picked],
                    [" ".join(sel) for sel in sides], named, contents)
