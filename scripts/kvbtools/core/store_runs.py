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
class StoredRun:
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


# ---- selectors: one vocabulary for kvb compare --store, store rm, history, trend and export ---

# What a run's series are (core/store_schema.py's series columns): a run matches when one of its
# series has the value; with --filter a series matches when it has it.
SERIES_FIELDS = {"kind": "s.kind", "engine": "s.engine", "benchmark": "s.benchmark",
                 "role": "s.role", "row": "s.row_name", "metric": "s.metric"}
# Hashes, matched by their first characters (as kvb history prints 12 of them).
HASH_FIELDS = {"document": "d.hash", "fingerprint": "f.hash"}
# Stored fields under short names (core/fingerprint.py): host, preset, commit. A commit matches
# by its first characters either way: commit=5d9499f and a full 40-digit SHA both match the 12
# kvbench records.
STORED_SHORT = ("host", "preset", "commit")
SHORT_NAMES = (*SERIES_FIELDS, *HASH_FIELDS, *STORED_SHORT)


def parse_selectors(items: list[str] | None, what: str) -> dict[str, str]:
    """NAME=VALUE arguments (--filter, --base, --other, kvb store rm's): every one must hold, so
    a name given twice with two values is refused (nothing could match)."""
    out: dict[str, str] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise UsageError(f"{what} {item!r}: expected NAME=VALUE (e.g. engine=rocksdb, "
                             "host=ci-3, workload.num=1000000)")
        if k in out and out[k] != v:
            raise UsageError(f"{what}: {k} given twice ({out[k]!r} and {v!r}): every selector "
                             "must hold, so nothing could match")
        out[k] = v
    return out


def check_names(st: store_mod.Store, selectors: dict[str, str]) -> None:
    """Refuses a field no stored run has (exit 2), naming the fields there are: a typo must not
    read as "no stored run matches"."""
    for name in selectors:
        if name in SHORT_NAMES:
            continue
        if st.q("SELECT 1 FROM fields WHERE name = ? LIMIT 1", (name,)).fetchone() is None:
            raise UsageError(f"unknown field {name!r}: no stored run has it in "
                             f"{store_mod.shown(st.loc)}; known: {known_names(st)}")


def known_names(st: store_mod.Store) -> str:
    """The short names, then the stored fields, those of one library or one prefix together (the
    context.<path> copies counted, not listed)."""
    stored = [n for (n,) in st.q("SELECT DISTINCT name FROM fields ORDER BY name")]
    context = [n for n in stored if n.startswith("context.")]
    libs: dict[str, set[str]] = {}
    groups: dict[str, list[str]] = {}
    for n in stored:
        parts = n.split(".")
        if n in SHORT_NAMES or n.startswith("context."):
            continue
        if parts[0] == "lib" and len(parts) == 3:
            libs.setdefault(parts[2], set()).add(parts[1])
        else:
            groups.setdefault(parts[0] if len(parts) > 1 else "", []).append(n)
    shown = [*SHORT_NAMES, *groups.pop("", [])]
    shown += [f"{p}.{{{','.join(n[len(p) + 1:] for n in names)}}}" if len(names) > 2 else
              ", ".join(names) for p, names in groups.items()]
    shown += [f"lib.<{'|'.join(sorted(names))}>.{what}" for what, names in sorted(libs.items())]
    return (", ".join(shown)
            + (f"; and {len(context)} context.<path> fields (e.g. {context[0]}; kvb store get "
               "HASH prints a run's context)" if context else ""))


def _stored(name: str, v: str) -> tuple[str, list[Any]]:
    # (The % of a pattern is a parameter: psycopg's placeholders are %s.)
    value = "(x.value LIKE ? OR ? LIKE x.value || ?)" if name == "commit" else "x.value = ?"
    params: list[Any] = [v.lower() + "%", v.lower(), "%"] if name == "commit" else [v]
    return (f"EXISTS (SELECT 1 FROM fields x WHERE x.document_id = d.id AND x.name = ? AND "
            f"{value})", [name, *params])


def selector_where(selectors: dict[str, str], series: bool = False
                   ) -> tuple[list[str], list[Any]]:
    """SQL conditions for NAME=VALUE selectors, all of which must hold, on documents d (joined
    to fingerprints f) and, with series, on the series s of the query (kvb history's --filter):
    the series fields (kind, engine, benchmark, role, row, metric), the hashes (document,
    fingerprint: their first characters), or any stored key field or attribute (host, preset,
    commit, lib.rocksdb.version, workload.num, ci.job, context.<path>, ...). Check the names
    first (check_names)."""
    where, params = [], []
    for k, v in selectors.items():
        if k in HASH_FIELDS:
            where.append(f"{HASH_FIELDS[k]} LIKE ?")
            params.append(v.lower() + "%")
        elif k in SERIES_FIELDS and series:
            where.append(f"{SERIES_FIELDS[k]} = ?")
            params.append(v)
        elif k == "kind":
            where.append("d.kind = ?")
            params.append(v)
        elif k in SERIES_FIELDS:
            where.append("EXISTS (SELECT 1 FROM measurements xm JOIN series xs ON xs.id = "
                         f"xm.series_id WHERE xm.document_id = d.id AND "
                         f"{SERIES_FIELDS[k].replace('s.', 'xs.')} = ?)")
            params.append(v)
        else:
            sql, values = _stored(k, v)
            where.append(sql)
            params += values
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
    return ids, parse_selectors([i for i in items if "=" in i], "selector")


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


def pick(st: store_mod.Store, ids: list[str], selectors: dict[str, str]) -> list[StoredRun]:
    """The runs named by ids (each must name exactly one) that match every selector; with no
    ids, every run that matches them. Oldest first."""
    if not ids and not selectors:
        raise UsageError("name the runs: their ids (document hashes, as kvb history and kvb "
                         "store add print them) or NAME=VALUE selectors, e.g. host=ci-3")
    check_names(st, selectors)
    where, params = selector_where(selectors)
    if ids:
        named = sorted({_one(st, i) for i in ids})
        queries = [(where + [f"d.id IN ({marks})"], params + chunk)
                   for chunk, marks in _chunks(named)]
    else:
        queries = [(where, params)]
    runs: list[StoredRun] = []
    for cond, args in queries:
        runs += [StoredRun(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), r[7]) for r in st.q(
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


def remove(st: store_mod.Store, runs: list[StoredRun]) -> None:
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
