"""Bad server behaviour is measured, not fatal: each failed request is counted with its reason,
the sweep goes on, and a point fails its test only below --specperf-min-success."""

from __future__ import annotations

import re

import pytest

from tests.reliability.scenarios import BY_NAME, FAULTS, Scenario, ScenarioRunner, params
from tests.reliability.suite_runs import prepare_workdir, run_suite


@pytest.mark.parametrize("scenario", params(FAULTS))
def test_fault_counts_failed_requests_with_their_reason(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """Every point records its failed requests under the fault's reason, and nothing else."""
    depth = scenario_run(scenario).results().depth(3)
    assert depth is not None and scenario.fault_reason is not None
    for point in depth.points:
        assert point.failed > 0
        assert sum(point.errors.values()) == point.failed
        assert all(re.search(scenario.fault_reason, reason) for reason in point.errors)


@pytest.mark.parametrize("scenario", params(FAULTS))
def test_fault_fails_each_point_test_naming_the_reason(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """Each point's test fails with 'N/M requests succeeded (... < required 100%)' and why."""
    run = scenario_run(scenario)
    assert run.outcomes().get("failed") == 2
    for concurrency in (1, 4):
        line = re.search(
            rf"steps=3 C={concurrency}: \d+/\d+ requests succeeded \(\d+% < required 100%\); "
            rf"failures: (.*)",
            run.output,
        )
        assert line is not None, f"no success failure for C={concurrency}"
        assert scenario.fault_reason is not None
        assert re.search(scenario.fault_reason.strip("^$"), line.group(1))


def test_stalled_stream_is_cut_by_the_stall_timeout(scenario_run: ScenarioRunner) -> None:
    """With --specperf-stall-timeout=1 stalled requests end in seconds, not at request timeout."""
    run = scenario_run(BY_NAME["fault-stall"])
    depth = run.results().depth(3)
    assert depth is not None
    assert all("stalled stream (read timeout)" in p.errors for p in depth.points)
    assert run.wall_s < 90


def test_lower_min_success_lets_a_point_with_failed_requests_pass(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """--specperf-min-success=0.25 accepts points where about half the requests failed."""
    workdir = prepare_workdir(tmp_path_factory.mktemp("min-success"))
    run = run_suite(
        workdir,
        [
            "--spec-steps=3",
            "--specperf-max-new-tokens=100",
            "--specperf-min-success=0.25",
            "--specperf-server-arg=--sim-fault=http-error",
            "--specperf-server-arg=--sim-fault-rate=0.5",
        ],
    )
    assert run.returncode == 0, run.output[-3000:]
    assert "requests succeeded" not in run.output
    depth = run.results().depth(3)
    assert depth is not None and len(depth.points) == 2
    assert all(0.25 <= p.success_rate < 1.0 for p in depth.points)
