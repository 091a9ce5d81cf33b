"""An SQLite store's file before kvb uses it: is it an SQLite database at all, is it whole, is
it intact (docs/history.md, "A damaged store"). core/store.py calls examine() before it opens a
file, and classify() for an error SQLite reports later.

Every look at the file goes through a read-only connection (URI mode=ro), so looking changes
nothing: no journal is rolled back into a damaged file, no page written, not even the file's
modification time. The header is read while that connection holds SQLite's shared lock, so a
writer in the middle of its commit (the file growing, page 1 rewritten) is never mistaken for a
truncated file.
"""
from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from typing import Sequence

from kvbtools.core.errors import RunError, UsageError

MAGIC = b"SQLite format 3\x00"
HEADER = 100
# SQLite's result codes (sqlite3.SQLITE_* from Python 3.11 on).
CORRUPT, NOTADB, READONLY_ROLLBACK = 11, 26, 776
# Seconds a reader waits for a writer's lock, as the store's own connection does.
BUSY_TIMEOUT = 120
# Seconds an empty file is watched for a kvb that is creating the store in it (below).
EMPTY_WAIT = 1.0


def damaged(path: str, finding: str, *, listed: bool = False, findings: Sequence[str] = (),
            by: str = "SQLite") -> UsageError:
    """The error for a damaged store, found `by` SQLite (or gzip, a stored document):
    `findings`, SQLite's problems, one a line after it (kvb store check); without them and not
    `listed` (shown by the caller), where to find them."""
    return UsageError(f"store {path} is damaged ({by}: {finding}): nothing was written; "
                      "restore it from a copy" + "".join(f"\n  {x}" for x in findings)
                      + ("" if listed or findings or by != "SQLite" else
                         f" (kvb store check --store {path} lists every problem SQLite finds)"))


def not_sqlite(path: str) -> UsageError:
    return UsageError(f"{path} is not a kvbench store (not an SQLite database): left as it was; "
                      "--store or $KVBENCH_STORE name the store")


def not_a_store(path: str, hint: str = "") -> UsageError:
    return UsageError(f"{path} is not a kvbench store (an SQLite database without kvbench's "
                      f"tables): left as it was{hint}")


def empty_file(path: str) -> UsageError:
    return UsageError(f"{path} is not a kvbench store (an empty file): left as it was; a store "
                      "cut to nothing is lost (restore it from a copy), else remove the file "
                      "and kvb store add creates the store there")


def _stays_empty(path: str) -> bool:
    """True when the file is empty and stays so. A kvb creating a store makes the file empty,
    then fills it in one transaction (its PATH-journal beside it until the commit): an empty
    file is watched for EMPTY_WAIT seconds, and as long as such a journal is there."""
    start = time.monotonic()
    while os.path.getsize(path) == 0:
        waited = time.monotonic() - start
        if waited > BUSY_TIMEOUT or (waited > EMPTY_WAIT
                                     and not os.path.exists(path + "-journal")):
            return True
        time.sleep(0.02)
    return False


def _starts_with_magic(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def classify(path: str, e: sqlite3.Error, listed: bool = False) -> Exception:
    """SQLite's error on this file as kvb reports it: a file without SQLite's header is not a
    database; one with the header that SQLite cannot read is damaged (a corrupt header, a
    malformed page); anything else (permissions, I/O, a lock held too long) is a runtime
    failure."""
    msg = str(e)
    code = getattr(e, "sqlite_errorcode", None)
    if code == NOTADB or "not a database" in msg:
        if not _starts_with_magic(path):
            return not_sqlite(path)
    elif code != CORRUPT and "malformed" not in msg:
        return RunError(f"store {path}: {msg}")
    try:
        cut = _truncation(path)
    except OSError:
        cut = None
    return damaged(path, msg + (f"; {cut}" if cut else ""), listed=listed)


def _truncation(path: str) -> str | None:
    """What is missing, when the file is shorter than its header says (a copy cut short, a
    full disk) or not a whole number of pages; None when it is whole."""
    with open(path, "rb") as f:
        head = f.read(HEADER)
        size = os.fstat(f.fileno()).st_size
    if len(head) < HEADER:
        return f"the file holds {size} bytes, less than SQLite's {HEADER}-byte header"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    # The header's page count is valid only when written by the same change as its counter.
    counted = pages > 0 and head[24:28] == head[92:96]
    if page < 512 or page & (page - 1):
        return None  # SQLite reports a bad page size itself
    if counted and size < pages * page:
        return (f"truncated: the file holds {size} bytes, its header says {pages} pages of "
                f"{page} bytes ({pages * page} bytes)")
    if size % page:
        return f"truncated: {size} bytes is not a whole number of {page}-byte pages"
    return None


def read_only_uri(path: str) -> str:
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"


def permitted(path: str, *, write: bool) -> None:
    """Raises RunError "permission denied" naming the path when this user may not read the
    store's file, or (write) may not write it, or create the journal SQLite writes beside it
    (an existing store) or the file itself (a new one). SQLite's own words for these are
    "unable to open database file" and "attempt to write a readonly database"."""
    where = os.path.dirname(os.path.abspath(path))
    if os.path.exists(path):
        if not os.access(path, os.R_OK | (os.W_OK if write else 0)):
            raise RunError(f"store {path}: permission denied: this user may not "
                           + ("write" if write and os.access(path, os.R_OK) else "read")
                           + " the file")
        if write and not os.access(where, os.W_OK | os.X_OK):
            raise RunError(f"store {path}: permission denied: this user may not write "
                           f"the directory {where}, where SQLite writes the store's journal "
                           "during a change")
    elif write and not os.access(where, os.W_OK | os.X_OK):
        raise RunError(f"cannot create the store {path}: permission denied: this user may "
                       f"not write the directory {where}")


def _look(path: str, full: bool, listed: bool) -> None:
    con = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    try:
        con.execute("BEGIN")
        # The first read takes the shared lock (and fails on a file that is not a database).
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        cut = _truncation(path)
        if cut:
            raise damaged(path, cut, listed=listed)
        if full:
            # quick_check, not integrity_check: both read every page and check each b-tree's
            # structure, its cells, the free list and that no page is lost or used twice, which
            # is what a torn write, a bad copy or a failing disk breaks. integrity_check adds
            # that every index matches its table row by row and that UNIQUE holds, O(N log N):
            # 2.6 s against 0.15 s on a 140 MB store of 2000 runs, before every add. kvb store
            # check runs the full one.
            findings = problems(con, "quick_check")
            if findings:
                raise damaged(path, _summary(findings))
        con.execute("COMMIT")
    finally:
        con.close()


def problems(con: sqlite3.Connection, pragma: str) -> list[str]:
    """The problems SQLite's PRAGMA quick_check or integrity_check reports; [] when none."""
    lines = [line for (text,) in con.execute(f"PRAGMA {pragma}") for line in
             str(text).splitlines() if line.strip() and not line.startswith("*** in database")]
    return [] if lines == ["ok"] else lines


def _summary(findings: list[str]) -> str:
    more = len(findings) - 1
    return findings[0] + (f"; and {more} more problem(s)" if more else "")


def _roll_back_hot_journal(path: str) -> None:
    """A writer that died mid-transaction (kill -9, a power cut) leaves a hot journal: the pages
    as they were before it began. A read-only connection cannot put them back; the first
    read-write connection does, which is SQLite's own recovery and restores the last commit."""
    con = sqlite3.connect(path, timeout=BUSY_TIMEOUT)
    try:
        con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    finally:
        con.close()


def examine(path: str, *, full: bool, listed: bool = False) -> None:
    """Raises UsageError when the existing file at path is not an SQLite database, or is
    damaged: shorter than its header says, or (full: before a write) failing quick_check.
    An empty file is not a store either (SQLite would take it for an empty database, and kvb
    store add would make a new store of what may be a store cut to nothing), unless a kvb is
    creating the store in it. listed: the message is for kvb store check, which lists the
    problems itself."""
    if _stays_empty(path):
        raise empty_file(path)
    for attempt in (1, 2):
        try:
            _look(path, full, listed)
            return
        except sqlite3.OperationalError as e:
            if attempt == 1 and getattr(e, "sqlite_errorcode", None) == READONLY_ROLLBACK:
                try:
                    _roll_back_hot_journal(path)
                except sqlite3.Error as err:
                    raise classify(path, err, listed) from None
                continue
            raise classify(path, e, listed) from None
        except sqlite3.Error as e:
            raise classify(path, e, listed) from None


def check(path: str) -> list[str]:
    """Every problem PRAGMA integrity_check finds ([] when none), through a read-only
    connection; quick_check's when integrity_check stops at a page it cannot read (its index
    comparison does); raises as examine() does for a file SQLite cannot read at all."""
    examine(path, full=False, listed=True)
    try:
        con = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT)
        try:
            try:
                return problems(con, "integrity_check")
            except sqlite3.DatabaseError:
                return problems(con, "quick_check")
        finally:
            con.close()
    except sqlite3.Error as e:
        raise classify(path, e, listed=True) from None
