"""Fault injection: SIGINT or SIGTERM at a chosen moment of a real run of the shipped suite.

One moment is one run of ``pytest perf_tests`` on the simulator (short points, baselines
recorded) that receives a signal some seconds after its header line appeared, and maybe a
second one shortly after (the hurried teardown). Whatever the moment, the run must end as
interrupted: exit status 2, no baseline file, no process of it left, results.json readable
and, once it existed when the signal was sent, marked interrupted without naming a point that
was already in it. Used by tests/reliability/test_signal_moments.py (CI) and
lab/studies/signal_soak.py (the long soak).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import psutil

from pytest_specperf.results.schema import RunResults
from tests.reliability.suite_runs import (
    FOREGROUND,
    prepare_workdir,
    start_in,
    suite_env,
    wait_for_leftovers,
)
from tests.support.e2e import FAST_ARGS_WITH_PLOTS

# Short points: 24 tokens a request, no minimum point duration (prepare_workdir's pytest.ini);
# the throughput tests only (a point each, then the depth's check), without the plugins that
# cost a second of imports each and add nothing here.
ARGS = [
    *FAST_ARGS_WITH_PLOTS,
    "--spec-steps=3",
    "--specperf-update-baselines",
    "--specperf-max-new-tokens=24",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:benchmark",
]
TESTS = "perf_tests/test_throughput.py"


def pytest_argv(*args: str) -> list[str]:
    """pytest as a terminal's foreground process (suite_runs.FOREGROUND)."""
    return [sys.executable, "-c", FOREGROUND, TESTS, *ARGS, *args]


HEADER = "specperf: profile="
# What a sender can see of a run, in order, and the longest delay after each at which the
# first signal is sent (about how long the phase that follows lasts on the simulator).
TRIGGERS = {
    "header": 0.1,  # configured, collected: before boot
    "results.json created": 1.0,  # the depth opened: boot and readiness
    "server ready": 0.3,  # warm-up and C=1
    "first point recorded": 0.1,  # between points, C=4
    "every point recorded": 0.5,  # the depth's check, teardown
    "server stopped": 1.5,  # writing results, report, plots, baselines
    "report printed": 0.3,  # the summary, unconfigure, the process's exit
}
RUN_TIMEOUT_S = 120.0
_NAMED_POINT = re.compile(r"^interrupted \([^)]*\) (?:while measuring|before) C=(\d+)")
_READY = "ready to roll"


@dataclass(frozen=True)
class Moment:
    """When to signal a run: ``delay_s`` after it reached ``trigger`` (one of TRIGGERS), then
    again after each of ``again_s`` while it still runs (its teardown, hurried)."""

    index: int
    signum: int
    trigger: str
    delay_s: float
    again_s: tuple[float, ...] = ()

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name


@dataclass
class Outcome:
    moment: Moment
    phase: str = "not sent"
    signals_sent: int = 0
    returncode: int | None = None
    baselines: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    results_problem: str | None = None
    output_tail: str = ""

    @property
    def sent(self) -> bool:
        return self.signals_sent > 0

    def problems(self) -> list[str]:
        """What this moment got wrong (empty: the run ended as an interrupted run must)."""
        if not self.sent:
            return []
        found = []
        if self.returncode != 2:
            found.append(f"exit status {self.returncode}, not 2 (interrupted)")
        if self.baselines:
            found.append(f"baseline written: {self.baselines}")
        if self.leftovers:
            found.append(f"processes left: {self.leftovers}")
        if self.results_problem:
            found.append(self.results_problem)
        return found

    def describe(self) -> str:
        m = self.moment
        sent = f"{m.signal_name} x{self.signals_sent}"
        return f"#{m.index} {sent} {m.delay_s:.2f} s after {m.trigger} (seen: {self.phase})"


def moments(count: int, seed: int, most_signals: int = 5) -> list[Moment]:
    """``count`` runs, their first signals spread over the triggers in turn, each at a random
    delay up to the trigger's own, SIGINT or SIGTERM at random, followed by up to
    ``most_signals - 1`` more at random gaps of 0.05-0.5 s (those land in the teardown of the
    interrupted run and hurry it)."""
    rng = random.Random(seed)
    names = list(TRIGGERS)
    chosen = []
    for index in range(count):
        trigger = names[index % len(names)]
        delay = rng.uniform(0.0, TRIGGERS[trigger])
        signum = rng.choice((signal.SIGINT, signal.SIGTERM))
        again = tuple(rng.uniform(0.05, 0.5) for _ in range(rng.randrange(most_signals)))
        chosen.append(Moment(index, signum, trigger, delay, again))
    return chosen


def _results(workdir: Path) -> dict[str, Any] | None:
    with contextlib.suppress(OSError, ValueError):
        data: dict[str, Any] = json.loads((workdir / ".specperf" / "results.json").read_text())
        return data
    return None


def _phase(workdir: Path, output: str) -> tuple[str, set[int]]:
    """Where the run is, seen from outside; the points results.json holds."""
    data = _results(workdir)
    if "specperf results" in output:
        return "printing the report, exiting", _points(data)
    if data is None:
        return "before boot", set()
    points = _points(data)
    lives = list((workdir / "tmp").glob("specperf-server-*/server.log"))
    if not points:
        ready = any(_READY in log.read_text(errors="replace") for log in lives)
        return ("warm-up or C=1" if ready else "boot and readiness"), points
    if len(points) == 1:
        return "between points or C=4", points
    if lives:
        return "depth checks or teardown", points
    return "writing results, report, plots, baselines", points


def _reached(trigger: str, workdir: Path, output: str) -> bool:
    """Whether the run, seen from outside, has reached ``trigger``."""
    out_dir = workdir / ".specperf"
    if trigger == "header":
        return HEADER in output
    if trigger == "results.json created":
        return (out_dir / "results.json").exists()
    if trigger == "server ready":
        logs = (workdir / "tmp").glob("specperf-server-*/server.log")
        return any(_READY in log.read_text(errors="replace") for log in logs)
    data = _results(workdir)
    points = [p for run in (data or {}).get("runs", []) for p in run.get("points", [])]
    if trigger == "first point recorded":
        return len(points) >= 1
    if trigger == "every point recorded":
        return len(points) >= 2
    if trigger == "server stopped":
        return (out_dir / "server-steps3.log").exists()
    if trigger == "report printed":
        return "specperf results" in output
    raise ValueError(trigger)


def _wait_for(
    trigger: str, proc: subprocess.Popen[bytes], workdir: Path, output: Path, timeout_s: float
) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            if _reached(trigger, workdir, output.read_text(errors="replace")):
                return True
        time.sleep(0.005)
    return False


def _points(data: dict[str, Any] | None) -> set[int]:
    runs = (data or {}).get("runs", [])
    return {p["concurrency"] for run in runs for p in run.get("points", [])}


def _wait_for_header(proc: subprocess.Popen[bytes], output: Path, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            if HEADER in output.read_text(errors="replace"):
                return True
        time.sleep(0.02)
    return False


def _exited(pid: int) -> bool:
    """Already a zombie: the run has ended (exit status decided), only not reaped yet. A kill
    of the group then still succeeds, and a signal that could not land would count as sent."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _send(proc: subprocess.Popen[bytes], signum: int) -> bool:
    """SIGINT to the process group (a terminal's Ctrl-C), SIGTERM to pytest (a CI cancel)."""
    if proc.poll() is not None or _exited(proc.pid):
        return False
    with contextlib.suppress(ProcessLookupError):
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        return True
    return False


def run_moment(moment: Moment, workdir: Path, extra_args: tuple[str, ...] = ()) -> Outcome:
    """Run the suite in ``workdir`` and signal it at ``moment``; what it left behind."""
    prepare_workdir(workdir)
    outcome = Outcome(moment)
    tag = uuid.uuid4().hex
    env = suite_env(workdir, tag)
    output_path = workdir / "pytest-output.txt"
    argv = pytest_argv(*extra_args)
    recorded_before: set[int] = set()
    results_existed = False
    with open(output_path, "wb") as output:
        proc = start_in(workdir, argv, env, output)
        try:
            if _wait_for(moment.trigger, proc, workdir, output_path, RUN_TIMEOUT_S):
                time.sleep(moment.delay_s)
                seen = output_path.read_text(errors="replace")
                outcome.phase, recorded_before = _phase(workdir, seen)
                results_existed = outcome.phase != "before boot"
                if _send(proc, moment.signum):
                    outcome.signals_sent = 1
                    for gap in moment.again_s:
                        time.sleep(gap)
                        if not _send(proc, moment.signum):
                            break
                        outcome.signals_sent += 1
            proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            outcome.results_problem = f"still running after {RUN_TIMEOUT_S:g} s"
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    outcome.returncode = proc.returncode
    outcome.leftovers = wait_for_leftovers(tag)
    outcome.baselines = _baselines(workdir)
    outcome.output_tail = output_path.read_text(errors="replace")[-3000:]
    if outcome.results_problem is None and outcome.sent:
        outcome.results_problem = _results_problem(workdir, results_existed, recorded_before)
    return outcome


def _results_problem(workdir: Path, existed: bool, recorded_before: set[int]) -> str | None:
    path = workdir / ".specperf" / "results.json"
    if not path.exists():
        return "results.json lost" if existed else None
    try:
        results = msgspec.json.decode(path.read_bytes(), type=RunResults)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"results.json unreadable: {exc}"
    if results.interrupted is None:
        return "results.json not marked interrupted"
    for run in results.runs:
        named = _NAMED_POINT.match(run.failure or "")
        if named and int(named.group(1)) in recorded_before:
            return f"names C={named.group(1)}, already in results.json: {run.failure}"
    return None


def clean_run_seconds(workdir: Path) -> tuple[float, int, list[str]]:
    """An uninterrupted run: seconds from its header to its end, exit status, baselines."""
    prepare_workdir(workdir)
    output_path = workdir / "pytest-output.txt"
    env = suite_env(workdir, uuid.uuid4().hex)
    with open(output_path, "wb") as output:
        proc = start_in(workdir, pytest_argv(), env, output)
        _wait_for_header(proc, output_path, RUN_TIMEOUT_S)
        started = time.monotonic()
        proc.wait(timeout=RUN_TIMEOUT_S)
    return time.monotonic() - started, proc.returncode, _baselines(workdir)


def _baselines(workdir: Path) -> list[str]:
    return [str(p.relative_to(workdir)) for p in (workdir / "baselines").rglob("*.json")]
