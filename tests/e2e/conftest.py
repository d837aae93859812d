"""End-to-end helpers: the shipped perf suite in a pytester directory, and process counts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
SIM_MODULE = "pytest_specperf.sim"
# Small and fast: enough tokens per request for stable rates, speedup for short points.
FAST_ARGS = [
    "--specperf-backend=sim",
    "--specperf-sim-speedup=10",
    "--specperf-max-new-tokens=200",
    "--specperf-concurrency=1,4",
    "--specperf-min-point-seconds=0",
    "-p",
    "no:cacheprovider",
    "-rsf",
]


TAG_ENV = "SPECPERF_E2E_TAG"


def sim_processes(tag: str | None = None) -> list[psutil.Process]:
    """Running simulator servers started under this test's tag (inherited through the env).

    The tag keeps other simulators on a shared machine out of the count.
    """
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


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def running_sim(no_leftover_sims: None) -> Iterator[str]:
    """A simulator at depth 3 started by the test itself (as a user's deployment would be)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            SIM_MODULE,
            "--model-path",
            "m",
            "--port",
            str(port),
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--sim-speedup",
            "10",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health_generate", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            pytest.fail("the simulator did not become healthy")
        yield url
    finally:
        proc.kill()
        proc.wait()
