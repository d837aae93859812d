"""pytest_specperf.cli.command: the specperf command's flags come from the options table."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.cli.command import _parser, main
from pytest_specperf.config.table import BENCH, LAUNCH_CMD, OPTIONS
from pytest_specperf.results.run_lock import OutDirLock, this_process
from pytest_specperf.version import __version__

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


def test_launch_cmd_help_promises_the_one_depth_it_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """launch-cmd prints one server's command: its --spec-steps help asks for one depth, and
    a list is refused in one line."""
    with pytest.raises(SystemExit):
        main([LAUNCH_CMD, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "0,1,2,3" not in help_text and "depth(s)" not in help_text
    assert "--spec-steps SPEC_STEPS the speculation depth of the server" in help_text
    assert main([LAUNCH_CMD, "--spec-steps", "0,1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_bench_refuses_a_hardware_key_that_is_not_a_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """specperf bench --hardware=../../etc: one line, exit 2, before it reaches any server."""
    assert main([BENCH, "--url", "http://127.0.0.1:9", "--hardware", "../../etc"]) == 2
    err = capsys.readouterr().err
    assert "--hardware: '../../etc' is not a hardware key" in err and err.count("\n") == 1


def test_bench_bad_value_is_an_error_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad bench value fails before any request, naming the CLI's own flag."""
    assert main([BENCH, "--url", "http://127.0.0.1:9", "--temperature", "9"]) == 2
    assert capsys.readouterr().err.startswith("specperf: error: --temperature:")


def _actions(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, argparse.Action]]:
    """Every argument of ``parser`` and of its subcommands, each with the command it is in."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {choice.dest for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if name not in helped:
                    yield f"{path} {name}", action  # a subcommand without help
                yield from _actions(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_and_subcommand_has_help_text() -> None:
    missing = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, action in _actions(_parser(), "specperf")
        if not (action.help or "").strip()
    ]
    assert missing == []


def test_version_prints_the_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"specperf {__version__}\n"


def test_bench_into_an_out_dir_another_run_holds_is_refused_before_it_measures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held = OutDirLock(tmp_path / "out", this_process("other"))
    held.acquire()
    try:
        # Port 9 answers nothing: a bench that went on would fail on the server instead.
        code = main(["bench", "--url", "http://127.0.0.1:9", "--out", str(tmp_path / "out")])
    finally:
        held.release()
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"specperf: error: --out {tmp_path / 'out'}: another run is writing")
    assert f"pid {os.getpid()}" in err


# reST a docstring may hold and a terminal shows as is: ``literal``, :role:`target`.
REST_MARKUP = re.compile(r"``|:[a-z]+:`")


def _every_command(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _every_command(sub, (*path, name))


@pytest.mark.parametrize("command", list(_every_command(_parser())), ids=" ".join)
def test_no_help_shows_rest_markup(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """`specperf --help` showed "The ``specperf`` command" (its docstring's reST): no
    command's help carries markup meant for a docs renderer."""
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    assert REST_MARKUP.findall(capsys.readouterr().out) == []
