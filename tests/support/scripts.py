"""Running one of the project's scripts (a study, a benchmark) as a user would: its own
process, its output captured."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.support.data import REPO

NIGHTLY_DEMO = REPO / "lab" / "studies" / "nightly_demo.py"


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


def run_in_repo(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python ARGUMENTS`` from the repository root, this checkout first on the import path
    (also for the processes it starts); fails the test if it runs past ``timeout`` seconds."""
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )


def run_slowdown_nights(
    work: Path, *arguments: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """lab/studies/nightly_demo.py's six simulator nights into ``work``, throughput halved from
    night 4; ``arguments`` add its other options (depths, concurrency, tokens, ...)."""
    return run_in_repo(
        str(NIGHTLY_DEMO),
        "--scenario=slowdown",
        "--amount=0.5",
        "--nights=6",
        "--change-night=4",
        "--repeats=1",
        "--min-point-seconds=0.2",
        *arguments,
        f"--work={work}",
        timeout=timeout,
    )


def load_script(script: Path) -> ModuleType:
    """A script imported as a module, to test its functions: its folder on the import path
    while it loads (as when run: its sibling modules import), and registered under its name
    (a dataclass in it looks its module up there)."""
    spec = importlib.util.spec_from_file_location(script.stem, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(script.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(script.parent))
    return module
