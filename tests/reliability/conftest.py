"""Each scenario of the fault matrix runs once per session; many tests read its outcome."""

from __future__ import annotations

import pytest

from tests.reliability.scenarios import COMMON_ARGS, Scenario, ScenarioRunner
from tests.reliability.suite_runs import SuiteRun, prepare_workdir, run_suite


@pytest.fixture(scope="session")
def scenario_run(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRunner:
    """Runs a scenario on first use (its own directory and tag) and keeps the outcome."""
    done: dict[str, SuiteRun | BaseException] = {}

    def get(scenario: Scenario) -> SuiteRun:
        if scenario.name not in done:
            workdir = prepare_workdir(tmp_path_factory.mktemp(scenario.name), scenario.extra_files)
            try:
                done[scenario.name] = run_suite(
                    workdir, [*COMMON_ARGS, *scenario.args], action=scenario.action
                )
            except Exception as exc:  # a broken run fails every test of it, once run
                done[scenario.name] = exc
        outcome = done[scenario.name]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return get
