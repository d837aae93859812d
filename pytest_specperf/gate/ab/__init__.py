"""A/B mode's statistics: base and head booted in pairs on one runner, judged after every pair.

Pure functions, no I/O, no pytest, no server: run/ab/ boots the pairs and keeps the
comparison's state; this package decides. The unit of analysis is the pair of boots (one base
boot, one head boot, measured back to back): in each pair and for each point, the change is
the mean log tok/s of head's repeats less base's; pooled per depth, it is the mean of the
points' changes. Over pairs these changes are independent draws, so their spread *is* the
boot-to-boot noise (plus what is left of the within-boot noise): it is measured, never
assumed, and an interval over pairs carries it.

- ``verdict.py``: the look after each pair, its verdict and every figure behind it;
- ``estimate.py``: the pairs, each point's change in a pair, the estimate over pairs with its
  repeated intervals, on the boundaries of ``sequential.py`` (Lan-DeMets spending);
- ``prior.py``: with the runner's history, a prior for the pair spread;
- ``stalls.py``: a sample that stalled, left out before the estimate or kept, named either way;
- ``undecided.py``: what to change when a comparison ends undecided.

docs/explanation/ab-gating.md gives the design and the measurements behind its choices.
"""
