"""config/run_profiles.py: shipped presets, a project's overrides, explicit options win."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_specperf.config.run_profiles import (
    OPTION_KEYS,
    RunProfile,
    load_run_profiles,
    option_defaults,
    resolve_run_profile,
    with_run_profile,
)
from pytest_specperf.config.table import OPTIONS_BY_KEY
from pytest_specperf.errors import UsageError


def test_smoke_pr_and_nightly_are_shipped() -> None:
    """The three run profiles the workflows use ship with the package."""
    assert {"smoke", "pr", "nightly"} <= load_run_profiles().keys()


def test_nightly_measures_every_depth_and_concurrency_of_the_seed_with_the_control() -> None:
    """nightly is the seed benchmark, depths 1-3 at C = 1, 4, 16, 32, 64, plus depth 0."""
    defaults = option_defaults(resolve_run_profile("nightly"))
    assert defaults["spec_steps"] == "0,1,2,3"
    assert defaults["concurrency"] == "1,4,16,32,64"


def test_a_project_file_changes_one_field_and_keeps_the_others(tmp_path: Path) -> None:
    """An override table replaces the fields it names; the shipped profile keeps the rest."""
    extra = tmp_path / "runs.toml"
    extra.write_text("[pr]\nconcurrency = [1, 8]\n", encoding="utf-8")
    shipped = resolve_run_profile("pr")
    changed = resolve_run_profile("pr", extra)
    assert changed.concurrency == [1, 8]
    assert changed.depths == shipped.depths and changed.repeats == shipped.repeats


def test_a_project_file_adds_a_profile(tmp_path: Path) -> None:
    """A table of a new name is a new run profile."""
    extra = tmp_path / "runs.toml"
    extra.write_text("[weekly]\ndepths = [1, 2, 3, 4]\n", encoding="utf-8")
    assert option_defaults(resolve_run_profile("weekly", extra)) == {"spec_steps": "1,2,3,4"}


def test_unknown_name_lists_the_known_ones() -> None:
    """A misspelt run profile is a usage error naming the run profiles there are."""
    with pytest.raises(UsageError, match=r"'nigthly' is not a run profile \(known: nightly, pr"):
        resolve_run_profile("nigthly")


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("concurrency = [0]", "Expected `int` >= 1"),
        ("repeat = 3", "Object contains unknown field `repeat`"),
    ],
)
def test_bad_field_is_a_usage_error(tmp_path: Path, table: str, problem: str) -> None:
    """A value out of range or a misspelt field names the profile and the file."""
    extra = tmp_path / "runs.toml"
    extra.write_text(f"[pr]\n{table}\n", encoding="utf-8")
    with pytest.raises(UsageError, match=rf"run profile 'pr' \({extra}\): {problem}"):
        resolve_run_profile("pr", extra)


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    """A run profiles file that is not there is named in the error."""
    with pytest.raises(UsageError, match="not found"):
        load_run_profiles(tmp_path / "missing.toml")


def test_profile_fills_only_options_not_given() -> None:
    """An option given (command line or ini) wins; the profile fills the others."""
    given: dict[str, Any] = {"concurrency": "2", "spec_steps": None, "server_arg": []}
    get = with_run_profile(given.get, resolve_run_profile("nightly"))
    assert get("concurrency") == "2"
    assert get("spec_steps") == "0,1,2,3"
    assert get("server_arg") == []
    assert get("temperature") is None


def test_every_field_fills_a_row_of_the_options_table() -> None:
    """Each run profile field names an option of the table (repeats: --specperf-repeats)."""
    assert set(OPTION_KEYS) == set(RunProfile.__struct_fields__) - {"description"}
    assert dict(OPTION_KEYS) == {
        "depths": "spec_steps",
        "concurrency": "concurrency",
        "max_new_tokens": "max_new_tokens",
        "repeats": "repeats",
        "allow_no_baseline": "allow_no_baseline",
        "warmup_seconds": "warmup_seconds",
    }
    assert all(key in OPTIONS_BY_KEY for key in OPTION_KEYS.values())
    assert OPTIONS_BY_KEY["repeats"].flag == "--specperf-repeats"
