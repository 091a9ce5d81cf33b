"""kvbtools' second layer: presets, builds, sources, rounds, runners, callgrind, the bisect
machinery. Imports core only (docs/kvbtools.md)."""
