"""What the Python tests of kvb share: the command line ctest gives them."""
from __future__ import annotations

import argparse
import sys
import unittest

# The test's arguments (--kvbench BIN, ...), filled in by main().
ARGS = argparse.Namespace()


def main(*flags: str) -> None:
    """Reads the required --FLAG VALUE of each of `flags` into ARGS and runs the tests of
    __main__ with the rest of the command line."""
    parser = argparse.ArgumentParser()
    for flag in flags:
        parser.add_argument(f"--{flag}", required=True)
    known, rest = parser.parse_known_args()
    ARGS.__dict__.update(vars(known))
    unittest.main(module="__main__", argv=[sys.argv[0], *rest], verbosity=2)
