"""The shipped perf suite in a pytester directory, and counting the simulators a test left.

Every process a test starts inherits TAG_ENV from `no_leftover_sims`, so simulators that
other suites run on a shared machine stay out of the count.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from pytest_specperf.server.launch import SIM_MODULE, build_launch
from pytest_specperf.server.process import launch
from pytest_specperf.server.profiles import DEFAULT_PROFILE, builtin_profiles
from tests.support.data import REPO

# Small and fast: enough tokens per request for stable rates, speedup for short points.
FAST_ARGS = [
    "--specperf-backend=sim",
    "--specperf-sim-speedup=10",
    "--specperf-max-new-tokens=200",
    "--specperf-concurrency=1,4",
    "--specperf-min-point-seconds=0",
    # These runs explore (most have no baseline): a gate that judged nothing does not fail
    # them. The tests of that rule run without it (tests/e2e/test_baseline_safety_e2e.py).
    "--specperf-allow-no-baseline",
    "-p",
    "no:cacheprovider",
    "-rsf",
]
TAG_ENV = "SPECPERF_E2E_TAG"


def sim_processes(tag: str | None = None) -> list[psutil.Process]:
    """Running simulator servers started under this tag (default: this test's)."""
    tag = tag or os.environ.get(TAG_ENV, "")
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if SIM_MODULE not in cmdline or "-m" not in cmdline:
            continue
        try:
            if proc.environ().get(TAG_ENV) == tag:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def suite_results(suite_dir: Path) -> dict[str, Any]:
    """The results.json a suite run in ``suite_dir`` left, as plain JSON."""
    loaded: dict[str, Any] = json.loads((suite_dir / ".specperf" / "results.json").read_text())
    return loaded


@pytest.fixture
def suite_dir(pytester: pytest.Pytester) -> Path:
    """A project directory holding the shipped perf_tests and an empty baselines directory."""
    shutil.copytree(REPO / "perf_tests", pytester.path / "perf_tests")
    (pytester.path / "baselines").mkdir()
    return pytester.path


@pytest.fixture
def no_leftover_sims(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tags every process the test starts; fails if a tagged simulator outlives the test."""
    monkeypatch.setenv(TAG_ENV, uuid.uuid4().hex)
    yield
    deadline = time.monotonic() + 10
    left: list[psutil.Process] = []
    while time.monotonic() < deadline:
        left = sim_processes()
        if not left:
            return
        time.sleep(0.2)
    pytest.fail(f"simulator processes left behind: {[p.pid for p in left]}")


@pytest.fixture
def running_sim(no_leftover_sims: None, tmp_path: Path) -> Iterator[str]:
    """The default profile's simulator at depth 3, started by the test itself (as a user's
    own deployment would be), through the suite's launch code."""
    profile = builtin_profiles()[DEFAULT_PROFILE]
    server = launch(
        lambda port: build_launch(profile, 3, backend="sim", port=port, sim_speedup=10),
        host="127.0.0.1",
        log_path=tmp_path / "running-sim.log",
        launch_timeout_s=30,
        api_key=None,
    )
    try:
        yield server.url
    finally:
        server.stop()
