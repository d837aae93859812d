"""Running one of the project's scripts (a study, a benchmark) as a user would: its own
process, its output captured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_script(
    script: Path, *arguments: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python SCRIPT ARGUMENTS``; fails the test if it runs past ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
