"""pytest_specperf.cli.bisect: the command's refusals, before anything is measured or made."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.cli.command import main
from tests.support.bisect_repos import bisect_args, make_repository


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "repo"
    return path, make_repository(path, 2)


def bisect(
    repo: Path, good: str, bad: str, out: Path, *more: str, suite: tuple[str, ...] = ()
) -> int:
    return main(bisect_args(repo, good, bad, out, *more, suite=suite))


def test_a_range_refused_leaves_no_out_folder(
    repo: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = repo
    assert bisect(path, "nosuch", hashes[2], tmp_path / "out") == 2
    assert capsys.readouterr().err == (
        f"specperf: error: --good: 'nosuch' is not a commit of {path}\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "env", [["--server-env", "CUDA_VISIBLE_DEVICES=0"], ["--server-env", "PYTHONPATH="]]
)
def test_a_server_env_that_names_no_tree_is_refused(
    env: list[str],
    repo: tuple[Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found as a new user: one --server-env that names no {worktree} replaces the default
    PYTHONPATH={worktree}:..., so both sides of every step ran the installed code and the
    range read "no-change" (exit 1) after a step's server-seconds."""
    path, hashes = repo
    assert bisect(path, hashes[0], hashes[2], tmp_path / "out", *env) == 2
    assert capsys.readouterr().err == (
        "specperf: error: specperf bisect: --server-env: no value names {worktree}, so each "
        "commit's server would run the same code (a --server-env replaces the default): add "
        "--server-env 'PYTHONPATH={worktree}:$PYTHONPATH'\n"
    )
    assert not (tmp_path / "out").exists()


def test_max_pairs_below_the_first_look_is_refused(
    repo: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found as a new user: --max-pairs 2 printed the estimate ("each 3 to 2 pairs"), then
    ended in a ValueError's traceback as step 1 began."""
    path, hashes = repo
    assert bisect(path, hashes[0], hashes[2], tmp_path / "out", "--max-pairs", "2") == 2
    assert capsys.readouterr().err == (
        "specperf: error: --max-pairs: at least 3 (the first look of the A/B gate), got 2\n"
    )
    assert not (tmp_path / "out").exists()


def test_the_suites_out_option_is_refused_for_the_bisections(
    repo: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found as a new user: --specperf-out after '--' was taken, then ignored (each step's
    boots go to <--out>/step<N>-<commit>), with nothing written where it named."""
    path, hashes = repo
    elsewhere = f"--specperf-out={tmp_path / 'elsewhere'}"
    assert bisect(path, hashes[0], hashes[2], tmp_path / "out", suite=(elsewhere,)) == 2
    assert capsys.readouterr().err == (
        "specperf: error: specperf bisect: --specperf-out is not taken after '--': use --out "
        "before the --\n"
    )
