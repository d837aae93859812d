"""Every command the suite prints, run as printed in a scratch clone of this repository,
leaves its shipped baselines/ as they were (issue 49, item 6, and its rule for every printed
command: never the shipped baselines, always the run's out directory, run profile and samples).

The commands come from every function of run/advice.py that returns one (or a message with
one), called on the settings of one small run (the enumeration test fails on a new function
until it is run here), then from a real gating run's own output and a refused recording's
line: the messages that embed them. Each distinct command runs once (a pytest subprocess
each; the clone's pytest.ini turns the warm-up and the minimum point time off, which no
printed command carries), and after each, `git status --porcelain baselines/` is empty.

The clone ships one small baseline of its own, committed like the others (steps-3 of
sim-x10 at 32 tokens, C=1 only, the fixed rule): the commands printed against it record at
those settings, in seconds; re-recording a shipped calibrated file takes minutes.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.results.schema import RunResults
from pytest_specperf.run import advice
from pytest_specperf.run.advice import Recording, Unjudged
from pytest_specperf.run.baselines import REFUSED_DOWNGRADE, write_baselines
from tests.support.data import REPO
from tests.support.repository import c1_baseline, git

# The run every command is printed for: the pr run profile (its samples and points given
# here, small), against the clone's C=1 baseline, at C=1,2: C=2 is not judged.
OPTIONS = {
    "run_profile": "pr",
    "backend": "sim",
    "sim_speedup": "10",
    "spec_steps": "3",
    "concurrency": "1,2",
    "max_new_tokens": "32",
    "repeats": "1",
}
HARDWARE = "sim-x10"
OWN = ".specperf/baselines/greedy-synthetic-32-tokens"
# A command as the suite prints it: from "pytest perf_tests" or "specperf baseline" to the
# first ";", "(" or space that does not start another argument (they need no quotes here).
PRINTED_COMMAND = re.compile(r"\b(?:pytest perf_tests|specperf baseline promote)(?: [^\s;()]+)+")
# Functions of run/advice.py that return text that is not a command to run.
NOT_COMMANDS = {
    "deliberate_slowdown": "the options of this run that slow the server, as given",
    "then_gate": "the words after a command that records into the user's own directory",
}

Replay = Callable[[str], subprocess.CompletedProcess[str]]


def _as_typed(options: dict[str, str]) -> list[str]:
    """The options as typed on a command line (``spec_steps``: ``--spec-steps=3``)."""
    return [
        f"--{'' if key == 'spec_steps' else 'specperf-'}{key.replace('_', '-')}={value}"
        for key, value in options.items()
    ]


def _settings(clone: Path, **changes: object) -> Settings:
    values: dict[str, object] = {**OPTIONS, **changes}
    return build_settings(values.get, clone)


def _baselines_option(argv: list[str]) -> str:
    """The baselines directory a printed command names (pytest's option, promote's flag)."""
    if "--baselines" in argv:
        return argv[argv.index("--baselines") + 1]
    (given,) = [a.split("=", 1)[1] for a in argv if a.startswith("--specperf-baselines=")]
    return given


def _baselines_changes(clone: Path) -> str:
    """`git status --porcelain baselines/` of the clone: empty while it is as shipped."""
    return git(clone, "status", "--porcelain", "--", "baselines/")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch clone of this repository, its small baseline committed, its baselines/
    clean."""
    root = tmp_path_factory.mktemp("scratch") / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(root)], check=True, capture_output=True)
    (root / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider\n"
        "specperf_warmup_rounds = 0\nspecperf_min_point_seconds = 0\n"
    )
    c1_baseline(root / "baselines", tokens=32, hardware=HARDWARE)
    git(root, "add", "baselines")
    git(root, "commit", "-q", "-m", "a small baseline of the clone's own")
    assert _baselines_changes(root) == ""
    return root


@pytest.fixture(scope="module")
def replay(clone: Path) -> Iterator[Replay]:
    """Runs a printed command as printed in the clone (its pytest or specperf: this
    environment's), once: a command printed twice is run once."""
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    env = {**os.environ, "CI": "1"}  # skip reasons read whole, not cut to a terminal's width
    env.pop("SPECPERF_HISTORY", None)

    def run(command: str) -> subprocess.CompletedProcess[str]:
        if command not in ran:
            argv = shlex.split(command)
            argv[0] = str(Path(sys.executable).with_name(argv[0]))
            ran[command] = subprocess.run(
                argv, cwd=clone, env=env, capture_output=True, text=True, timeout=300, check=False
            )
        return ran[command]

    yield run


def _small_baseline(clone: Path) -> Baseline:
    found = load_baseline(next((clone / "baselines").rglob(f"{HARDWARE}/steps-3.json")))
    assert found is not None
    return found


def printed_by_advice(clone: Path) -> dict[str, str]:
    """What each function of run/advice.py that prints a command returns for the run (and, where
    it needs one, a baseline it cannot judge): by the function's name."""
    run = _settings(clone)
    other_tokens = _settings(clone, max_new_tokens="64")
    # specperf bench prints promote_command for the run it just measured into its out dir:
    # here, a recording's results in an out directory of their own, promoted right after.
    promoted = _settings(clone, out="promoted-out")
    small = _small_baseline(clone)
    calibrated = Recording(calibrate=True, boots=3, repeats=3)
    return {
        "record_command": advice.record_command(run, [3], HARDWARE, old=small),
        "record_command (calibrate)": advice.record_command(
            run, [3], HARDWARE, old=small, recording=calibrated
        ),
        "record_hint": advice.record_hint(run, HARDWARE, 3),
        "record_advice": advice.record_advice(run, HARDWARE, 3),
        "gate_command": advice.gate_command(other_tokens, [3], small) or "",
        "own_record_command": advice.own_record_command(other_tokens, [3], HARDWARE),
        "not_comparable_advice": advice.not_comparable_advice(other_tokens, [3], small, HARDWARE),
        "other_backend_advice": advice.other_backend_advice(
            run, [3], msgspec.structs.replace(small, backend="sglang"), HARDWARE
        ),
        "no_verdict_advice": advice.no_verdict_advice(
            run, [Unjudged(3, HARDWARE, small, comparable=True)]
        ),
        "record_command (into promoted-out)": advice.record_command(
            promoted, [3], HARDWARE, old=small
        ),
        "promote_command": advice.promote_command(promoted, Path("promoted-out/results.json")),
    }


def test_every_function_of_run_advice_that_returns_text_is_enumerated_here(
    clone: Path,
) -> None:
    """A new function of run/advice.py that returns text is either a command this module
    runs as printed, or named in NOT_COMMANDS with why it is none."""
    returning_text = {
        name
        for name, function in inspect.getmembers(advice, inspect.isfunction)
        if function.__module__ == advice.__name__
        and not name.startswith("_")
        and function.__annotations__.get("return") in ("str", "str | None")
    }
    enumerated = {name.split(" ")[0] for name in printed_by_advice(clone)}
    assert returning_text == enumerated | set(NOT_COMMANDS)


def test_every_command_of_run_advice_run_as_printed_leaves_the_shipped_baselines_as_they_were(
    clone: Path, replay: Replay
) -> None:
    """Each command, run as printed in the clone: it gates or records (into the user's own
    directory, never baselines/), keeps the run's out directory, run profile and samples, and
    `git status` of baselines/ is empty after it."""
    for name, text in printed_by_advice(clone).items():
        commands = PRINTED_COMMAND.findall(text)
        assert commands, f"{name} printed no command: {text}"
        for command in commands:
            argv = shlex.split(command)
            if argv[0] == "pytest":
                assert "--specperf-run-profile=pr" in argv, command
                assert any(a.startswith("--specperf-out=") for a in argv), command
                assert any(a.startswith("--specperf-repeats=") for a in argv), command
            ran = replay(command)
            out = ran.stdout + ran.stderr
            assert ran.returncode in (0, 1), f"{name}: {command}\n{out}"
            assert _baselines_changes(clone) == "", f"{name}: {command} changed baselines/\n{out}"
            if {"--specperf-update-baselines", "--specperf-calibrate", "promote"} & set(argv):
                target = _baselines_option(argv)
                assert not (clone / target).resolve().is_relative_to(clone / "baselines")
                assert f"wrote {clone / target}/" in out, f"{name}: {command}\n{out}"


@pytest.fixture(scope="module")
def gating_run(
    clone: Path, replay: Replay, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, RunResults]:
    """The run itself, as typed (not printed): its output, and its results (a copy: the
    commands run later rewrite the out directory)."""
    ran = replay(shlex.join(["pytest", "perf_tests", *_as_typed(OPTIONS), "-rs"]))
    out = ran.stdout + ran.stderr
    assert ran.returncode == pytest.ExitCode.TESTS_FAILED, out  # C=2 was not judged
    results = msgspec.json.decode(
        (clone / ".specperf" / "results.json").read_bytes(), type=RunResults
    )
    return out, results


def test_the_commands_a_gating_run_prints_are_run_advices_and_leave_baselines_as_shipped(
    clone: Path, replay: Replay, gating_run: tuple[str, RunResults]
) -> None:
    """The skip reasons (no calibrated noise: calibrate with ...), an improvement's refresh and
    the last line (C=2 not judged: record with ...) print run/advice.py's commands, each into
    the user's own directory; run as printed, baselines/ stays as shipped."""
    out, _ = gating_run
    printed = set(PRINTED_COMMAND.findall(out))
    built = {c for text in printed_by_advice(clone).values() for c in PRINTED_COMMAND.findall(text)}
    assert printed and printed <= built, printed - built
    assert f"then gate with --specperf-baselines={OWN})" in out
    for command in sorted(printed):
        ran = replay(command)
        assert ran.returncode in (0, 1), f"{command}\n{ran.stdout}"
        assert _baselines_changes(clone) == "", f"{command} changed baselines/"


def test_a_refused_recording_into_the_shipped_baselines_prints_only_commands_that_leave_them(
    clone: Path, replay: Replay, gating_run: tuple[str, RunResults]
) -> None:
    """A recording the user typed into the shipped baselines/ at C=2 alone (it would drop
    the shipped C=1) is refused; the commands its line prints, run as printed, leave
    baselines/ as shipped."""
    _, results = gating_run
    (run,) = results.runs
    c2 = msgspec.structs.replace(
        run, points=[p for p in run.points if p.concurrency == 2], planned_concurrency=[2]
    )
    typed = _settings(clone, concurrency="2", update_baselines=True, baselines="baselines")
    [line] = write_baselines(typed, [c2])
    assert REFUSED_DOWNGRADE in line, line
    commands = PRINTED_COMMAND.findall(line)
    assert commands, line
    for command in commands:
        assert f"--specperf-baselines={OWN}" in shlex.split(command), command
        ran = replay(command)
        assert ran.returncode in (0, 1), f"{command}\n{ran.stdout}"
        assert _baselines_changes(clone) == "", f"{command} changed baselines/"
