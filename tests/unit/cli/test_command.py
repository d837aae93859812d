"""pytest_specperf.cli.command: the specperf command's flags come from the options table."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.cli.command import _parser, main
from pytest_specperf.config.table import BENCH, LAUNCH_CMD, OPTIONS

_PROFILE = 'name = "mine"\nmodel_path = "org/model"\nspeculative_algorithm = "EAGLE"\n'


@pytest.mark.parametrize("command", [LAUNCH_CMD, BENCH])
def test_every_table_option_of_a_command_is_a_flag_of_it(command: str) -> None:
    """Each option the table gives a subcommand parses there, under each of its names."""
    required = {LAUNCH_CMD: ["--spec-steps", "3"], BENCH: ["--url", "http://h:1"]}[command]
    for spec in OPTIONS:
        if command not in spec.commands or spec.kind == "flag":
            continue
        for flag in spec.cli_flags():
            args = _parser().parse_args([command, *required, flag, "x"])
            value = getattr(args, spec.key)
            assert value == (["x"] if spec.kind == "append" else "x"), flag


@pytest.mark.parametrize(
    "dirs",
    [
        ["--specperf-profile-dir", "a,mine"],
        ["--specperf-profile-dir", "a", "--specperf-profile-dir", "mine"],
    ],
)
def test_launch_cmd_profile_dir_takes_a_comma_list_or_repeats(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dirs: list[str],
) -> None:
    """launch-cmd finds a profile through either form of --specperf-profile-dir."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "mine.toml").write_text(_PROFILE)
    monkeypatch.chdir(tmp_path)
    code = main([LAUNCH_CMD, "--spec-steps", "2", "--specperf-profile", "mine", *dirs])
    assert code == 0
    assert "--model-path org/model" in capsys.readouterr().out


def test_launch_cmd_rejects_a_depth_past_the_maximum(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI applies the suite's depth rule: a one-line error naming --spec-steps."""
    assert main([LAUNCH_CMD, "--spec-steps", "17"]) == 2
    assert "--spec-steps: 17 is out of range" in capsys.readouterr().err


def test_bench_bad_value_is_an_error_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad bench value fails before any request, naming the CLI's own flag."""
    assert main([BENCH, "--url", "http://127.0.0.1:9", "--temperature", "9"]) == 2
    assert capsys.readouterr().err.startswith("specperf: error: --temperature:")
