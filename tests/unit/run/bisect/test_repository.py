"""run/bisect/repository.py: the range's commits, one tree per commit, builds once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.run.bisect.repository import (
    Trees,
    build,
    check_repository,
    commit_range,
    resolve,
    side_environment,
)
from tests.support.bisect_repos import make_repository, merge_branch, server_flags


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "repo"
    return path, make_repository(path, 5, {3: server_flags(slowdown=0.1)})


def test_the_range_is_good_then_each_commit_to_bad_oldest_first(
    repo: tuple[Path, list[str]],
) -> None:
    path, hashes = repo
    commits = commit_range(path, hashes[1], hashes[5])
    assert [c.sha for c in commits] == hashes[1:]
    assert commits[2].subject == "commit 3: server --sim-slowdown=0.1"
    assert commits[0].author == "Bisect Test <bisect@example.invalid>"


def test_a_range_with_a_merge_walks_bads_first_parent_line(
    repo: tuple[Path, list[str]],
) -> None:
    """Found as a new user: the range was every commit of the ancestry path, ordered by
    date, so a side branch's commits interleaved with the main line's; a side commit after
    the slow one was measured against a main-line commit as if against its parent, and
    named with exit 0 (the slowdown was its parent's). Now each commit's parent is the one
    before it, and the merge stands for its branch."""
    path, hashes = repo
    side = merge_branch(path, hashes[1], 2, server_flags(slowdown=0.1))
    commits = commit_range(path, hashes[0], side[-1])
    assert [c.sha for c in commits] == [*hashes, side[-1]]
    assert commits[-1].subject == "merge side"


def test_good_on_a_merged_branch_is_refused_naming_the_line(
    repo: tuple[Path, list[str]],
) -> None:
    path, hashes = repo
    side = merge_branch(path, hashes[1], 2)
    with pytest.raises(
        UsageError,
        match=rf"^--good {side[0][:12]} is not on the first-parent line of --bad "
        rf"{side[-1][:12]} \(its branch was merged in\): give --good a commit of that line, "
        rf"e.g. {hashes[1][:12]}, where it meets --good's history$",
    ):
        commit_range(path, side[0], side[-1])


def test_a_revision_is_resolved_to_its_full_hash_or_refused_naming_the_option(
    repo: tuple[Path, list[str]],
) -> None:
    path, hashes = repo
    assert resolve(path, "HEAD~2", "--bad") == hashes[3]
    # A commit found by its message (refused before: "':/commit 3' is not a commit of").
    assert resolve(path, ":/^commit 3", "--bad") == hashes[3]
    assert resolve(path, hashes[3][:7], "--bad") == hashes[3]
    with pytest.raises(UsageError, match="--good: 'nosuch' is not a commit of"):
        resolve(path, "nosuch", "--good")


def test_a_repo_that_is_missing_or_not_git_is_refused_as_such(tmp_path: Path) -> None:
    """Not "'HEAD' is not a commit of" it: the user mistyped --repo, not the revision."""
    with pytest.raises(UsageError, match=r"^--repo: .*/nosuch is not a directory$"):
        check_repository(tmp_path / "nosuch")
    (tmp_path / "plain").mkdir()
    with pytest.raises(UsageError, match=r"^--repo: .*/plain is not a git repository$"):
        check_repository(tmp_path / "plain")


def test_good_after_bad_is_refused_with_what_to_give(repo: tuple[Path, list[str]]) -> None:
    path, hashes = repo
    with pytest.raises(UsageError, match="is not an ancestor of --bad"):
        commit_range(path, hashes[4], hashes[1])


def test_each_commit_gets_one_tree_reused_and_all_are_removed_at_the_end(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, hashes = repo
    trees = Trees(path, tmp_path / "out" / "worktrees")
    first = trees.tree(hashes[3])
    assert (first / "sitecustomize.py").is_file()
    assert trees.tree(hashes[3]) == first
    assert not (trees.tree(hashes[0]) / "sitecustomize.py").exists()
    assert trees.remove_all() == []
    assert list((tmp_path / "out" / "worktrees").glob("*")) == []


def test_removing_the_trees_leaves_the_users_own_stale_worktree(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Found as a new user: the end's ``git worktree prune`` dropped the repository's
    registration of a worktree of the user's whose folder was missing (a drive not mounted,
    say). Only the bisection's trees go now, one whose folder was deleted too."""
    path, hashes = repo
    subprocess.run(
        ["git", "-C", str(path), "worktree", "add", "-q", "--detach", str(tmp_path / "mine")],
        check=True,
    )
    shutil.rmtree(tmp_path / "mine")
    trees = Trees(path, tmp_path / "out" / "worktrees")
    shutil.rmtree(trees.tree(hashes[1]))
    trees.tree(hashes[2])
    assert trees.remove_all() == []
    listed = subprocess.run(
        ["git", "-C", str(path), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    worktrees = [line.split(" ", 1)[1] for line in listed.splitlines() if line[:9] == "worktree "]
    assert worktrees == [str(path), str(tmp_path / "mine")]


def test_a_commit_is_built_once_in_its_tree(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, hashes = repo
    tree = Trees(path, tmp_path / "worktrees").tree(hashes[2])
    command = "sh -c 'echo built >> {worktree}/built.txt'"
    assert build(command, hashes[2], tree, tmp_path / "builds") is True
    assert build(command, hashes[2], tree, tmp_path / "builds") is False
    assert (tree / "built.txt").read_text() == "built\n"


def test_a_tree_made_afresh_is_built_again_and_a_new_command_runs(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Found as a new user: the marker of a commit's build stayed in <out>/builds/ while
    the end of each run (an interrupted one too) removed the tree the build was made in,
    so the rerun served that commit from a fresh, unbuilt tree (the documented
    ``--prefix {worktree}/.prefix`` build gone). The marker now goes with the tree."""
    path, hashes = repo
    trees = Trees(path, tmp_path / "worktrees")
    command = "sh -c 'echo built >> {worktree}/built.txt'"
    assert build(command, hashes[2], trees.tree(hashes[2]), tmp_path / "builds") is True
    assert trees.remove_all() == []
    tree = trees.tree(hashes[2])
    assert build(command, hashes[2], tree, tmp_path / "builds") is True
    assert (tree / "built.txt").read_text() == "built\n"
    other = "sh -c 'echo other >> {worktree}/built.txt'"
    assert build(other, hashes[2], tree, tmp_path / "builds") is True
    assert build(other, hashes[2], tree, tmp_path / "builds") is False
    # Nothing of the marker's in the tree itself.
    assert sorted(p.name for p in tree.iterdir()) == [".git", "CHANGES", "built.txt"]


def test_a_tree_whose_path_has_a_space_is_one_argument_of_the_build(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Found as a new user with --out "out dir": ``touch {worktree}/built`` ran as
    ``touch .../out`` and ``dir/.../built``, and failed."""
    path, hashes = repo
    tree = Trees(path, tmp_path / "out dir" / "worktrees").tree(hashes[2])
    assert build("touch {worktree}/built", hashes[2], tree, tmp_path / "builds") is True
    assert (tree / "built").is_file()


def test_a_failed_build_names_the_commit_and_its_log(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, hashes = repo
    tree = Trees(path, tmp_path / "worktrees").tree(hashes[1])
    with pytest.raises(SpecperfError, match=rf"--build for {hashes[1][:12]} exited 3 .*: oops"):
        build("sh -c 'echo oops; exit 3'", hashes[1], tree, tmp_path / "builds")
    # One that printed nothing says so, not "...log): " and nothing after.
    with pytest.raises(SpecperfError, match=r"exited 1 \(.*\.log\) \(it printed nothing\)$"):
        build("false", hashes[1], tree, tmp_path / "builds")


def test_each_side_gets_the_env_with_its_own_tree() -> None:
    pairs = (("PYTHONPATH", "{worktree}/python:$PYTHONPATH"), ("FLAG", "1"))
    assert side_environment(pairs, Path("/t/abc")) == (
        ("PYTHONPATH", "/t/abc/python:$PYTHONPATH"),
        ("FLAG", "1"),
    )
