"""Nothing lost: a server death or an interruption says what was running, keeps what was done,
and the rest of the depth fails or skips with that one reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.scenarios import BY_NAME, Scenario, ScenarioRunner, params
from tests.reliability.suite_runs import ctrl_c, prepare_workdir, run_suite

CRASH = BY_NAME["server-crash-mid-sweep"]
HANG = BY_NAME["server-hangs-at-boot"]
WORKER_KILLED = BY_NAME["xdist-worker-killed"]
INTERRUPTS = (BY_NAME["ctrl-c-mid-sweep"], BY_NAME["sigterm-mid-sweep"])


def test_crash_failure_names_the_point_and_shows_the_server_log_tail(
    scenario_run: ScenarioRunner,
) -> None:
    """The failing test says the server was killed while measuring C=4 and prints its log tail."""
    output = scenario_run(CRASH).output
    assert "server (steps=3) was killed by SIGKILL while measuring C=4" in output
    tail = output.split("--- server log tail ---", 1)[1]
    assert "[sim] --sim-crash-after 12: killing myself (SIGKILL)" in tail


def test_crash_fails_one_test_and_skips_the_rest_with_its_reason(
    scenario_run: ScenarioRunner,
) -> None:
    """One error for the crash; the unmeasured C=16 and the depth's later checks (the depth
    test, accept length, per-position acceptance, SLO capacity, greedy outputs, speedup,
    self-test) skip naming it.

    The KV check and C=1 ran before the crash and, in this recording run, read RECORDED while
    it ran; its summary counts them unrecorded, since no baseline was written.
    """
    run = scenario_run(CRASH)
    assert run.outcomes() == {"errors": 1, "skipped": 8, "unrecorded": 2, "deselected": 2}
    reason = "server (steps=3) was killed by SIGKILL while measuring C=4"
    assert f"not measured: {reason}" in run.output
    assert f"not judged: {reason}" in run.output
    assert "During handling of the above exception" not in run.output


def test_crash_keeps_the_partial_point_with_its_failed_requests(
    scenario_run: ScenarioRunner,
) -> None:
    """The point that was running when the server died is kept, its requests counted as failed."""
    depth = scenario_run(CRASH).results().depth(3)
    assert depth is not None
    point = depth.point(4)
    assert point is not None and point.failed > 0 and point.requests == 8
    assert depth.point(16) is None


def test_boot_hang_fails_within_the_launch_timeout_and_a_margin(
    scenario_run: ScenarioRunner,
) -> None:
    """A server that never becomes healthy fails the run within --specperf-launch-timeout + 30 s."""
    run = scenario_run(HANG)
    assert "server did not become healthy within 2 s" in run.output
    assert run.wall_s < 2 + 30


def test_boot_hang_fails_one_test_and_skips_the_rest_with_its_reason(
    scenario_run: ScenarioRunner,
) -> None:
    """One error (with the server log tail) for the failed boot; the nine others skip."""
    run = scenario_run(HANG)
    assert run.outcomes() == {"errors": 1, "skipped": 9, "deselected": 2}
    # With CI set, pytest prints the summary lines untruncated, so count above the summary.
    details = run.output.split("short test summary info", 1)[0]
    assert details.count("--- server log tail ---") == 1
    assert "not measured: server did not become healthy within 2 s" in run.output


@pytest.mark.parametrize("scenario", params(INTERRUPTS))
def test_interrupt_prints_the_report_of_the_points_measured(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """An interrupted run still prints the results table, with the C=1 row measured before."""
    output = scenario_run(scenario).output
    table = output.split("specperf results", 1)[1]
    assert "FAILED: interrupted (" in table
    assert "\n1 | " in table and "| 4/4 |" in table


@pytest.mark.parametrize("scenario", params(INTERRUPTS))
def test_an_interrupt_leaves_no_traceback_in_the_server_log(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """The streams an interrupt cuts end quietly in the simulator's log (a Ctrl-C at C=16
    left 16 aiohttp tracebacks, "Cannot write to closing transport"): one line at most after
    its own "shutting down"."""
    log = (scenario_run(scenario).out_dir / "server-steps3.log").read_text(encoding="utf-8")
    assert "Traceback" not in log and "Error handling request" not in log, log[-2000:]
    _, _, after = log.partition("[sim] shutting down")
    assert after.count("\n") <= 1, log[-2000:]


def test_sigterm_is_reported_as_sigterm(scenario_run: ScenarioRunner) -> None:
    """pytest names the SIGTERM it turned into an interrupt, instead of dying silently."""
    output = scenario_run(BY_NAME["sigterm-mid-sweep"]).output
    assert "SIGTERM received: stopping the servers and saving the results" in output


def test_killed_worker_is_reported_and_its_depth_not_measured_again(
    scenario_run: ScenarioRunner,
) -> None:
    """xdist reports the crash; the replacement worker boots no second server for steps=3."""
    run = scenario_run(WORKER_KILLED)
    crashed = "crashed while running 'perf_tests/test_throughput.py::test_throughput_floor[steps3-c"
    assert crashed in run.output
    assert "not measured again" in run.output
    assert len(run.server_ports()) == 1


def test_killed_worker_server_log_is_saved_by_the_watchdog(scenario_run: ScenarioRunner) -> None:
    """With its parent killed, the watchdog stops the server and saves its log to the out dir."""
    log = (scenario_run(WORKER_KILLED).out_dir / "server-steps3.log").read_text(encoding="utf-8")
    assert "[sim] The server is fired up and ready to roll!" in log
    assert "[sim] shutting down" in log


def test_an_interrupted_ab_run_keeps_and_reports_the_pairs_it_measured(tmp_path: Path) -> None:
    """Ctrl-C once the first pair of an A/B run is in results.json: the run ends interrupted,
    and results.json and report.md keep that pair, saying during which pair it stopped."""
    workdir = prepare_workdir(tmp_path / "ab")
    run = run_suite(
        workdir,
        [
            "--spec-steps=3",
            "--specperf-concurrency=1",
            "--specperf-base-server-arg=--sim-seed=1",
            "--specperf-server-arg=--sim-seed=2",
        ],
        action=ctrl_c,
    )
    assert run.returncode == pytest.ExitCode.INTERRUPTED, run.output[-3000:]
    assert run.leftovers == []
    (comparison,) = run.results().ab
    assert comparison.outcome == "interrupted" and comparison.pairs >= 1
    assert [p.pair for p in comparison.pair_changes] == list(range(1, comparison.pairs + 1))
    report = (run.out_dir / "report.md").read_text(encoding="utf-8")
    assert f"**steps=3: interrupted** after {comparison.pairs} pair(s)" in report
    assert "steps=3 A/B: interrupted (Ctrl-C / SIGINT) during pair " in report
    assert "| pair | change | acceptance | verify steps/s |" in report
