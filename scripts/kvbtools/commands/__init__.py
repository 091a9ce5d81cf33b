"""kvbtools' top layer: one thin module per kvb subcommand (arguments, calls, exit status) and the
dispatcher, cli.py. Imports every layer below it (docs/kvbtools.md)."""
