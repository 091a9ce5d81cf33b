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
removes) nothing; what was stored or removed is printed after the commit. Every kvb command
that opens an SQLite store (these, history, trend, export, compare --store) first runs PRAGMA
quick_check through a read-only connection: a damaged store (or a file that is not a kvbench
store) is refused with exit 2 and left byte for byte as it was. Those that only read (info, get,
check, rm --dry-run, history, ...) keep the connection read-only. A store this user may not read
or write: "permission denied" and the path, exit 1.
"""
from __future__ import annotations

from typing import Any

from kvbtools.commands import command
from kvbtools.commands.parsers.groups import add_store_arguments

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


def register(subparsers: Any) -> None:
    p = command.add(subparsers, "store", __doc__, None)
    sub = p.add_subparsers(dest="store_command", required=True)
    a = sub.add_parser("add", help="store kvbench / kvbench_micro JSON documents")
    a.add_argument("files", nargs="+", metavar="FILE.json")
    a.add_argument("--attr", action="append", metavar="NAME=VALUE",
                   help="one more attribute of these runs (repeat), e.g. "
                        "lib.rocksdb.commit=SHA or ci.job=1234")
    add_store_arguments(a)
    a.set_defaults(func="add")
    r = sub.add_parser("rm", help="remove runs, by id or NAME=VALUE selectors",
                       description=RM_DESCRIPTION)
    r.add_argument("runs", nargs="+", metavar="RUN|NAME=VALUE")
    r.add_argument("--dry-run", action="store_true",
                   help="list the runs that would be removed, and remove nothing")
    add_store_arguments(r)
    r.set_defaults(func="rm")
    i = sub.add_parser("info", help="what the store holds")
    add_store_arguments(i)
    i.set_defaults(func="info")
    c = sub.add_parser("check", help="PRAGMA integrity_check of an SQLite store: exit 0 when "
                                     "whole, 2 with every problem listed when damaged")
    add_store_arguments(c)
    c.set_defaults(func="check")
    g = sub.add_parser("get", help="print a stored document as it was added")
    g.add_argument("hash", help="the document's hash, or its first characters")
    add_store_arguments(g)
    g.set_defaults(func="get")
