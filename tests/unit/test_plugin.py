"""pytest_specperf.plugin: pytest options and ini keys are registered from the options table."""

from __future__ import annotations

import pytest

from pytest_specperf.options import OPTIONS
from pytest_specperf.plugin import settings_key

_PROFILE = 'name = "mine"\nmodel_path = "org/model"\n'


def test_every_table_option_is_a_pytest_option_and_ini_key(pytester: pytest.Pytester) -> None:
    """Each row is on pytest's command line; each row marked ini is also an ini key."""
    config = pytester.parseconfig()
    for spec in OPTIONS:
        assert config.getoption(spec.dest) is None or spec.kind == "flag", spec.flag
        if spec.ini:
            assert config.getini(spec.ini_name) == spec.default, spec.ini_name


@pytest.mark.parametrize(
    "args",
    [
        ["--specperf-profile-dir=a,mine"],
        ["--specperf-profile-dir=a", "--specperf-profile-dir=mine"],
    ],
)
def test_profile_dir_on_the_command_line_as_list_or_repeated(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    """Both forms of --specperf-profile-dir find the profile."""
    pytester.mkdir("mine")
    pytester.path.joinpath("mine", "mine.toml").write_text(_PROFILE)
    config = pytester.parseconfigure("--specperf-profile=mine", *args)
    assert config.stash[settings_key].profile.model_path == "org/model"


def test_ini_value_applies_when_the_command_line_leaves_it_out(pytester: pytest.Pytester) -> None:
    """specperf_<key> in the ini file sets the option; the command line would override it."""
    pytester.makeini("[pytest]\nspecperf_spec_steps = 1,2\nspecperf_profile_dir = a,mine\n")
    pytester.mkdir("mine")
    pytester.path.joinpath("mine", "mine.toml").write_text(_PROFILE)
    config = pytester.parseconfigure("--specperf-profile=mine")
    settings = config.stash[settings_key]
    assert (settings.depths, settings.profile.name) == ((1, 2), "mine")
