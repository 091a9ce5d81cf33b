"""kvb's version: kvbench's version and this checkout's commit, as `kvbench --version` prints
them ('0.1.0 (git 2d1af44750b4)'). Apart from core/host.py so that `kvb --version` loads two
small modules: the commit is read from the repository's files (HEAD, the ref it names, or
packed-refs; a linked worktree's .git file leads to both), and git is asked only when they
say nothing usable."""
from __future__ import annotations

import os
import re
import subprocess

# scripts/kvbtools/core/version.py -> the repository
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * 3))
HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def _git_dirs(root: str) -> tuple[str, str]:
    """(the git directory of this checkout, the common one: the same but in a linked
    worktree, whose .git is a file naming its own directory inside the main one's)."""
    dotgit = os.path.join(root, ".git")
    git = dotgit
    if os.path.isfile(dotgit):
        named = _read(dotgit)
        if not named.startswith("gitdir: "):
            raise OSError(f"{dotgit}: not a gitdir file")
        git = os.path.join(root, named[len("gitdir: "):])
    common = git
    if os.path.isfile(os.path.join(git, "commondir")):
        common = os.path.normpath(os.path.join(git, _read(os.path.join(git, "commondir"))))
    return git, common


def head_from_files(root: str) -> str | None:
    """The commit HEAD names, from the files alone; None when they do not say (no repository,
    another ref store)."""
    try:
        git, common = _git_dirs(root)
        head = _read(os.path.join(git, "HEAD"))
        if HEX.fullmatch(head):
            return head
        if not head.startswith("ref: "):
            return None
        ref = head[len("ref: "):]
        for base in (git, common):
            if os.path.isfile(os.path.join(base, ref)):
                value = _read(os.path.join(base, ref))
                return value if HEX.fullmatch(value) else None
        for line in _read(os.path.join(common, "packed-refs")).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref and HEX.fullmatch(parts[0]):
                return parts[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _head_from_git(root: str) -> str:
    try:
        p = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=10)
        return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def tool_version(root: str = ROOT) -> str:
    """'0.1.0 (git 2d1af44750b4)'. The version is the project() line of CMakeLists.txt (one
    fact, one place); the commit is 'unknown' outside a git checkout."""
    version = "unknown"
    try:
        m = re.search(r"project\(\s*kvbench\s+VERSION\s+([0-9.]+)",
                      _read(os.path.join(root, "CMakeLists.txt")))
        version = m.group(1) if m else version
    except OSError:
        pass
    commit = head_from_files(root) or _head_from_git(root)
    return f"{version} (git {commit[:12]})"
