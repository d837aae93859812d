"""The fault matrix: every way a run can end, each as a run of the shipped suite on the simulator.

Every scenario records baselines (--specperf-update-baselines), so each one also proves that
nothing is written from a run that did not end cleanly; only ``normal-end`` may write one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.reliability.suite_runs import (
    Action,
    SuiteRun,
    ctrl_c,
    kill_worker,
    look_at_server,
    sigterm,
)

# Two more points of 2,000-token requests after the first keep the sweep busy for seconds
# once the first point is in results.json, so the interruption always lands mid-sweep (with
# FAST_ARGS' 200 tokens the rest of the sweep took under a second and could finish first).
LONG_SWEEP = ("--specperf-concurrency=1,4,16", "--specperf-max-new-tokens=2000")
# Without warm-up rounds: the scenarios count requests (--sim-crash-after) and interrupt
# points by the sample being measured (the warm-up's own failures:
# tests/unit/run/test_depth_session.py).
COMMON_ARGS = ["--spec-steps=3", "--specperf-update-baselines", "--specperf-warmup-rounds=0"]

FAILING_USER_TEST = '''
"""A user's own check on every measured point, failing on purpose."""


def test_user_check(specperf_point):
    """Fails on purpose: no point ever has -1 successful requests."""
    assert specperf_point.ok == -1
'''


@dataclass(frozen=True)
class Scenario:
    name: str
    args: tuple[str, ...] = ()
    action: Action | None = None
    extra_files: dict[str, str] = field(default_factory=dict)
    exit_code: int = 1
    # Points that must be in results.json with every request successful.
    clean_points: tuple[int, ...] = ()
    # Points that must be in results.json with failed requests of this reason (regex).
    faulty_points: tuple[int, ...] = ()
    fault_reason: str | None = None
    # The run's status in results.json, and a regex its failure must match.
    status: str = "failed"
    failure: str | None = None

    @property
    def writes_baseline(self) -> bool:
        return self.exit_code == 0

    def __str__(self) -> str:
        return self.name


# The `scenario_run` fixture (tests/reliability/conftest.py): a scenario -> its finished run.
ScenarioRunner = Callable[[Scenario], SuiteRun]


def _fault(name: str, reason: str, *extra: str) -> Scenario:
    return Scenario(
        name=f"fault-{name}",
        args=(
            "--specperf-max-new-tokens=100",
            "--specperf-server-arg=--sim-fault-rate=0.5",
            *extra,
        ),
        faulty_points=(1, 4),
        fault_reason=reason,
        status="complete",
    )


LIFECYCLE = (
    Scenario(
        "normal-end",
        action=look_at_server,
        exit_code=0,
        clean_points=(1, 4),
        status="complete",
    ),
    Scenario(
        "failing-test",
        extra_files={"perf_tests/test_user_check.py": FAILING_USER_TEST},
        clean_points=(1, 4),
        status="complete",
    ),
    *(
        Scenario(
            name,
            args=LONG_SWEEP,
            action=action,
            exit_code=2,
            clean_points=(1,),
            failure=rf"^interrupted \({signal_name}\) (while measuring|before) C=(4|16)",
        )
        for name, action, signal_name in (
            ("ctrl-c-mid-sweep", ctrl_c, "Ctrl-C / SIGINT"),
            ("sigterm-mid-sweep", sigterm, "SIGTERM"),
        )
    ),
    Scenario(
        "server-crash-mid-sweep",
        # 2 warm-up + 4 requests at C=1, 4 warm-up + 8 at C=4: the 12th dies during C=4.
        args=(*LONG_SWEEP, "--specperf-server-arg=--sim-crash-after=12"),
        clean_points=(1,),
        failure=r"^server \(steps=3\) was killed by SIGKILL while measuring C=4",
    ),
    Scenario(
        "server-hangs-at-boot",
        args=("--specperf-launch-timeout=2", "--specperf-server-arg=--sim-hang-at-boot"),
        failure=r"^server did not become healthy within 2 s",
    ),
    Scenario(
        "xdist-worker-killed",
        args=(*LONG_SWEEP, "-n", "2"),
        action=kill_worker,
        clean_points=(1,),
        failure=r"^steps=3 was already started in this run by another process",
    ),
)

FAULTS = (
    _fault("http-500", r"^HTTP 500$", "--specperf-server-arg=--sim-fault=http-error"),
    _fault(
        "http-429",
        r"^HTTP 429$",
        "--specperf-server-arg=--sim-fault=http-error",
        "--specperf-server-arg=--sim-error-status=429",
    ),
    _fault("reset", r"^connection broken ", "--specperf-server-arg=--sim-fault=reset"),
    _fault("malformed", r"^malformed chunk$", "--specperf-server-arg=--sim-fault=malformed"),
    _fault("truncate", r"^truncated stream$", "--specperf-server-arg=--sim-fault=truncate"),
    _fault("error-chunk", r"^error chunk$", "--specperf-server-arg=--sim-fault=error-chunk"),
    _fault(
        "stall",
        r"^stalled stream",
        "--specperf-server-arg=--sim-fault=stall",
        "--specperf-stall-timeout=1",
    ),
    _fault(
        "wrong-content-type",
        r"^wrong content type text/html$",
        "--specperf-server-arg=--sim-fault=wrong-content-type",
    ),
)

ALL = LIFECYCLE + FAULTS
BY_NAME = {scenario.name: scenario for scenario in ALL}


def params(scenarios: tuple[Scenario, ...]) -> list[object]:
    """pytest parameters named after the scenarios."""
    return [pytest.param(scenario, id=scenario.name) for scenario in scenarios]
