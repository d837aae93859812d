"""What the GPU proof scripts share (they run as ``python lab/gpu/NAME.py``, so this folder is
on their import path)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def plugin_flags() -> list[str]:
    """``-p pytest_specperf.plugin`` where the package is on PYTHONPATH, not installed (the
    lent H200's bundle); an installed plugin registers itself and must not be loaded twice."""
    installed = any(
        entry.value.startswith("pytest_specperf")
        for entry in importlib.metadata.entry_points(group="pytest11")
    )
    return [] if installed else ["-p", "pytest_specperf.plugin"]


@dataclass(frozen=True)
class SuiteRun:
    exit_code: int
    seconds: float
    stdout: str


def run_suite(args: Sequence[str], log: Path) -> SuiteRun:
    """``python -m pytest`` of the suite with ARGS (the plugin loaded once, no cache, every
    skip and failure listed); its whole output is kept in LOG."""
    command = [sys.executable, "-m", "pytest", *plugin_flags(), "-p", "no:cacheprovider", "-rsf"]
    begun = time.monotonic()
    done = subprocess.run([*command, *args], capture_output=True, text=True, check=False)
    seconds = time.monotonic() - begun
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    return SuiteRun(done.returncode, seconds, done.stdout)
