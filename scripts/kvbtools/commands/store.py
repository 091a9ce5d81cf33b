"""kvb store: keep every kvbench and kvbench_micro result in one place (docs/history.md).

  kvb store add FILE.json...   store documents: every measurement, its series key, its
                               attributes and the document itself (adding one again adds nothing)
  kvb store rm RUN|NAME=VALUE... [--dry-run]
                               remove runs: by id (the document hash kvb store add and kvb
                               history print, or its first 6+ characters) and/or by NAME=VALUE
                               selectors, as kvb compare --store and --filter take them
                               (engine=memory, host=ci-3, commit=SHA, kind=gbench, ...); ids and
                               selectors together: the named runs that match every selector
  kvb store info               what the store holds (an SQLite file: after PRAGMA quick_check)
  kvb store check              PRAGMA integrity_check of an SQLite store: every problem found
  kvb store get HASH           print a stored document as it was added

Where: --store PATH (an SQLite file) or --store postgresql://... (a PostgreSQL database shared by
several machines, through Debian's python3-psycopg), else $KVBENCH_STORE, else
results/kvbench.sqlite in the kvbench checkout. Every `kvb store add` and `kvb store rm` is one
transaction: two processes adding at once both get everything in, and a failure stores (or
removes) nothing; what was stored or removed is printed after the commit. Before either writes
to an SQLite file it runs PRAGMA quick_check through a read-only connection: a damaged store
(or a file that is not a kvbench store) is refused with exit 2 and left byte for byte as it was.
"""
from __future__ import annotations

import os
import sys
from typing import Any

from kvbtools.commands import command
from kvbtools.commands.arguments import add_store_arguments
from kvbtools.core import store_file, store_runs
from kvbtools.core.errors import UsageError
from kvbtools.core.store import add_files, location, open_store, parse_pairs, shown, sqlite_file


RM_DESCRIPTION = """Removes stored runs in one transaction and prints each one after the commit.
RUN: a run's id, its document hash or its first 6 or more characters (kvb store add, kvb history
and kvb export csv print it), naming exactly one run. NAME=VALUE: a selector as kvb compare
--store and --filter take them (docs/history.md, "Selectors"): engine, benchmark, role, row,
metric, kind (a run with such a series), host, preset, commit (by its first characters),
document=HASH, fingerprint=HASH, or any stored field (lib.rocksdb.version, workload.num, ci.job,
context.<path>, ...); every selector must hold. A field no stored run has is an error naming the
known ones (exit 2). Ids and selectors together remove the named runs that match every
selector. Nothing matching is an error (exit 2). Series and fingerprints left without runs go too. An SQLite store passes
PRAGMA quick_check first (docs/history.md)."""


# Each subcommand takes its few arguments as plain values (store: --store, None for the default).

def cmd_add(store: str | None, files: list[str], attrs: list[str] | None) -> int:
    add_files(files, store, parse_pairs(attrs, "--attr"))
    return 0


def cmd_rm(store: str | None, selected: list[str], dry_run: bool) -> int:
    ids, selectors = store_runs.split_arguments(selected)
    with open_store(store, write=True) as st:
        where = shown(st.loc)
        if dry_run:
            runs = store_runs.pick(st, ids, selectors)
        else:
            with st.write(exclusive=True) as tx:
                runs = store_runs.pick(st, ids, selectors)
                if runs:
                    store_runs.remove(st, runs)
                    tx.ok()
    if not runs:
        raise UsageError(f"no stored run in {where} matches {' '.join(selected)}: nothing was "
                         "removed")
    # Said only now that the transaction committed (or, --dry-run, that nothing will be).
    for r in runs:
        print(f"{'would remove' if dry_run else 'removed'} {r.describe()}")
    print(f"{len(runs)} run(s) " + ("would be removed (--dry-run: nothing was changed)"
                                    if dry_run else "removed") + f": {where}")
    return 0


def cmd_info(store: str | None) -> int:
    with open_store(store) as st:
        if st.dialect == "sqlite":
            store_file.examine(st.loc, full=True)
        n = {t: st.q(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in (
            "documents", "fingerprints", "series", "measurements")}
        span = st.q("SELECT MIN(run_utc), MAX(run_utc) FROM documents").fetchone()
        hosts = [r[0] for r in st.q("SELECT DISTINCT host FROM documents ORDER BY host")]
        print(f"store: {shown(st.loc)} ({st.dialect}, schema version {st.version()}"
              + (", PRAGMA quick_check ok)" if st.dialect == "sqlite" else ")"))
        print(f"documents: {n['documents']}" + (f", {span[0]} .. {span[1]}" if span[0] else ""))
        print(f"hosts: {', '.join(hosts) or '-'}")
        print(f"fingerprints: {n['fingerprints']}, series: {n['series']}, "
              f"measurements: {n['measurements']}")
    return 0


def cmd_check(store: str | None) -> int:
    where = sqlite_file(location(store))
    if where is None:
        with open_store(store) as st:
            print(f"store {shown(st.loc)}: a PostgreSQL database keeps its own pages (data "
                  "checksums, the amcheck extension); kvb store check reads SQLite files")
        return 0
    if not os.path.isfile(where):
        raise UsageError(f"no store file at {where}")
    # Not through open_store: a store too damaged to open is the one whose problems to list.
    findings = store_file.check(where)
    if findings:  # bad input (exit 2): the problems are the error's lines, on stderr
        raise store_file.damaged(where, f"{len(findings)} problem(s), listed below",
                                 findings=findings)
    with open_store(store) as st:  # refuses an SQLite database that is not a store
        print(f"store {where}: PRAGMA integrity_check ok (schema version {st.version()})")
    return 0


def cmd_get(store: str | None, digest_prefix: str) -> int:
    with open_store(store) as st:
        digest, raw = st.document(digest_prefix)
    sys.stdout.buffer.write(raw)
    sys.stdout.flush()
    return 0


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "store", __doc__, None)
    sub = p.add_subparsers(dest="store_command", required=True)
    a = sub.add_parser("add", help="store kvbench / kvbench_micro JSON documents")
    a.add_argument("files", nargs="+", metavar="FILE.json")
    a.add_argument("--attr", action="append", metavar="NAME=VALUE",
                   help="one more attribute of these runs (repeat), e.g. "
                        "lib.rocksdb.commit=SHA or ci.job=1234")
    add_store_arguments(a)
    a.set_defaults(func=lambda args: cmd_add(args.store, args.files, args.attr))
    r = sub.add_parser("rm", help="remove runs, by id or NAME=VALUE selectors",
                       description=RM_DESCRIPTION)
    r.add_argument("runs", nargs="+", metavar="RUN|NAME=VALUE")
    r.add_argument("--dry-run", action="store_true",
                   help="list the runs that would be removed, and remove nothing")
    add_store_arguments(r)
    r.set_defaults(func=lambda args: cmd_rm(args.store, args.runs, args.dry_run))
    i = sub.add_parser("info", help="what the store holds")
    add_store_arguments(i)
    i.set_defaults(func=lambda args: cmd_info(args.store))
    c = sub.add_parser("check", help="PRAGMA integrity_check of an SQLite store: exit 0 when "
                                     "whole, 2 with every problem listed when damaged")
    add_store_arguments(c)
    c.set_defaults(func=lambda args: cmd_check(args.store))
    g = sub.add_parser("get", help="print a stored document as it was added")
    g.add_argument("hash", help="the document's hash, or its first characters")
    add_store_arguments(g)
    g.set_defaults(func=lambda args: cmd_get(args.store, args.hash))
