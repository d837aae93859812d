"""run/bisect/steps.py: a step's sides served from their commits' trees, built first."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.config.settings import build_settings
from pytest_specperf.run.bisect.repository import Trees, commit_range
from pytest_specperf.run.bisect.steps import Sides, StepPlan, run_step
from tests.support.bisect_repos import make_repository


def test_a_commit_whose_build_fails_is_named_unserved_and_nothing_boots(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    hashes = make_repository(repo, 2)
    commits = commit_range(repo, hashes[0], hashes[2])
    values = {"backend": "sim", "concurrency": "4"}
    sides = Sides(
        settings=build_settings(lambda key: values.get(key), tmp_path),
        depth=3,
        server_env=(),
        # Only the tree of commit 1 has "commit 1" in its CHANGES: its build fails.
        build="grep -qv 'commit 1' CHANGES",
        trees=Trees(repo, tmp_path / "out" / "worktrees"),
        out=tmp_path / "out",
    )
    plan = StepPlan(number=2, kind="candidate", head=commits[1], base=commits[0], index=1)
    done = run_step(sides, plan, bisection="b", log=None, decided=lambda run: True, prior=None)
    assert done.unserved == hashes[1]
    assert done.comparison.failure is not None
    assert f"--build for {hashes[1][:12]} exited 1" in done.comparison.failure
    assert done.comparison.pairs == [] and done.comparison.boots == []
