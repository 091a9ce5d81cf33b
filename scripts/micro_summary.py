#!/usr/bin/env python3
"""Kept for scripts/quickstart.sh until it calls `scripts/kvb micro` (docs/micro.md)."""
import os, sys  # noqa: E401
kvb = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kvb")
os.execv(sys.executable, [sys.executable, kvb, "micro", *sys.argv[1:]])
