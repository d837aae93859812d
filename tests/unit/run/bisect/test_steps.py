"""run/bisect/steps.py: a step's sides served from their commits' trees, built first; a
step's name in the pair log."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pytest_specperf.config.settings import build_settings
from pytest_specperf.run.bisect.repository import Trees, commit_range
from pytest_specperf.run.bisect.steps import Sides, StepPlan, run_step, step_key
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


def test_a_culprit_right_after_good_gets_pairs_of_its_own() -> None:
    """Found as a new user: with the culprit the first commit after good, its step against
    its parent (good) took the name of the candidate step before it (the same two commits),
    so it read that step's pairs back as its own ("confirmed after 6 pair(s) (6 from the
    pair log)" on a first run), counted them twice in the cost, and confirmed nothing."""
    candidate = step_key("b", "good", "c1", "candidate")
    assert step_key("b", "good", "c1", "culprit") != candidate
    assert step_key("b", "good", "c1", "culprit") != step_key("b", "good", "c1", "range")


def test_the_range_and_candidate_steps_keep_their_names_for_an_earlier_pair_log() -> None:
    """A bisection interrupted by an earlier version goes on from its pairs."""
    earlier = hashlib.sha256(b"b\0good\0c1").hexdigest()[:24]
    assert step_key("b", "good", "c1", "range") == earlier
    assert step_key("b", "good", "c1", "candidate") == earlier
