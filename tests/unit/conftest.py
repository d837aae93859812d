"""Shared fixtures of the unit tests: the real SGLang samples and the built-in profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.profiles import DEFAULT_PROFILE, Profile, builtin_profiles

SIM_DATA = Path(__file__).resolve().parent.parent / "data" / "sglang-0.5.12-h200"


@pytest.fixture(scope="session")
def sim_data() -> Path:
    """The directory of real SGLang response samples shared with the simulator's tests."""
    return SIM_DATA


@pytest.fixture(scope="session")
def default_profile() -> Profile:
    """The seed deployment profile, loaded from the package's TOML."""
    return builtin_profiles()[DEFAULT_PROFILE]
