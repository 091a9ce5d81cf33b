"""kvbtools' third layer: figures and HTML pages. Imports core and measure (docs/kvbtools.md)."""
