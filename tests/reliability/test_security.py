"""Security: loopback only, the API key from the environment as a Bearer token and never shown,
commands as argv lists."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.reliability.scenarios import ALL, BY_NAME, Scenario, ScenarioRunner, params
from tests.reliability.suite_runs import API_KEY
from tests.support.data import REPO

NORMAL = BY_NAME["normal-end"]


@pytest.mark.parametrize("scenario", params(ALL))
def test_api_key_appears_in_no_output_or_artifact(
    scenario_run: ScenarioRunner, scenario: Scenario
) -> None:
    """The key set in SPECPERF_API_KEY is in neither pytest's output nor any file the run left."""
    run = scenario_run(scenario)
    assert API_KEY not in run.output
    leaking = [path for path in run.artifacts() if API_KEY.encode() in path.read_bytes()]
    assert leaking == []
    assert (run.out_dir / "results.json").is_file()


def test_api_key_is_sent_as_a_bearer_token(scenario_run: ScenarioRunner) -> None:
    """The server requires the key (401 without it) and every measured request succeeded."""
    run = scenario_run(NORMAL)
    assert run.probe["status_without_key"] == 401
    depth = run.results().depth(3)
    assert depth is not None and [p.ok for p in depth.points] == [4, 8]


def test_launch_command_shown_to_users_redacts_the_key(scenario_run: ScenarioRunner) -> None:
    """results.json's launch command passes --api-key with *** in place of the key."""
    depth = scenario_run(NORMAL).results().depth(3)
    assert depth is not None and depth.server is not None
    assert "--api-key '***'" in (depth.server.launch_command or "")


def test_server_listens_on_loopback_only(scenario_run: ScenarioRunner) -> None:
    """Every listening socket of the booted server is bound to 127.0.0.1."""
    assert scenario_run(NORMAL).probe["listen"] == ["127.0.0.1"]


def test_server_is_started_from_an_argv_list_without_a_shell(
    scenario_run: ScenarioRunner,
) -> None:
    """The server is pytest's direct child running python -m pytest_specperf.sim, not a shell."""
    probe = scenario_run(NORMAL).probe
    assert probe["parent_pid"] == probe["pytest_pid"]
    assert probe["cmdline"][1:3] == ["-m", "pytest_specperf.sim"]
    assert Path(probe["cmdline"][0]).resolve() == Path(sys.executable).resolve()
    host = probe["cmdline"].index("--host")
    assert probe["cmdline"][host + 1] == "127.0.0.1"


def test_no_module_starts_a_process_through_a_shell() -> None:
    """No module of the package uses shell=True, os.system or os.popen."""
    shell = re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(")
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "pytest_specperf").rglob("*.py")
        if shell.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
