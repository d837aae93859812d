"""pytest_specperf.plugin (the hooks, plugin/__init__.py): pytest options and ini keys are
registered from the options table."""

from __future__ import annotations

import pytest

from pytest_specperf.config.table import OPTIONS
from pytest_specperf.plugin import settings_key

_PROFILE = 'name = "mine"\nmodel_path = "org/model"\n'


def test_every_table_option_is_a_pytest_option_and_ini_key(pytester: pytest.Pytester) -> None:
    """Each row is on pytest's command line; each row marked ini is also an ini key."""
    config = pytester.parseconfig()
    for spec in OPTIONS:
        assert config.getoption(spec.dest) is None or spec.kind == "flag", spec.flag
        if spec.ini:
            # Left out of the ini file, a key reads as not given: the table's default applies.
            assert config.getini(spec.ini_name) in (None, ""), spec.ini_name


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


def test_run_profile_sets_depths_concurrency_and_tokens(pytester: pytest.Pytester) -> None:
    """--specperf-run-profile=nightly measures the control and every depth and concurrency."""
    settings = pytester.parseconfigure("--specperf-run-profile=nightly").stash[settings_key]
    assert settings.depths == (0, 1, 2, 3)
    assert settings.concurrency == (1, 4, 16, 32, 64)
    assert settings.run_profile == "nightly"


def test_an_option_on_the_command_line_wins_over_the_run_profile(
    pytester: pytest.Pytester,
) -> None:
    """An option given explicitly keeps its value; the profile fills the rest."""
    config = pytester.parseconfigure("--specperf-run-profile=smoke", "--specperf-concurrency=2")
    settings = config.stash[settings_key]
    assert settings.concurrency == (2,)
    assert (settings.depths, settings.workload.max_new_tokens) == ((3,), 256)


def test_an_ini_value_wins_over_the_run_profile(pytester: pytest.Pytester) -> None:
    """An option set in the ini file is explicit too: the run profile does not override it."""
    pytester.makeini("[pytest]\nspecperf_run_profile = pr\nspecperf_concurrency = 8\n")
    settings = pytester.parseconfigure().stash[settings_key]
    assert (settings.run_profile, settings.concurrency, settings.depths) == ("pr", (8,), (3,))


def test_run_profile_repeats_fill_the_repeats_option(pytester: pytest.Pytester) -> None:
    """A run profile's repeats is --specperf-repeats: nightly 5, pr 3; the option wins."""
    for name, repeats in (("nightly", 5), ("pr", 3), ("smoke", 1)):
        config = pytester.parseconfigure(f"--specperf-run-profile={name}")
        assert config.stash[settings_key].repeats == repeats, name
    given = pytester.parseconfigure("--specperf-run-profile=nightly", "--specperf-repeats=2")
    assert given.stash[settings_key].repeats == 2


def test_pr_run_profile_gates_the_projects_depths(pytester: pytest.Pytester) -> None:
    """pr sets no depth: the project's own (ini) depths are gated at C = 1, 4, 16."""
    pytester.makeini("[pytest]\nspecperf_spec_steps = 1,2\n")
    settings = pytester.parseconfigure("--specperf-run-profile=pr").stash[settings_key]
    assert (settings.depths, settings.concurrency) == ((1, 2), (1, 4, 16))


def test_a_project_run_profiles_file_named_in_the_ini_overrides(
    pytester: pytest.Pytester,
) -> None:
    """specperf_run_profiles names a TOML file whose tables change the shipped profiles."""
    pytester.path.joinpath("runs.toml").write_text("[pr]\nconcurrency = [1, 2]\n")
    pytester.makeini("[pytest]\nspecperf_run_profiles = runs.toml\n")
    settings = pytester.parseconfigure("--specperf-run-profile=pr").stash[settings_key]
    assert settings.concurrency == (1, 2)


def test_unknown_run_profile_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """A misspelt run profile stops the run before anything boots, naming the known ones."""
    result = pytester.runpytest("--specperf-run-profile=nigthly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--specperf-run-profile: 'nigthly' is not a run profile*"])


def test_the_estimated_run_time_is_printed_once_the_suite_is_collected(
    pytester: pytest.Pytester,
) -> None:
    """After collection, before anything boots (the test takes a depth, not a server)."""
    pytester.makepyfile("def test_a_depth(specperf_depth):\n    pass\n")
    result = pytester.runpytest("--specperf-backend=sim", "--specperf-boot-estimate=7")
    result.stdout.fnmatch_lines(
        [
            "collected 1 item",
            "specperf: profile=* backend=sim *",
            "specperf: estimated run time: *1 boot(s) x 7 s*",
        ]
    )


def test_collect_only_prints_what_the_run_would_take_and_begins_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_a_depth(specperf_depth):\n    pass\n")
    result = pytester.runpytest("--co", "--specperf-backend=sim", "--specperf-boot-estimate=7")
    result.stdout.fnmatch_lines(["specperf: estimated run time: *1 boot(s) x 7 s*"])
    assert not (pytester.path / ".specperf").exists()


def test_a_run_of_other_tests_prints_no_specperf_line(pytester: pytest.Pytester) -> None:
    """The plugin installed, tests that measure nothing: no settings, no run time to boot."""
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--specperf-backend=sim")
    assert result.ret == 0
    assert not [line for line in result.outlines if line.startswith("specperf")]


def test_a_run_over_its_time_budget_is_a_usage_error_before_anything_boots(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest(
        "--specperf-backend=sim", "--specperf-repeats=3", "--specperf-time-budget=1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--specperf-time-budget: the run is estimated at *"])
    assert not list(pytester.path.rglob("server-steps*.log"))
