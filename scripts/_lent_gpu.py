"""What the GPU proof scripts share (they run as ``python scripts/NAME.py``, so this folder is
on their import path)."""

from __future__ import annotations

import importlib.metadata


def plugin_flags() -> list[str]:
    """``-p pytest_specperf.plugin`` where the package is on PYTHONPATH, not installed (the
    lent H200's bundle); an installed plugin registers itself and must not be loaded twice."""
    installed = any(
        entry.value.startswith("pytest_specperf")
        for entry in importlib.metadata.entry_points(group="pytest11")
    )
    return [] if installed else ["-p", "pytest_specperf.plugin"]
