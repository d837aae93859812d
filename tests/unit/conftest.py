"""Shared fixtures of the unit tests: the real SGLang samples and the built-in profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.server.profiles import DEFAULT_PROFILE, Profile, builtin_profiles
from tests.support.data import SGLANG_SAMPLES


@pytest.fixture(scope="session")
def sim_data() -> Path:
    """The directory of real SGLang response samples shared with the simulator's tests."""
    return SGLANG_SAMPLES


@pytest.fixture(scope="session")
def default_profile() -> Profile:
    """The seed deployment profile, loaded from the package's TOML."""
    return builtin_profiles()[DEFAULT_PROFILE]
