"""run/advice.py: every command the suite prints is complete and pasteable."""

from __future__ import annotations

import shlex
from pathlib import Path

from pytest_specperf.gate.baselines import load_baseline
from pytest_specperf.run.advice import Recording, record_command, recording_like
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.unit.config.test_settings import settings_from

SHIPPED_CALIBRATED = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"


def _argv(command: str) -> list[str]:
    return shlex.split(command)


def test_record_command_repeats_every_option_of_the_baselines_key_and_location(
    tmp_path: Path,
) -> None:
    """The options of issue 24's run: baselines dir, sim speedup, sweep and tokens come back;
    the deliberate slowdown (a server arg) does not."""
    settings = settings_from(
        tmp_path,
        backend="sim",
        sim_speedup="5",
        baselines="/tmp/bl",
        concurrency="1,4",
        max_new_tokens="200",
        server_arg=["--sim-slowdown=0.2"],
        workload="realistic",
        hardware="my-box",
    )
    argv = _argv(record_command(settings, [3]))
    assert argv[:3] == ["pytest", "perf_tests", "--spec-steps=3"]
    for option in (
        "--specperf-backend=sim",
        "--specperf-sim-speedup=5",
        "--specperf-baselines=/tmp/bl",
        "--specperf-concurrency=1,4",
        "--specperf-max-new-tokens=200",
        "--specperf-workload=realistic",
        "--specperf-hardware=my-box",
        "--specperf-update-baselines",
    ):
        assert option in argv
    assert not any("slowdown" in arg or "server-arg" in arg for arg in argv)


def test_record_command_with_url_names_the_server_not_a_backend(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, url="http://gpu:30000")
    argv = _argv(record_command(settings, [3]))
    assert "--specperf-url=http://gpu:30000" in argv
    assert not any(arg.startswith("--specperf-backend") for arg in argv)


def test_replacing_a_calibrated_baseline_calibrates_again_as_it_was(tmp_path: Path) -> None:
    """Re-recording the shipped calibrated baseline keeps its 3 boots x 3 samples and sweep,
    so the printed command is not refused as a downgrade."""
    old = load_baseline(SHIPPED_CALIBRATED)
    assert old is not None
    settings = settings_from(tmp_path, backend="sim", concurrency="1,4")
    argv = _argv(record_command(settings, [3], old=old))
    assert "--specperf-calibrate" in argv
    assert "--specperf-calibrate-boots=3" in argv and "--specperf-repeats=3" in argv
    assert "--specperf-concurrency=1,4,16,32,64" in argv
    assert "--specperf-update-baselines" not in argv


def test_recording_like_no_baseline_is_a_plain_recording() -> None:
    assert recording_like(None) == Recording()
    assert Recording().flags(attached=False) == ["--specperf-update-baselines"]


def test_a_deliberate_replacement_carries_the_downgrade_flag(tmp_path: Path) -> None:
    settings = settings_from(tmp_path)
    command = record_command(settings, [0, 3], recording=Recording(allow_downgrade=True))
    argv = _argv(command)
    assert "--spec-steps=0,3" in argv and "--specperf-allow-baseline-downgrade" in argv
