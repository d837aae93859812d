"""A/B mode: base and head booted in pairs until gate/ab/ decides.

``comparison.py`` runs one depth's comparison and records it into results.json after every
pair; ``pairs.py`` boots the pairs (each by ``boots.py``) and keeps the comparison's state,
``AbRun``; ``budget.py`` is A/B's share of the run's time estimate.
"""
