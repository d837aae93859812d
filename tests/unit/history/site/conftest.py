"""A store of a few nights with a step (tests/support/step_nights.py), as a fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.step_nights import write_nights


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return write_nights(tmp_path / "history.sqlite")
