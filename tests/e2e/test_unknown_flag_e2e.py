"""Issue 34, case 4: a misspelt simulator flag is an error, not a green run that ignored it.

`pytest perf_tests --specperf-backend=sim --spec-steps=3 --specperf-server-arg=--sim-slowdwn=0.2`
once measured the unslowed simulator, 5 passed, exit 0, with only a warning in the server's
log. Replayed in a copy of a fresh clone's perf_tests and baselines.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.support.data import REPO
from tests.support.e2e import suite_results

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

CASE_4 = [
    "perf_tests",
    "--specperf-backend=sim",
    "--spec-steps=3",
    "--specperf-server-arg=--sim-slowdwn=0.2",
]
# Only so that a regression (a run that measures) stays short; the refusal comes first.
SHORT = ["--specperf-max-new-tokens=64", "--specperf-concurrency=1", "-p", "no:cacheprovider"]
OUT_DIR = ".specperf"
PYTESTER_CAPTURE = {"stdout", "stderr"}  # runpytest_subprocess's own record of the run


def _files(root: Path) -> dict[str, str]:
    """Every file under root but the run's out dir, with its content's hash."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and OUT_DIR not in path.relative_to(root).parts
        and str(path.relative_to(root)) not in PYTESTER_CAPTURE
    }


def test_misspelt_sim_flag_fails_the_run_with_the_servers_reason_and_changes_nothing(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(REPO / "perf_tests", pytester.path / "perf_tests")
    shutil.copytree(REPO / "baselines", pytester.path / "baselines")
    before = _files(pytester.path)

    result = pytester.runpytest_subprocess(*CASE_4, *SHORT)

    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    log = pytester.path / OUT_DIR / "server-steps3.log"
    reason = (
        "steps=3: the server refused its arguments: unrecognized arguments: "
        f"--sim-slowdwn=0.2 (log: {log})"
    )
    assert reason in result.stdout.lines, result.stdout.str()
    assert "unrecognized arguments: --sim-slowdwn=0.2" in log.read_text(encoding="utf-8")
    outcomes = result.parseoutcomes()
    assert "passed" not in outcomes, outcomes
    (run,) = suite_results(pytester.path)["runs"]
    assert run["status"] == "failed" and run["points"] == []
    report = (pytester.path / OUT_DIR / "report.md").read_text(encoding="utf-8")
    assert f"**the run failed (exit status 1)**; no verdict was recorded:\n\n- {reason}" in report
    assert _files(pytester.path) == before
