"""kvb bisect's machinery (docs/compare.md, docs/placement.md), by phase and record:

  search.py     one range's search: what it knows and how it builds, measures and counts
  endpoints.py  old against new: is old -> new the change looked for?
  steps.py      git's bisection, each commit judged like old, like new or uncertain
  multistep.py  a step of several candidates (multisection), measured in one series
  sections.py   how many candidates a step measures (the cost model), which, what they leave
  agreement.py  the counts decide what time could not, where they witness the same change
  confirm.py    the culprit against its parent, with its share of the change
  ranges.py     the ranges around a culprit (--all-steps), the CPU and canary of the bisect
  series.py     a series of commits measured on the engine (a plan, its runs, its judgement)
  judge.py      the three judgements on paired rounds
  records.py    the finished series: steps.jsonl's lines, bisect.json's records
  state.py      state.json: what the bisect looks for, its mode, what it watches and spent
  trees.py      the workspace: a worktree per commit, builds, relinks, runs, compiled sources
  witness.py    instruction counts, the second witness
"""
