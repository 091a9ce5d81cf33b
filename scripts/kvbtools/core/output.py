"""The one way kvb writes a file: JSON documents, HTML pages, SVG and PNG figures, CSV, Bencher
JSON, .hgrm, the files of a results directory (docs/kvbtools.md). kvbench's own writer follows
the same rule (src/common/file_output.h):

- a regular file, or none, is replaced atomically: PATH.tmp in the same directory, renamed over
  PATH, so a reader sees the old file or the new one, never half of one;
- a symbolic link is followed to the end of its chain and that target replaced the same way: the
  link stays;
- `-` and /dev/stdout are standard output, written after what kvb printed there (/dev/stderr,
  /dev/fd/N likewise their descriptor); anything else that exists (a device such as /dev/null, a
  FIFO) is written in place, never replaced by a regular file;
- a failure (no space, /dev/full, a read-only directory) raises RunError, "cannot write PATH:
  REASON" (exit 1, one line), removes the temporary file and leaves what was at PATH as it was.

A command checks every path it was given to write before its work, in the first line of its
run(), with check_outputs: each output against every input (result files, a results directory,
the store, a binary it runs) and against the other outputs, by the file the paths resolve to, not
by their spelling (links followed, hard links by device and inode, `./a` and `a` alike; a file
not there yet by its resolved directory and name). A collision is bad input, exit 2, with
nothing read, run or written: `--html names the store S`, `--json names the same file as input
B.json`. Then each output must be writable at all (check_writable, a file; check_directory, a
directory it fills): its directory missing or not writable, a directory where a file is asked
for, is bad input too (docs/cli.md, "kvb: exit status").
"""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import shutil
import stat
import sys
import time
from typing import Sequence, Union

from kvbtools.core.errors import RunError, UsageError
from kvbtools.core.host import ROOT

STDOUT = "-"
MAX_LINKS = 40  # as the kernel's own limit (ELOOP)
FD_DIRS = ("/proc/self/fd/", "/dev/fd/")


def _fail(path: str, e: OSError | int) -> RunError:
    reason = os.strerror(e) if isinstance(e, int) else (e.strerror or str(e))
    return RunError(f"cannot write {path}: {reason}")


def descriptor(path: str) -> int | None:
    """The descriptor of this process that `path` names through its links (/dev/stdout ->
    /proc/self/fd/1: 1), or None. Written through it, output lands where that descriptor is,
    after what the process wrote there already, not over it."""
    if path == STDOUT:
        return 1
    p = path
    for _ in range(MAX_LINKS + 1):
        for d in FD_DIRS:
            if p.startswith(d) and p[len(d):].isdigit():
                return int(p[len(d):])
        try:
            p = os.path.join(os.path.dirname(p), os.readlink(p))
        except OSError:
            return None
    return None


def resolve(path: str) -> tuple[str, bool]:
    """(the file to write, whether to write it in place) for `path`, by the rule above."""
    if path == STDOUT:
        return path, True
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as e:
        raise _fail(path, e) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise RunError(f"cannot write {path}: is a directory")
    if st is not None and (not stat.S_ISREG(st.st_mode) or path.startswith("/proc/")):
        return path, True
    p = path
    for _ in range(MAX_LINKS + 1):
        try:
            link = os.readlink(p)
        except OSError as e:
            if e.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
                return p, False  # not a link, or nothing there yet: this is the file
            raise _fail(path, e) from None
        p = os.path.join(os.path.dirname(p), link)
        if p.startswith("/proc/"):  # /dev/stdout -> /proc/self/fd/1: an open file, not a name
            return path, True
    raise _fail(path, errno.ELOOP)


def _shown_dir(path: str) -> str:
    return os.path.dirname(path) or "."


def _check_parent(where: str, parent: str) -> None:
    """UsageError unless `parent` is a directory this process may create files in."""
    if not os.path.isdir(parent):
        raise UsageError(f"{where}: {parent} is not a directory" if os.path.exists(parent) else
                         f"{where}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{where}: directory {parent} is not writable")


def check_writable(path: str | None, flag: str) -> None:
    """Whether write_text(path, ...) can work, before any work: UsageError `FLAG PATH: why` for
    a path whose directory does not exist or is not writable, a directory, a device or FIFO that
    is not writable. Nothing (or `-`, /dev/stdout) passes; so does a file that exists, since it
    is replaced, not written into."""
    if not path or descriptor(path) is not None:
        return
    where = f"{flag} {path}"
    try:
        st: os.stat_result | None = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # nothing there yet (or a file on the way): the directory check says which
    except OSError as e:
        raise UsageError(f"{where}: {e.strerror or e}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{where}: is a directory; give a file name")
    try:
        target, in_place = resolve(path)
    except RunError as e:
        raise UsageError(f"{where}: {str(e).rsplit(': ', 1)[-1]}") from None
    if in_place:  # a device or FIFO, written where it is
        if not os.access(target, os.W_OK):
            raise UsageError(f"{where}: not writable")
        return
    _check_parent(where, _shown_dir(target))


def check_directory(path: str | None, flag: str) -> None:
    """Whether `path` can be the directory a command fills (make_dirs, then files in it): an
    existing directory that is writable, or a new one in an existing, writable directory.
    UsageError `FLAG PATH: why` otherwise, before any work."""
    if not path:
        return
    where = f"{flag} {path}"
    if os.path.isdir(path):
        if not os.access(path, os.W_OK | os.X_OK):
            raise UsageError(f"{where}: directory is not writable")
        return
    if os.path.lexists(path):
        raise UsageError(f"{where}: not a directory")
    _check_parent(where, _shown_dir(os.path.normpath(path)))


# ---- outputs apart from inputs ------------------------------------------------------------------

# A path a command names, as check_outputs takes it: (ROLE, PATH) for a file; (ROLE, PATH,
# ENTRIES) for a directory, ENTRIES being the names (fnmatch patterns, relative to it, `*`
# crossing `/`) of what the command writes in it (an output) or reads from it (an input); ()
# when all it writes there is new (--results-dir: a fresh subdirectory). ROLE names it in a
# message: a flag (`--html`), `input` (a result file), `the store` (a role that starts with
# "the " is named as itself). A PATH of None or "" is left out.
Named = Union[tuple[str, "str | None"], tuple[str, "str | None", tuple[str, ...]]]


class _Spot:
    """One named path, resolved: `key` is the file it names (device and inode when it exists,
    else its real path), `real` where it lies (os.path.realpath: links followed, dangling ones
    as far as they go)."""

    def __init__(self, named: Named, key: tuple[object, ...], real: str) -> None:
        self.role, self.path = named[0], str(named[1])
        self.entries: tuple[str, ...] | None = named[2] if len(named) > 2 else None  # type: ignore[misc]
        self.key, self.real = key, real

    def shown(self) -> str:
        return f"{self.role} {self.path}"

    def holds(self, other: "_Spot") -> bool:
        """Whether `other` lies in this directory among the entries it writes or reads."""
        if not self.entries or not other.real.startswith(self.real.rstrip("/") + "/"):
            return False
        rel = os.path.relpath(other.real, self.real)
        return any(fnmatch.fnmatchcase(rel, p) for p in self.entries)


def _spot(named: Named) -> _Spot | None:
    """`named` resolved; None for a path left out, standard output, a descriptor, a device or a
    FIFO (written in place, never replaced: two roles may share /dev/null)."""
    path = named[1]
    if not path or descriptor(path) is not None:
        return None
    real = os.path.realpath(path)
    try:
        st = os.stat(path)
    except OSError:
        return _Spot(named, ("path", real), real)  # nothing there yet: its directory and name
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) or real.startswith("/proc/"):
        return None
    return _Spot(named, ("inode", st.st_dev, st.st_ino), real)


def _collision(out: _Spot, other: _Spot, other_writes: bool) -> str | None:
    """Why output `out` and `other` (an input, or an output when `other_writes`) collide, or
    None."""
    if out.key == other.key:
        what = "directory" if other.entries is not None else "file"
        named = out.role if out.path == other.path else out.shown()
        return f"{named} names " + (other.shown() if other.role.startswith("the ")
                                    else f"the same {what} as {other.shown()}")
    if out.holds(other):
        return f"{out.shown()} would write over {other.shown()}"
    if other.holds(out):
        return (f"{other.shown()} would write over {out.shown()}" if other_writes else
                f"{out.shown()} is one of the files read from {other.shown()}")
    return None


def check_outputs(outputs: Sequence[Named], inputs: Sequence[Named] = ()) -> None:
    """The rule of the module's doc, before any work: UsageError naming both roles when an
    output is an input or another output, or when a directory holds among its entries a file
    another role names; then check_writable or check_directory of each output."""
    outs = [s for s in map(_spot, outputs) if s is not None]
    ins = [s for s in map(_spot, inputs) if s is not None]
    for i, out in enumerate(outs):
        for other, writes in [(x, False) for x in ins] + [(x, True) for x in outs[:i]]:
            why = _collision(out, other, writes)
            if why:
                raise UsageError(why)
    for named in outputs:
        (check_directory if len(named) > 2 else check_writable)(named[1], named[0])


def write_bytes(path: str, data: bytes) -> None:
    """Writes `data` to `path` by the rule above."""
    fd = descriptor(path)
    if fd is not None:
        _write_descriptor(path, fd, data)
        return
    target, in_place = resolve(path)
    if in_place:
        _write_in_place(path, target, data)
    else:
        _replace(path, target, data)


def write_text(path: str, text: str) -> None:
    """Writes `text` (UTF-8) to `path` by the rule above."""
    write_bytes(path, text.encode("utf-8"))


def make_dirs(path: str) -> None:
    """Creates directory `path` and its parents unless they exist; RunError when it cannot."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise RunError(f"cannot create the directory {path}: {e.strerror or e}") from None


def _write_all(path: str, fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as e:
        raise _fail(path, e) from None


def _write_descriptor(path: str, fd: int, data: bytes) -> None:
    sys.stdout.flush()  # what print() wrote comes first
    sys.stderr.flush()
    _write_all(path, fd, data)


def _write_in_place(path: str, target: str, data: bytes) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as e:
        raise _fail(path, e) from None
    try:
        _write_all(path, fd, data)
    finally:
        os.close(fd)


def _replace(path: str, target: str, data: bytes) -> None:
    tmp = target + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise _fail(path, e) from None


def shown(path: str) -> str:
    """A path as messages show it: relative to the current directory when it is below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


# ---- results directories: kvb matrix, versions, bisect and studies ------------------------------

def utc_stamp() -> str:
    return time.strftime("%Y%m%dT%H%MZ", time.gmtime())


def new_results_dir(kind: str, what: str, base: str | None = None) -> str:
    """results/<kind>-<UTC time>-<what>/, made fresh: a -2, -3... suffix instead of reusing."""
    parent = base or os.path.join(ROOT, "results")
    make_dirs(parent)
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "_", what)[:80]
    stem = os.path.join(parent, f"{kind}-{utc_stamp()}-{safe}")
    path, i = stem, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            i += 1
            path = f"{stem}-{i}"
        except OSError as e:
            raise RunError(f"cannot create the directory {path}: {e.strerror or e}") from None


def write_summary(outdir: str, text: str) -> None:
    """summary.txt: how the run that owns `outdir` ended, in a sentence or a few lines."""
    when = time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())
    write_text(os.path.join(outdir, "summary.txt"), f"{when}\n{text.rstrip()}\n")


# ---- lines on the terminal: what kvb is doing -------------------------------------------------

def progress(msg: str) -> None:
    """'kvb: MSG' on standard error (a status line shown is cleared first)."""
    end_status()
    print(f"kvb: {msg}", file=sys.stderr, flush=True)


class _Status:
    shown = False      # a status line is on the terminal, not yet ended


def status(msg: str) -> None:
    """A line the next one replaces (each run of a round): on a terminal (stderr a tty) it is
    rewritten in place, cut to the terminal's width; elsewhere nothing is written, and the line
    each round ends with says what its runs did."""
    if not sys.stderr.isatty():
        return
    width = shutil.get_terminal_size((100, 24)).columns - 1
    sys.stderr.write(f"\r\033[Kkvb: {msg}"[:width + 4])  # + the 4 characters of \r\033[K
    sys.stderr.flush()
    _Status.shown = True


def end_status() -> None:
    """Clears the status line, if one is shown, so what follows starts on a clean line."""
    if _Status.shown:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
        _Status.shown = False
