"""kvb's command lines: one module per command (and per dbbench subcommand) with its --help (the
module's docstring) and register(subparsers), and groups.py, the argument groups several share.
They import argparse, commands/command.py and each other, and of the layers below only modules
as light (core/errors.py, core/version.py, core/store_schema.py, core/deps_json.py): kvb imports
the chosen command's parser at every start, and its run module (commands/NAME.py) only when the
command runs (docs/kvbtools.md, "kvb's start")."""
