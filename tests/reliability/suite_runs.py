"""Run the shipped perf suite as a user would, in a subprocess this test controls.

Every run gets its own directory, its own temporary directory and a unique tag in its
environment (tests/e2e/conftest.py's TAG_ENV): every process it starts (pytest, xdist workers,
servers, watchdogs) inherits the tag, so what is left afterwards can be counted exactly, even
on a machine where other suites run simulators too. An optional action runs while pytest does
(send a signal, kill a worker, look at the server).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import msgspec
import psutil
import pytest

from pytest_specperf.results.schema import DepthRun, RunResults
from tests.support.data import REPO
from tests.support.e2e import FAST_ARGS_WITH_PLOTS, TAG_ENV, sim_processes

# Every run carries this key in SPECPERF_API_KEY; it must never show up anywhere.
API_KEY = f"sk-reliability-{uuid.uuid4().hex}"
PROFILE = "qwen3.5-122b-a10b-fp8-tp4-mtp"
HARDWARE = "sim-x10"  # FAST_ARGS_WITH_PLOTS runs the simulator at speedup 10
RUN_TIMEOUT_S = 150.0
LEFTOVER_GRACE_S = 15.0
_LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")
# `python -m pytest ARGS` as a terminal's foreground process: SIGINT at its default. Started
# in the background by a shell without job control (nohup ... &), the test run ignores SIGINT
# and so would the runs it starts (exec keeps an ignored signal ignored): no Ctrl-C to test.
FOREGROUND = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'pytest', *sys.argv[1:]])"
)


@dataclass
class RunContext:
    """What an action sees while pytest runs."""

    proc: subprocess.Popen[bytes]
    workdir: Path
    tag: str
    probe: dict[str, Any]

    @property
    def out_dir(self) -> Path:
        return self.workdir / ".specperf"


Action = Callable[[RunContext], None]


@dataclass
class SuiteRun:
    """A finished run: exit status, output, what it left behind."""

    workdir: Path
    returncode: int
    output: str
    wall_s: float
    leftovers: list[str]
    probe: dict[str, Any] = field(default_factory=dict)

    @property
    def out_dir(self) -> Path:
        return self.workdir / ".specperf"

    @property
    def baselines_dir(self) -> Path:
        return self.workdir / "baselines"

    def results(self) -> RunResults:
        """results.json, decoded against the results schema (raises if invalid)."""
        return msgspec.json.decode((self.out_dir / "results.json").read_bytes(), type=RunResults)

    def depth_run(self, depth: int) -> DepthRun:
        """results.json's run of steps=``depth``; fails the test when it has none."""
        run = self.results().depth(depth)
        assert run is not None, f"results.json has no run of steps={depth}"
        return run

    def baseline_files(self) -> list[Path]:
        return sorted(self.baselines_dir.rglob("*.json"))

    def server_ports(self) -> list[int]:
        ports: set[int] = set()
        for log in self.out_dir.glob("server-steps*.log"):
            ports.update(int(p) for p in _LISTENING.findall(log.read_text(errors="replace")))
        return sorted(ports)

    def outcomes(self) -> dict[str, int]:
        return pytest.RunResult.parse_summary_nouns(self.output.splitlines())

    def artifacts(self) -> list[Path]:
        return [p for p in self.workdir.rglob("*") if p.is_file()]


def tagged_processes(tag: str) -> list[psutil.Process]:
    """Every live process whose environment carries the tag (zombies excluded)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get(TAG_ENV) == tag:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def describe(proc: psutil.Process) -> str:
    try:
        return f"{proc.pid}: {' '.join(proc.cmdline())[:160]}"
    except psutil.Error:
        return f"{proc.pid}: (gone)"


def port_is_listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def prepare_workdir(workdir: Path, extra_files: dict[str, str] | None = None) -> Path:
    """A project holding the shipped perf_tests, an empty baselines dir and its own tmp."""
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "perf_tests", workdir / "perf_tests", dirs_exist_ok=True)
    (workdir / "baselines").mkdir(exist_ok=True)
    (workdir / "tmp").mkdir(exist_ok=True)
    # The fault scenarios need short points, not long ones: no minimum point duration.
    (workdir / "pytest.ini").write_text(
        "[pytest]\nspecperf_min_point_seconds = 0\n", encoding="utf-8"
    )
    for name, text in (extra_files or {}).items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return workdir


def suite_env(workdir: Path, tag: str) -> dict[str, str]:
    """The environment of a suite run in ``workdir``: its tag (to find its processes later),
    a TMPDIR of its own, no API key unless the run sets one."""
    env = {**os.environ, TAG_ENV: tag, "TMPDIR": str(workdir / "tmp")}
    env.pop("SPECPERF_API_KEY", None)
    return env


def start_in(
    workdir: Path, argv: Sequence[str], env: Mapping[str, str], output: IO[bytes]
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in ``workdir`` in a session of its own (its group can be signalled and
    checked as a whole), stdout and stderr into ``output``."""
    return subprocess.Popen(
        list(argv),
        cwd=workdir,
        env=dict(env),
        stdout=output,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def run_suite(
    workdir: Path,
    args: list[str],
    *,
    action: Action | None = None,
    api_key: str | None = API_KEY,
    timeout_s: float = RUN_TIMEOUT_S,
) -> SuiteRun:
    """``python -m pytest perf_tests FAST_ARGS_WITH_PLOTS args`` in ``workdir``; later args win."""
    tag = uuid.uuid4().hex
    env = suite_env(workdir, tag)
    if api_key is not None:
        env["SPECPERF_API_KEY"] = api_key
    argv = [sys.executable, "-c", FOREGROUND, "perf_tests", *FAST_ARGS_WITH_PLOTS, "-rsfE", *args]
    output_path = workdir / "pytest-output.txt"
    started = time.monotonic()
    probe: dict[str, Any] = {}
    action_error: BaseException | None = None
    with open(output_path, "wb") as output:
        proc = start_in(workdir, argv, env, output)
        try:
            if action is not None:
                try:
                    action(RunContext(proc, workdir, tag, probe))
                except Exception as exc:  # reported after cleanup
                    action_error = exc
            try:
                proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - started)))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                action_error = action_error or TimeoutError(f"pytest ran over {timeout_s:g} s")
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    wall = time.monotonic() - started
    leftovers = wait_for_leftovers(tag)
    if action_error is not None:
        raise AssertionError(f"run in {workdir} went wrong: {action_error!r}") from action_error
    return SuiteRun(
        workdir=workdir,
        returncode=proc.returncode,
        output=output_path.read_text(encoding="utf-8", errors="replace"),
        wall_s=wall,
        leftovers=leftovers,
        probe=probe,
    )


def wait_for_leftovers(tag: str) -> list[str]:
    """Tagged processes still alive after a grace period; they are then killed (ours)."""
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    left = tagged_processes(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = tagged_processes(tag)
    described = [describe(proc) for proc in left]
    for proc in left:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return described


# -- actions --------------------------------------------------------------------------------
def wait_for_first_point(ctx: RunContext, timeout_s: float = 60.0) -> None:
    """Until results.json holds a measured point (the sweep is under way)."""
    deadline = time.monotonic() + timeout_s
    path = ctx.out_dir / "results.json"
    while time.monotonic() < deadline:
        if ctx.proc.poll() is not None:
            raise AssertionError("pytest ended before the first point was measured")
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if any(run["points"] for run in data["runs"]):
                return
        time.sleep(0.05)
    raise AssertionError(f"no point in {path} after {timeout_s:g} s")


def ctrl_c(ctx: RunContext) -> None:
    """SIGINT to pytest's process group, as a terminal's Ctrl-C, once the sweep is under way."""
    wait_for_first_point(ctx)
    os.killpg(ctx.proc.pid, signal.SIGINT)


def sigterm(ctx: RunContext) -> None:
    """SIGTERM to pytest alone, as a CI job being cancelled, once the sweep is under way."""
    wait_for_first_point(ctx)
    ctx.proc.send_signal(signal.SIGTERM)


def kill_worker(ctx: RunContext) -> None:
    """SIGKILL the xdist worker that runs the server, once the sweep is under way."""
    wait_for_first_point(ctx)
    servers = sim_processes(ctx.tag)
    if len(servers) != 1:
        raise AssertionError(f"expected one running server, found {len(servers)}")
    worker = servers[0].parent()
    if worker is None or worker.pid == ctx.proc.pid or worker.parent() is None:
        raise AssertionError("the server's parent is not an xdist worker")
    ctx.probe["killed_worker"] = describe(worker)
    ctx.probe["server_pid"] = servers[0].pid
    worker.kill()


def look_at_server(ctx: RunContext) -> None:
    """Record the running server's command line, parent and listening addresses."""
    wait_for_first_point(ctx)
    servers = sim_processes(ctx.tag)
    if len(servers) != 1:
        raise AssertionError(f"expected one running server, found {len(servers)}")
    server = servers[0]
    parent = server.parent()
    ctx.probe["pytest_pid"] = ctx.proc.pid
    ctx.probe["cmdline"] = server.cmdline()
    ctx.probe["parent_pid"] = parent.pid if parent else None
    ctx.probe["parent_exe"] = parent.exe() if parent else None
    ctx.probe["listen"] = sorted(
        {
            conn.laddr.ip
            for conn in server.net_connections(kind="inet")
            if conn.status == psutil.CONN_LISTEN
        }
    )
    port = int(server.cmdline()[server.cmdline().index("--port") + 1])
    response = httpx.post(f"http://127.0.0.1:{port}/generate", json={"text": "x"}, timeout=10)
    ctx.probe["status_without_key"] = response.status_code
