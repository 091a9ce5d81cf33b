"""Small helpers shared by the store's commands: atomic text files, Debian's Python modules."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from kvbtools.core.errors import RunError, UsageError


def write_text(path: str, text: str) -> None:
    """Writes PATH.tmp and renames it, so a reader never sees half a file."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise RunError(f"cannot write {path}: {e.strerror}") from None


def import_debian(module: str, package: str, purpose: str) -> Any:
    """Imports one of Debian's python3-* modules, or raises UsageError naming the package (and,
    when it is installed for /usr/bin/python3 but this is another interpreter, saying so)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        hint = ""
        if os.path.exists(f"/usr/lib/python3/dist-packages/{module}") and \
                not sys.executable.startswith("/usr/bin/"):
            hint = (f"; it is installed for /usr/bin/python3, not for {sys.executable}: run "
                    "`/usr/bin/python3 scripts/kvb ...`")
        raise UsageError(f"{purpose} needs {module}: apt-get install {package}" + hint) from None
