"""Python tools around kvbench's JSON results (standard library only)."""
