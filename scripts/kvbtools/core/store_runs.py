"""Stored runs picked by their document hash or by NAME=VALUE selectors, and their removal
(docs/history.md). kvb store rm removes what pick() returns; kvb compare --store
(core/fleet.py) picks each side with the same selectors.

A run is one stored document (a kvbench or kvbench_micro JSON file); its id is the document's
hash, or its first characters, as kvb store add, kvb history and kvb export csv print it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from kvbtools.core import store as store_mod
from kvbtools.core.errors import UsageError

# Statements name at most this many ids in one IN (...): SQLite's old limit of 999 parameters.
CHUNK = 500
# The fewest characters of a hash that name a run to remove: one mistyped digit should not.
MIN_ID = 6


@dataclass
class Run:
    id: int
    hash: str
    kind: str
    run_utc: str
    host: str
    source: str
    complete: bool
    fingerprint: str
    measurements: int = 0

    def describe(self) -> str:
        return (f"{self.hash[:12]} ({self.kind}, {self.run_utc}, host {self.host}, "
                f"{self.measurements} measurements, fingerprint {self.fingerprint[:12]}"
                + ("" if self.complete else ", an INCOMPLETE run") + f"; from {self.source})")


def selector_where(selectors: dict[str, str]) -> tuple[list[str], list[Any]]:
    """SQL conditions on documents d (joined to fingerprints f) for NAME=VALUE selectors, all of
    which must hold: document=HASH and fingerprint=HASH (or their first characters),
    kind=kvbench|gbench, or any stored key field or attribute (host, preset, commit,
    lib.rocksdb.version, workload.num, ci.job, ...)."""
    where, params = [], []
    for k, v in selectors.items():
        if k == "document":
            where.append("d.hash LIKE ?")
            params.append(v.lower() + "%")
        elif k == "fingerprint":
            where.append("f.hash LIKE ?")
            params.append(v.lower() + "%")
        elif k == "kind":
            where.append("d.kind = ?")
            params.append(v)
        else:
            where.append("EXISTS (SELECT 1 FROM fields x WHERE x.document_id = d.id AND "
                         "x.name = ? AND x.value = ?)")
            params += [k, v]
    return where, params


def split_arguments(items: list[str]) -> tuple[list[str], dict[str, str]]:
    """kvb store rm's arguments: run ids (hex) and NAME=VALUE selectors, in any order."""
    ids = [i for i in items if "=" not in i]
    for i in ids:
        if not re.fullmatch(r"[0-9a-fA-F]+", i):
            raise UsageError(f"{i!r} is neither a run's id (its document hash, or its first "
                             f"{MIN_ID} or more characters) nor a NAME=VALUE selector")
        if len(i) < MIN_ID:
            raise UsageError(f"run id {i!r}: give at least {MIN_ID} characters of the document "
                             "hash (kvb history prints 12)")
    return ids, store_mod.parse_pairs([i for i in items if "=" in i], "selector")


def _one(st: store_mod.Store, prefix: str) -> int:
    rows = st.q("SELECT id FROM documents WHERE hash LIKE ?", (prefix.lower() + "%",)).fetchall()
    if not rows:
        raise UsageError(f"no stored run's id (document hash) starts with {prefix!r}: nothing "
                         "was removed")
    if len(rows) > 1:
        raise UsageError(f"{len(rows)} stored runs' ids start with {prefix!r}: give more "
                         "characters (nothing was removed)")
    return int(rows[0][0])


def _chunks(ids: Sequence[int]) -> Iterator[tuple[list[int], str]]:
    for i in range(0, len(ids), CHUNK):
        chunk = list(ids[i:i + CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def pick(st: store_mod.Store, ids: list[str], selectors: dict[str, str]) -> list[Run]:
    """The runs named by ids (each must name exactly one) that match every selector; with no
    ids, every run that matches them. Oldest first."""
    if not ids and not selectors:
        raise UsageError("name the runs: their ids (document hashes, as kvb history and kvb "
                         "store add print them) or NAME=VALUE selectors, e.g. host=ci-3")
    where, params = selector_where(selectors)
    if ids:
        named = sorted({_one(st, i) for i in ids})
        queries = [(where + [f"d.id IN ({marks})"], params + chunk)
                   for chunk, marks in _chunks(named)]
    else:
        queries = [(where, params)]
    runs: list[Run] = []
    for cond, args in queries:
        runs += [Run(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7]) for r in st.q(
            "SELECT d.id, d.hash, d.kind, d.run_utc, d.host, d.source, d.complete, f.hash "
            "FROM documents d JOIN fingerprints f ON f.id = d.fingerprint_id WHERE "
            + " AND ".join(cond), args)]
    runs.sort(key=lambda r: (r.run_utc, r.id))
    by_id = {r.id: r for r in runs}
    for chunk, marks in _chunks(list(by_id)):
        for d, n in st.q("SELECT document_id, COUNT(*) FROM measurements WHERE document_id IN "
                         f"({marks}) GROUP BY document_id", chunk):
            by_id[int(d)].measurements = int(n)
    return runs


def remove(st: store_mod.Store, runs: list[Run]) -> None:
    """Deletes the runs — their measurements, fields and documents — inside the caller's
    transaction, then the series and fingerprints no stored run uses any more (a series' unit
    and direction are fixed by its first run: a series re-created later takes the new one's)."""
    docs = [r.id for r in runs]
    for table, column in (("measurements", "document_id"), ("fields", "document_id"),
                          ("documents", "id")):
        for chunk, marks in _chunks(docs):
            st.q(f"DELETE FROM {table} WHERE {column} IN ({marks})", chunk)
    # A series or fingerprint row is made in the transaction of its first measurement, so
    # only a removal leaves one unused. (PostgreSQL: no add runs meanwhile, write(exclusive).)
    st.q("DELETE FROM series WHERE NOT EXISTS (SELECT 1 FROM measurements m WHERE "
         "m.series_id = series.id)")
    st.q("DELETE FROM fingerprints WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE "
         "d.fingerprint_id = fingerprints.id) AND NOT EXISTS (SELECT 1 FROM series s WHERE "
         "s.fingerprint_id = fingerprints.id)")
