"""The shipped perf suite in a pytester directory, and counting the simulators a test left.

Every process a test starts inherits TAG_ENV from `no_leftover_sims`, so simulators that
other suites run on a shared machine stay out of the count.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from pytest_specperf.server.launch import SIM_MODULE, build_launch
from pytest_specperf.server.process import launch
from pytest_specperf.server.profiles import DEFAULT_PROFILE, builtin_profiles
from tests.support.data import REPO

# Small and fast: enough tokens per request for stable rates, speedup for short points.
FAST_ARGS_WITH_PLOTS = [
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
# The same without the plots, for the runs whose tests read no picture: drawing them took
# about 2 s of a 6 s run, 203 of about 1,090 worker-seconds of tests/e2e and tests/reliability
# (121 drawings, timed in write_plots, 2026-12-07). The reliability tests keep them: their
# signals land in the phase that writes them.
FAST_ARGS = [*FAST_ARGS_WITH_PLOTS, "--specperf-no-plots"]
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


def suite_project(path: Path) -> Path:
    """``path`` made a project holding the shipped perf_tests and an empty baselines directory."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "perf_tests", path / "perf_tests")
    (path / "baselines").mkdir()
    return path


@dataclass(frozen=True)
class SharedRun:
    """One suite run that several tests of a module read (a module-scoped fixture: the module
    is in tests/conftest.py's SHARED_RUN_MODULES, so one worker runs it once)."""

    path: Path  # the project it ran in: perf_tests, baselines/, .specperf/
    result: pytest.RunResult

    def results(self) -> dict[str, Any]:
        return suite_results(self.path)


def run_suite_once(
    project: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> SharedRun:
    """``python -m pytest ARGS`` in ``project`` as ``pytester.runpytest_subprocess`` runs it
    (its environment: no outer PYTEST_ADDOPTS, HOME in the project, no colours, the project
    first on PYTHONPATH, stdin closed), its processes tagged as `no_leftover_sims` tags a
    test's: fails if a simulator it started outlives it."""
    tag = uuid.uuid4().hex
    (project / "tmproot").mkdir(exist_ok=True)
    environ = {**os.environ, **(env or {})}
    for name in ("PYTEST_ADDOPTS", "TOX_ENV_DIR"):
        environ.pop(name, None)
    environ.update(
        {
            TAG_ENV: tag,
            "HOME": str(project),
            "USERPROFILE": str(project),
            "PY_COLORS": "0",
            "PYTEST_DEBUG_TEMPROOT": str(project / "tmproot"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(project), environ.get("PYTHONPATH")])),
        }
    )
    begun = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-mpytest", f"--basetemp={project / 'basetemp'}", *args],
        cwd=project,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    duration = time.monotonic() - begun
    deadline = time.monotonic() + 10
    while (left := sim_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for proc in left:
        proc.kill()
    assert not left, f"simulator processes left behind: {[p.pid for p in left]}"
    ret: int | pytest.ExitCode = done.returncode
    with contextlib.suppress(ValueError):  # pytester's way: an ExitCode where one applies
        ret = pytest.ExitCode(done.returncode)
    lines = done.stdout.splitlines(), done.stderr.splitlines()
    return SharedRun(project, pytest.RunResult(ret, *lines, duration=duration))


# The suite's own steps-3 baseline file of FAST_ARGS's runs, in a project.
RECORDED = Path("baselines") / DEFAULT_PROFILE / "sim-x10" / "steps-3.json"


@pytest.fixture(scope="session")
def shared_plain_run(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`pytest perf_tests --spec-steps=3` (FAST_ARGS) with no baseline, as a CI job runs it
    ($GITHUB_STEP_SUMMARY holding what an earlier step wrote): run once, read by several tests
    (tests/e2e/test_suite_e2e.py, test_report_artifacts.py)."""
    project = suite_project(tmp_path_factory.mktemp("plain-run"))
    summary = project / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    return run_suite_once(
        project,
        "perf_tests",
        "--spec-steps=3",
        *FAST_ARGS,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )


@pytest.fixture(scope="session")
def shared_three_depths(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`pytest perf_tests --spec-steps=1,2,3` (FAST_ARGS_WITH_PLOTS) with no baseline, in a CI
    job with an empty $GITHUB_STEP_SUMMARY: run once, read by tests/e2e/test_suite_e2e.py (a
    server per depth, the trade-off) and test_report_artifacts.py (every artifact of a run of
    depths, the plots among them)."""
    project = suite_project(tmp_path_factory.mktemp("three-depths"))
    summary = project / "step-summary.md"
    return run_suite_once(
        project,
        "perf_tests",
        "--spec-steps=1,2,3",
        *FAST_ARGS_WITH_PLOTS,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )


@pytest.fixture(scope="session")
def shared_recording(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """`pytest perf_tests --spec-steps=3 --specperf-update-baselines -v --junitxml=junit.xml`
    (FAST_ARGS) into an empty baselines directory, run once: tests read its output and gate
    against a copy of what it recorded (tests/e2e/test_suite_e2e.py, test_pytest_ecosystem.py)."""
    project = suite_project(tmp_path_factory.mktemp("recorded-run"))
    return run_suite_once(
        project,
        "perf_tests",
        "--spec-steps=3",
        *FAST_ARGS,
        "--specperf-update-baselines",
        "-v",
        "--junitxml=junit.xml",
    )


def with_the_recorded_baseline(recording: SharedRun, project: Path) -> Path:
    """The recording's baselines copied into ``project``; the steps-3 file's path there."""
    assert recording.result.ret == 0, recording.result.stdout.str()
    shutil.copytree(recording.path / "baselines", project / "baselines", dirs_exist_ok=True)
    return project / RECORDED


@pytest.fixture
def suite_dir(pytester: pytest.Pytester) -> Path:
    """A project directory holding the shipped perf_tests and an empty baselines directory."""
    return suite_project(pytester.path)


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
