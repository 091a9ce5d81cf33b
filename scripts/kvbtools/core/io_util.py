"""Debian's Python modules (python3-psycopg, python3-matplotlib), imported when a command needs
one."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from kvbtools.core.errors import UsageError


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
