"""The fault matrix: however a run ends, no process outlives it and its artifacts are intact.

Scenarios (tests/reliability/scenarios.py): a normal end, a failing test, Ctrl-C and SIGTERM
mid-sweep, a server that crashes mid-sweep, a server that hangs at boot, an xdist worker killed
mid-sweep, and each simulator fault (HTTP 500 and 429, reset, malformed and truncated streams,
error chunks, a stalled stream, a wrong content type). Each runs once; the tests read it.
"""

from __future__ import annotations

import re

import pytest

from tests.reliability.scenarios import ALL, Scenario, ScenarioRunner, params
from tests.reliability.suite_runs import HARDWARE, PROFILE, port_is_listening


@pytest.mark.parametrize("scenario", params(ALL))
def test_no_process_outlives_the_run(scenario_run: ScenarioRunner, scenario: Scenario) -> None:
    """No server, server child, watchdog or xdist worker of the run is alive after it ends."""
    run = scenario_run(scenario)
    assert run.leftovers == [], f"left behind by {scenario}: {run.leftovers}"


@pytest.mark.parametrize("scenario", params(ALL))
def test_server_port_is_free_after_the_run(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """Nothing listens any more on the port the server of the run was given."""
    ports = scenario_run(scenario).server_ports()
    assert ports, "the saved server log names the port the server listened on"
    assert [port for port in ports if port_is_listening(port)] == []


@pytest.mark.parametrize("scenario", params(ALL))
def test_run_exits_with_the_expected_status(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """Green only for the normal end; 2 (interrupted) for Ctrl-C and SIGTERM; 1 otherwise."""
    run = scenario_run(scenario)
    assert run.returncode == scenario.exit_code, run.output[-3000:]


@pytest.mark.parametrize("scenario", params(ALL))
def test_results_json_keeps_the_points_measured_before_the_fault(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """results.json is valid against its schema and holds every point measured before the fault."""
    run = scenario_run(scenario).depth_run(3)
    for concurrency in scenario.clean_points:
        point = run.point(concurrency)
        assert point is not None, f"C={concurrency} missing from results.json"
        assert point.ok == point.requests > 0
    for concurrency in scenario.faulty_points:
        point = run.point(concurrency)
        assert point is not None, f"C={concurrency} missing from results.json"
        assert 0 < point.failed < point.requests


@pytest.mark.parametrize("scenario", params(ALL))
def test_results_json_records_how_the_run_ended(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """The run's status is complete for a finished sweep, else failed with the reason."""
    run = scenario_run(scenario).depth_run(3)
    assert run.status == scenario.status
    if scenario.failure is None:
        assert run.failure is None
    else:
        assert run.failure is not None and re.search(scenario.failure, run.failure), run.failure


@pytest.mark.parametrize("scenario", params(ALL))
def test_report_md_shows_every_measured_point(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """report.md exists and has a table row for each point in results.json."""
    run = scenario_run(scenario)
    report = (run.out_dir / "report.md").read_text(encoding="utf-8")
    depth = run.results().depth(3)
    assert depth is not None and "steps=3" in report
    for point in depth.points:
        row = rf"^\| {point.concurrency} \| .* \| {point.ok}/{point.requests} \|"
        assert re.search(row, report, re.M), f"no row for C={point.concurrency}"
    if not depth.points:
        assert "(no point measured)" in report


@pytest.mark.parametrize("scenario", params(ALL))
def test_baseline_is_written_only_by_a_clean_run(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """--specperf-update-baselines writes steps-3.json after a normal end and after nothing else."""
    run = scenario_run(scenario)
    expected = run.baselines_dir / PROFILE / HARDWARE / "steps-3.json"
    if scenario.writes_baseline:
        assert run.baseline_files() == [expected]
        assert f"baseline steps=3: wrote {expected}" in run.output
    else:
        assert run.baseline_files() == []
        assert "baseline steps=3: NOT written (" in run.output


@pytest.mark.parametrize("scenario", params(ALL))
def test_no_live_server_log_is_left_in_tmp(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """The unredacted live server log is removed once its redacted copy is saved in the out dir."""
    run = scenario_run(scenario)
    assert list((run.workdir / "tmp").glob("specperf-server-*")) == []
    assert (run.out_dir / "server-steps3.log").read_text(encoding="utf-8").startswith("[sim]")
