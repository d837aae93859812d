"""pytest_specperf.config.table: every row's help can be shown by pytest and the CLI."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_specperf.cli.command import _parser, main
from pytest_specperf.config.option_spec import OptionSpec
from pytest_specperf.config.table import OPTIONS


def _help_problem(spec: OptionSpec) -> str | None:
    """What argparse (pytest's option parser and the CLI's) says when it formats the help."""
    parser = argparse.ArgumentParser(prog="specperf")
    parser.add_argument(spec.flag, help=spec.help, default=spec.default)
    try:
        parser.format_help()
    except (TypeError, ValueError, KeyError) as exc:
        return f"{spec.flag}: {exc}"
    return None


def test_every_option_help_survives_percent_formatting() -> None:
    """argparse formats each help with %: a bare % crashes `pytest --help` (write %%)."""
    assert [problem for spec in OPTIONS if (problem := _help_problem(spec))] == []


def test_a_bare_percent_in_a_help_is_caught() -> None:
    """The check above fails for a row written like the one that crashed `pytest --help`."""
    row = OptionSpec("--specperf-demo", "demo", "costs 12.9% and 24 ms 41.9%")
    assert _help_problem(row) is not None


def test_pytest_help_lists_the_options_with_the_plugin_installed(tmp_path: Path) -> None:
    """`pytest --help` in any project of the environment (the plugin loads by entry point)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--spec-steps" in done.stdout
    assert "--specperf-inject-slowdown" in done.stdout


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("command", _commands(_parser(), ()), ids=" ".join)
def test_specperf_help_of_every_command_exits_cleanly(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """`specperf --help` and every subcommand's `--help` print their usage and exit 0."""
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    assert "usage: specperf" in capsys.readouterr().out


def test_no_option_help_carries_rest_markup() -> None:
    """`pytest --help` and `specperf --help` print each row's help as is: no ``literal`` or
    :role:`target` a docs renderer would have drawn."""
    markup = re.compile(r"``|:[a-z]+:`")
    assert [spec.flag for spec in OPTIONS if markup.search(spec.help)] == []
