"""kvbtools' lowest layer: documents and loaders, schema, metrics, statistics, fingerprints, the
store, the one way to write a file. Imports nothing above it (docs/kvbtools.md)."""
