"""pytest_specperf.cli.bisect: the command's refusals, before anything is measured or made."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.cli.command import main
from tests.support.bisect_repos import SIM_SUITE_ARGS, make_repository


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "repo"
    return path, make_repository(path, 2)


def bisect(repo: Path, good: str, bad: str, out: Path, *more: str) -> int:
    return main(
        [
            "bisect",
            "--repo",
            str(repo),
            "--good",
            good,
            "--bad",
            bad,
            "--out",
            str(out),
            *more,
            "--",
            *SIM_SUITE_ARGS,
        ]
    )


def test_a_range_refused_leaves_no_out_folder(
    repo: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, hashes = repo
    assert bisect(path, "nosuch", hashes[2], tmp_path / "out") == 2
    assert capsys.readouterr().err == (
        f"specperf: error: --good: 'nosuch' is not a commit of {path}\n"
    )
    assert not (tmp_path / "out").exists()
