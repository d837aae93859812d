"""The verdict: baselines on disk, the floors and decisions, and the pytest-facing gate."""
