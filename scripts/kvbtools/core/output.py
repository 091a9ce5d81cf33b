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

A command checks every path it was given to write with check_writable (a file) or
check_directory (a directory it fills) before its work: a path that cannot be written at all (its
directory missing or not writable, a directory where a file is asked for) is bad input, exit 2
before anything is run or printed (docs/cli.md, "kvb: exit status").
"""
from __future__ import annotations

import errno
import os
import re
import stat
import sys
import time

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
