"""The results store (docs/history.md): every kvbench and kvbench_micro result in one place,
an SQLite file or a PostgreSQL database shared by several machines (Debian's python3-psycopg).
Store opens one, adds documents in one transaction each, and answers queries; kvb store
(commands/store.py) is its command, matrix, versions and bisect add their runs through
auto_store, history, trend and export read series from it (core/series.py). An SQLite file is
examined before it is opened (core/store_file.py); runs are picked and removed by
core/store_runs.py."""
from __future__ import annotations

import getpass
import gzip
import os
import socket
import sqlite3
import sys
import time
import zlib
from typing import Any, Iterable, Iterator, Sequence

from kvbtools.core import results, store_file, store_schema
from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.io_util import import_debian
from kvbtools.core.fingerprint import Extracted, RowValue, canonical, extract
from kvbtools.core.host import ROOT
from kvbtools.core.store_schema import ENV

DEFAULT_PATH = os.path.join(ROOT, "results", "kvbench.sqlite")
PG_PREFIXES = ("postgresql://", "postgres://")
# Serialises schema creation and migration among PostgreSQL clients (any constant will do).
PG_MIGRATION_LOCK = 0x6B766273
# Held shared by every PostgreSQL write and exclusively by kvb store rm, so a removal never
# deletes a series or fingerprint row that a concurrent add has just found and is filling.
PG_WRITE_LOCK = 0x6B766277


def location(arg: str | None) -> str:
    return arg or os.environ.get(ENV) or DEFAULT_PATH


def sqlite_file(loc: str) -> str | None:
    """The file of an SQLite store's location (PATH or sqlite:///PATH); None for PostgreSQL."""
    if loc.startswith(PG_PREFIXES):
        return None
    return loc[len("sqlite:///") - 1:] if loc.startswith("sqlite:///") else loc


def shown(loc: str) -> str:
    """A store's location for messages, without a password."""
    if loc.startswith(PG_PREFIXES) and "@" in loc:
        scheme, rest = loc.split("://", 1)
        cred, host = rest.rsplit("@", 1)
        return f"{scheme}://{cred.split(':', 1)[0]}@{host}"
    return loc


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def import_psycopg() -> Any:
    return import_debian("psycopg", "python3-psycopg", "a PostgreSQL store")


class Store:
    """One open store. Every statement goes through q(), and its rows through the _Rows it
    returns; writes happen inside write().

    An SQLite file is examined before it is opened (core/store_file.py): one that is not an
    SQLite database, is truncated or fails PRAGMA quick_check is refused, whether it is opened
    to be read or written, so a damaged store is refused by every command whatever pages its
    queries would touch. A store opened to be read (create and write False) is opened
    read-only (mode=ro): reading never writes to it; write() (a schema upgrade) reopens it for
    writing."""

    def __init__(self, loc: str, *, create: bool, write: bool = False) -> None:
        self.loc = loc
        self.dialect = "postgresql" if loc.startswith(PG_PREFIXES) else "sqlite"
        self.read_only = self.dialect == "sqlite" and not (create or write)
        self.conn: Any = self._connect_pg() if self.dialect == "postgresql" else \
            self._connect_sqlite(create)
        try:
            self._prepare(create)
        except BaseException:
            self.close()
            raise

    # ---- connecting ---------------------------------------------------------------------------

    def _connect_sqlite(self, create: bool) -> sqlite3.Connection:
        path = self.loc = sqlite_file(self.loc) or self.loc
        if os.path.isdir(path):
            raise UsageError(f"store {path} is a directory, not an SQLite file")
        if os.path.exists(path):
            store_file.permitted(path, write=not self.read_only)
            store_file.examine(path, full=True)
        else:
            if not create:
                raise UsageError(f"no store at {path} (kvb store add FILE.json creates one; "
                                 f"--store or ${ENV} name another)")
            parent = os.path.dirname(os.path.abspath(path))
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError as e:
                raise RunError(f"cannot create {parent} for the store {path}: "
                               f"{e.strerror.lower() if e.strerror else e}") from None
            store_file.permitted(path, write=True)
        return self._sqlite_connection()

    def _sqlite_connection(self) -> sqlite3.Connection:
        try:
            # isolation_level=None: transactions are begun and ended here, explicitly.
            if self.read_only:
                return sqlite3.connect(store_file.read_only_uri(self.loc), uri=True,
                                       timeout=120, isolation_level=None)
            return sqlite3.connect(self.loc, timeout=120, isolation_level=None)
        except sqlite3.Error as e:
            raise RunError(f"cannot open store {self.loc}: {e}") from None

    def _connect_pg(self) -> Any:
        psycopg = import_psycopg()
        try:
            return psycopg.connect(self.loc, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise RunError(f"cannot connect to the store {shown(self.loc)}: {first}") from None

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing after a failure must not hide the failure
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- statements ---------------------------------------------------------------------------

    def q(self, sql: str, params: Sequence[Any] = ()) -> "_Rows":
        """Runs one statement; its rows are read through the _Rows returned, which report
        SQLite's and PostgreSQL's errors as this does. Write no literal % or ? in SQL: pass
        patterns as parameters."""
        if self.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        try:
            cur = self.conn.cursor()
            cur.execute(sql, params)
        except Exception as e:
            raise self.error(e) from None
        return _Rows(self, cur)

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        if self.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        rows = list(rows)
        if not rows:
            return
        try:
            self.conn.cursor().executemany(sql, rows)
        except Exception as e:
            raise self.error(e) from None

    def error(self, e: Exception) -> Exception:
        """The exception kvb reports for an error of a statement or of reading its rows: an
        SQLite error as core/store_file.py classifies it (a damaged store: exit 2), a
        PostgreSQL one as a runtime failure; anything else (a bug) as it is."""
        if isinstance(e, sqlite3.DatabaseError):
            return store_file.classify(self.loc, e)
        if type(e).__module__.startswith("psycopg"):
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return RunError(f"store {shown(self.loc)}: {first}")
        return e

    def write(self, exclusive: bool = False) -> "_Transaction":
        """A transaction. exclusive (kvb store rm): no other kvb writes meanwhile; SQLite's
        writers always take turns, PostgreSQL's adds run side by side and wait for it. A store
        opened to be read is reopened for writing first (its file was examined when opened)."""
        if self.read_only:
            store_file.permitted(self.loc, write=True)
            self.conn.close()
            self.read_only = False
            self.conn = self._sqlite_connection()
            self.q("PRAGMA foreign_keys = ON")
        return _Transaction(self, exclusive)

    # ---- schema -------------------------------------------------------------------------------

    def _has_version_table(self) -> bool:
        if self.dialect == "sqlite":
            return self.q("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                          "name = 'schema_version'").fetchone() is not None
        return self.q("SELECT to_regclass('schema_version')").fetchone()[0] is not None

    def version(self) -> int:
        return int(self.q("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()[0])

    def _refuse_newer(self, v: int) -> None:
        if v > store_schema.current():
            raise UsageError(f"store {shown(self.loc)} has schema version {v}, newer than this "
                             f"kvb knows ({store_schema.current()}): it was written by a newer "
                             "kvbench; update this checkout (nothing was changed)")

    def _prepare(self, create: bool) -> None:
        if self.dialect == "sqlite":
            self.q("PRAGMA foreign_keys = ON")
        exists = self._has_version_table()
        if exists:
            self._refuse_newer(self.version())
            if self.version() == store_schema.current():
                return
        elif not create:
            if self.dialect == "postgresql":
                raise UsageError(f"{shown(self.loc)} is not a kvbench store (a PostgreSQL "
                                 "database without kvbench's tables; kvb store add FILE.json "
                                 "creates them)")
            raise store_file.not_a_store(self.loc, "" if self._sqlite_tables() else
                                         " (kvb store add FILE.json makes it one)")
        self.migrate()

    def _sqlite_tables(self) -> int:
        return int(self.q("SELECT COUNT(*) FROM sqlite_master").fetchone()[0])

    def migrate(self) -> None:
        """Brings the schema to the current version, each step once, under a lock: two clients
        opening a new store at once create it once."""
        with self.write() as tx:
            if self.dialect == "postgresql":
                self.q("SELECT pg_advisory_xact_lock(?)", (PG_MIGRATION_LOCK,))
            elif not self._has_version_table() and self._sqlite_tables():
                # Checked under the write lock: another kvb may have just created the store.
                raise store_file.not_a_store(self.loc)
            self.q(store_schema.VERSION_TABLE.strip())
            v = self.version()
            self._refuse_newer(v)
            for i in range(v, store_schema.current()):
                step = store_schema.MIGRATIONS[i]
                if callable(step):
                    step(self)
                else:
                    for sql in step:
                        self.q(store_schema.render(sql, self.dialect))
                self.q("INSERT INTO schema_version (version, applied_utc, applied_by) "
                       "VALUES (?, ?, ?)", (i + 1, utc_now(), _who()))
                if v > 0:
                    print(f"kvb: store {shown(self.loc)}: schema upgraded to version {i + 1}",
                          file=sys.stderr)
            tx.ok()

    # ---- adding -------------------------------------------------------------------------------

    def _id(self, insert: str, params: Sequence[Any], select: str, key: Sequence[Any]) -> int:
        """Inserts unless a row with the unique key exists (ON CONFLICT DO NOTHING, so a
        concurrent writer's row is taken, not duplicated), then returns its id."""
        self.q(insert + " ON CONFLICT DO NOTHING", params)
        return int(self.q(select, key).fetchone()[0])

    def add_one(self, e: Extracted, raw: bytes, source: str) -> int | None:
        """Stores one document inside the caller's transaction. None: it was already there."""
        fp = self._id("INSERT INTO fingerprints (hash, kind, fields) VALUES (?, ?, ?)",
                      (e.fingerprint, e.kind, canonical(e.key)),
                      "SELECT id FROM fingerprints WHERE hash = ?", (e.fingerprint,))
        row = self.q("INSERT INTO documents (hash, kind, fingerprint_id, run_utc, added_utc, "
                     "host, complete, source, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT DO NOTHING RETURNING id",
                     (e.hash, e.kind, fp, e.run_utc, utc_now(), e.host, int(e.complete),
                      source, gzip.compress(raw, mtime=0))).fetchone()
        if row is None:
            return None
        doc = int(row[0])
        self.many("INSERT INTO fields (document_id, name, value, is_key) VALUES (?, ?, ?, ?)",
                  [(doc, k, v, 1) for k, v in e.key.items()]
                  + [(doc, k, v, 0) for k, v in e.attributes.items()])
        series: dict[tuple[str, str], int] = {}
        rows = []
        for m in e.measurements:
            sid = series.get((m.row, m.metric.path))
            if sid is None:
                sid = series[(m.row, m.metric.path)] = self._series(fp, e, m)
            rows.append((doc, sid, m.repeat, m.value))
        self.many("INSERT INTO measurements (document_id, series_id, repeat_index, value) "
                  "VALUES (?, ?, ?, ?)", rows)
        return doc

    def _series(self, fp: int, e: Extracted, m: RowValue) -> int:
        """The series' id; its metric's unit and direction are fixed by its first document,
        and a document that describes them otherwise is refused."""
        sid = self._id("INSERT INTO series (fingerprint_id, kind, row_name, engine, benchmark, "
                       "role, metric, unit, better) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (fp, e.kind, m.row, m.engine, m.benchmark, m.role, m.metric.path,
                        m.metric.unit, m.metric.better),
                       "SELECT id FROM series WHERE fingerprint_id = ? AND row_name = ? AND "
                       "metric = ?", (fp, m.row, m.metric.path))
        unit, better = self.q("SELECT unit, better FROM series WHERE id = ?", (sid,)).fetchone()
        if (unit, better) != (m.metric.unit, m.metric.better):
            raise UsageError(f"metric {m.metric.path} of {m.row}: this document says "
                             f"{m.metric.unit}, {m.metric.better} is better; the store has "
                             f"{unit}, {better} is better")
        return sid

    def document(self, prefix: str) -> tuple[str, bytes]:
        rows = self.q("SELECT hash, document FROM documents WHERE hash LIKE ?",
                      (prefix.lower() + "%",)).fetchall()
        if not rows:
            raise UsageError(f"no stored document's hash starts with {prefix!r}")
        if len(rows) > 1:
            raise UsageError(f"{len(rows)} documents' hashes start with {prefix!r}: give more "
                             "characters")
        try:
            return rows[0][0], gzip.decompress(bytes(rows[0][1]))
        except (OSError, EOFError, zlib.error) as e:
            # gzip's CRC: bytes changed inside a stored document, which no page check sees.
            finding = f"stored document {rows[0][0][:12]} does not decompress: {e}"
            if self.dialect == "sqlite":
                raise store_file.damaged(self.loc, finding, by="gzip") from None
            raise RunError(f"store {shown(self.loc)}: {finding}") from None


class _Rows:
    """The rows of one statement. SQLite reads a page when a row on it is fetched, so damage
    can surface after the statement began; every fetch reports its error through
    Store.error, as q() does."""

    def __init__(self, store: Store, cursor: Any) -> None:
        self.store = store
        self.cursor = cursor

    def fetchone(self) -> Any:
        try:
            return self.cursor.fetchone()
        except Exception as e:
            raise self.store.error(e) from None

    def fetchall(self) -> list[Any]:
        try:
            return list(self.cursor.fetchall())
        except Exception as e:
            raise self.store.error(e) from None

    def __iter__(self) -> Iterator[Any]:
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row


class _Transaction:
    """BEGIN (IMMEDIATE on SQLite: the write lock up front, so two writers queue instead of
    failing at commit; on PostgreSQL then PG_WRITE_LOCK, shared or exclusive); COMMIT when ok()
    was called, else ROLLBACK, on every exit path."""

    def __init__(self, store: Store, exclusive: bool) -> None:
        self.store = store
        self.exclusive = exclusive
        self.committed = False

    def __enter__(self) -> "_Transaction":
        if self.store.dialect == "sqlite":
            self.store.q("BEGIN IMMEDIATE")
        else:
            self.store.q("BEGIN")
            self.store.q("SELECT pg_advisory_xact_lock(?)" if self.exclusive else
                         "SELECT pg_advisory_xact_lock_shared(?)", (PG_WRITE_LOCK,))
        return self

    def ok(self) -> None:
        self.store.q("COMMIT")
        self.committed = True

    def __exit__(self, *exc: object) -> None:
        if not self.committed:
            try:
                self.store.q("ROLLBACK")
            except (UsageError, RunError):
                pass


def _who() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name is not worth failing over
        user = "?"
    return f"kvb on {socket.gethostname()} ({user})"


def open_store(arg: str | None, *, create: bool = False, write: bool = False) -> Store:
    """The store named by --store, $KVBENCH_STORE or the default. create: make it if it is
    missing (implies write); write: it is opened to be written (an SQLite file passes
    quick_check now, before anything else)."""
    return Store(location(arg), create=create, write=write)


# ---- reading documents to add ------------------------------------------------------------------

def read_documents(paths: list[str], attrs: dict[str, dict[str, str]] | None = None
                   ) -> list[tuple[str, Extracted, bytes]]:
    """Every file loaded and checked (results.load_all: one error lists every problem of every
    file) before anything is stored, with the bytes to keep."""
    out = []
    for d in results.load_all(paths):
        e = extract(d, (attrs or {}).get(d.path))
        if not e.measurements:
            raise UsageError(f"{d.path}: a result with no measurement in it: nothing to store")
        try:
            with open(d.path, "rb") as f:
                raw = f.read()
        except OSError as err:
            raise UsageError(f"{d.path}: cannot read: {err.strerror}") from None
        out.append((d.path, e, raw))
    return out


def parse_pairs(items: list[str] | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise UsageError(f"{what} {item!r}: expected NAME=VALUE")
        out[k] = v
    return out


def add_files(paths: list[str], store_arg: str | None, attrs: dict[str, str] | None = None,
              quiet: bool = False) -> tuple[int, int]:
    """Reads every file first (one bad file stores none), then stores them all in one
    transaction. Returns (added, already stored)."""
    docs = read_documents(paths, {p: attrs for p in paths} if attrs else None)
    new: list[bool] = []
    with open_store(store_arg, create=True) as st:
        with st.write() as tx:
            for path, e, raw in docs:
                new.append(st.add_one(e, raw, os.path.abspath(path)) is not None)
            tx.ok()
        where = shown(st.loc)
    # Said only now that the transaction committed: a failure above stored none of them.
    if not quiet:
        for (path, e, _), got in zip(docs, new):
            print(f"{path}: {'stored' if got else 'already stored'} "
                  f"({e.kind}, {e.run_utc}, {len(e.measurements)} measurements, "
                  f"fingerprint {e.fingerprint[:12]}, document {e.hash[:12]})"
                  + ("" if e.complete else ", an INCOMPLETE run"))
            for s in e.skipped:
                print(f"  not stored, the benchmark reported an error: {s}")
        print(f"{sum(new)} document(s) added, {len(new) - sum(new)} already stored: {where}")
    return sum(new), len(new) - sum(new)


def auto_store(paths: list[str], location: str | None,
               attrs: dict[str, dict[str, str]] | None = None) -> None:
    """The hook matrix, versions and bisect call at their end (unless --no-store): stores what
    they measured in the store at `location` (None: the default one), with per-file attributes
    (bisect: the library commit of each run). A failure to store is reported, and does not fail
    the measurement."""
    if not paths:
        return
    try:
        docs = read_documents(paths, attrs)
        with open_store(location, create=True) as st:
            with st.write() as tx:
                added = sum(st.add_one(e, raw, os.path.abspath(p)) is not None
                            for p, e, raw in docs)
                tx.ok()
        print(f"stored {added} run(s) ({len(docs) - added} already there) in "
              f"{shown(st.loc)}; kvb history lists them")
    except (UsageError, RunError) as e:
        print(f"kvb: warning: the runs were not stored: {e}", file=sys.stderr)
