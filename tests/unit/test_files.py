"""pytest_specperf.files: atomic writes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.files import atomic_write_bytes


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_written_file_holds_the_bytes_and_no_temporary_is_left(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "results.json"
    atomic_write_bytes(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert [p.name for p in target.parent.iterdir()] == ["results.json"]


@pytest.mark.usefixtures("umask_022")
def test_new_file_gets_the_mode_a_plain_open_would_give(tmp_path: Path) -> None:
    """Under umask 022 a new file is 0o644, readable by the team, not mkstemp's 0o600."""
    target = tmp_path / "steps-3.json"
    atomic_write_bytes(target, b"{}")
    assert target.stat().st_mode & 0o777 == 0o644


@pytest.mark.usefixtures("umask_022")
def test_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o640
