"""run/advice.py: every command the suite prints is complete and pasteable."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.config.settings import Settings
from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.gate.floors import workload_mismatch
from pytest_specperf.run.advice import (
    Recording,
    Unjudged,
    baseline_workload,
    comparable_concurrency,
    gate_command,
    no_verdict_advice,
    not_comparable_advice,
    own_baselines_dir,
    own_record_command,
    promote_command,
    record_advice,
    record_command,
    record_hint,
    recording_like,
    repository_baselines,
)
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.support.repository import shipped_in_a_repository
from tests.unit.config.test_settings import settings_from

SHIPPED_CALIBRATED = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
SHIPPED_REALISTIC = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.realistic.json"
PACKAGE = REPO / "pytest_specperf"
# Issue 34's case 1: the nightly run profile at other tokens and fewer concurrencies.
CASE_1 = {
    "run_profile": "nightly",
    "backend": "sim",
    "spec_steps": "3",
    "concurrency": "1,4",
    "max_new_tokens": "128",
}


def _shipped(path: Path = SHIPPED_CALIBRATED) -> Baseline:
    baseline = load_baseline(path)
    assert baseline is not None
    return baseline


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
    argv = _argv(record_command(settings, [3], "my-box"))
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
    argv = _argv(record_command(settings, [3], "external"))
    assert "--specperf-url=http://gpu:30000" in argv
    assert not any(arg.startswith("--specperf-backend") for arg in argv)


def test_replacing_a_calibrated_baseline_calibrates_again_as_it_was(tmp_path: Path) -> None:
    """Re-recording the shipped calibrated baseline keeps its 3 boots x 3 samples and sweep,
    so the printed command is not refused as a downgrade."""
    old = load_baseline(SHIPPED_CALIBRATED)
    assert old is not None
    settings = settings_from(tmp_path, backend="sim", concurrency="1,4")
    argv = _argv(record_command(settings, [3], "sim-x5", old=old))
    assert "--specperf-calibrate" in argv
    assert "--specperf-calibrate-boots=3" in argv and "--specperf-repeats=3" in argv
    assert "--specperf-concurrency=1,4,16,32,64" in argv
    assert "--specperf-update-baselines" not in argv


def test_recording_like_no_baseline_is_a_plain_recording() -> None:
    assert recording_like(None) == Recording()
    assert Recording().flags(attached=False) == ["--specperf-update-baselines"]


def test_no_printed_command_of_the_package_allows_a_downgrade() -> None:
    """The downgrade flag is defined in config/table.py and printed nowhere: no module but
    config/table.py names it or ALLOW_DOWNGRADE_FLAG (issue 34: a printed command ran as
    printed replaced the shipped calibrated baseline)."""
    naming = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "--specperf-allow-baseline-downgrade" in (text := path.read_text())
        or "ALLOW_DOWNGRADE_FLAG" in text
    )
    assert naming == ["config/table.py"]


def test_the_first_command_of_a_run_at_other_tokens_gates_at_the_baselines_settings(
    tmp_path: Path,
) -> None:
    """Case 1 (nightly, 128 tokens, C=1,4) against the shipped 1000-token baseline: the
    command runs the same run profile at the baseline's tokens and the concurrencies it has,
    and records nothing."""
    old = _shipped()
    settings = settings_from(tmp_path, **CASE_1)
    command = gate_command(settings, [3], old)
    assert command is not None
    argv = _argv(command)
    assert argv[:4] == ["pytest", "perf_tests", "--specperf-run-profile=nightly", "--spec-steps=3"]
    for option in (
        "--specperf-max-new-tokens=1000",
        "--specperf-concurrency=1,4",
        "--specperf-baselines=baselines",
    ):
        assert option in argv
    assert not any("update-baselines" in arg or "calibrate" in arg for arg in argv)
    workload = baseline_workload(settings, old)
    assert workload is not None and workload_mismatch(workload.key(), old) is None


def test_the_gate_command_takes_another_workloads_temperature_and_name_from_the_baseline(
    tmp_path: Path,
) -> None:
    old = _shipped(SHIPPED_REALISTIC)
    settings = settings_from(tmp_path, backend="sim", concurrency="1", max_new_tokens="64")
    argv = _argv(gate_command(settings, [3], old) or "")
    assert "--specperf-workload=realistic" in argv and "--specperf-max-new-tokens=1000" in argv
    workload = baseline_workload(settings, old)
    assert workload is not None and workload_mismatch(workload.key(), old) is None


def test_a_baseline_no_options_reproduce_gets_no_gate_command(tmp_path: Path) -> None:
    """An edited prompt set (another prompt_words) cannot be typed: no command claims to."""
    old = _shipped()
    edited = msgspec.structs.replace(old, workload={**old.workload, "prompt_words": 7})
    assert gate_command(settings_from(tmp_path, backend="sim"), [3], edited) is None


@pytest.mark.parametrize(
    ("run", "expected"),
    [("1,4", [1, 4]), ("1,2", [1]), ("2", [1]), ("3,100", [4, 64]), ("10", [4])],
)
def test_comparable_concurrency_keeps_the_shared_levels_else_the_nearest(
    tmp_path: Path, run: str, expected: list[int]
) -> None:
    settings = settings_from(tmp_path, concurrency=run)
    assert comparable_concurrency(settings, _shipped()) == expected


def test_a_recording_at_the_runs_settings_goes_to_a_directory_of_the_users_own(
    tmp_path: Path,
) -> None:
    settings = settings_from(tmp_path, **CASE_1)
    argv = _argv(own_record_command(settings, [3], "sim-x5"))
    own = "--specperf-baselines=.specperf/baselines/greedy-synthetic-128-tokens"
    for option in (own, "--specperf-max-new-tokens=128", "--specperf-concurrency=1,4"):
        assert option in argv
    assert "--specperf-update-baselines" in argv
    assert "--specperf-baselines=baselines" not in argv


def test_a_trace_workloads_own_directory_names_the_trace_not_a_token_count(
    tmp_path: Path,
) -> None:
    """A trace gives each request its output length: the folder names the trace, its digest
    and its replay speed, so two traces (or speeds) never share one."""
    trace = tmp_path / "Night Trace.jsonl"
    trace.write_text('{"timestamp": 0, "input_length": 10, "output_length": 5}\n')
    settings = settings_from(tmp_path, workload=f"trace:{trace}", trace_speed="2")
    typed, _ = own_baselines_dir(settings)
    digest = settings.workload.trace.partition("@")[2][:8]
    assert Path(typed).name == f"trace-night-trace-{digest}-speed-2"


def test_the_own_recording_keeps_what_an_earlier_one_there_holds(tmp_path: Path) -> None:
    """A second recording into the user's own directory is not refused as a downgrade: it
    keeps the sweep and the samples of the one already there."""
    own = tmp_path / ".specperf" / "baselines" / "greedy-synthetic-1000-tokens"
    target = own / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
    target.parent.mkdir(parents=True)
    shutil.copy(SHIPPED_CALIBRATED, target)
    settings = settings_from(tmp_path, backend="sim", concurrency="2")
    argv = _argv(own_record_command(settings, [3], "sim-x5"))
    assert "--specperf-concurrency=1,2,4,16,32,64" in argv
    assert "--specperf-calibrate" in argv and "--specperf-repeats=3" in argv


def test_not_comparable_advice_runs_at_the_baseline_first_and_never_names_its_directory_to_record(
    tmp_path: Path,
) -> None:
    settings = settings_from(tmp_path, **CASE_1)
    advice = not_comparable_advice(settings, [3], _shipped(), "sim-x5")
    first, second = advice.split("; or record a baseline at this run's settings", 1)
    assert first.startswith("gate at the baseline's settings with: pytest perf_tests ")
    gate = _argv(first.split("with: ", 1)[1])
    assert "--specperf-update-baselines" not in gate
    record = _argv(second.split("with: ", 1)[1].split(" (then")[0])
    assert "--specperf-update-baselines" in record
    assert "--specperf-baselines=baselines" not in record


def test_no_verdict_advice_records_where_there_is_no_baseline_and_gates_where_incomparable(
    tmp_path: Path,
) -> None:
    settings = settings_from(tmp_path, **CASE_1)
    advice = no_verdict_advice(
        settings,
        [
            Unjudged(9, "sim-x5", None, comparable=True),
            Unjudged(3, "sim-x5", _shipped(), comparable=False),
        ],
    )
    assert advice.startswith(
        "record the baseline with: pytest perf_tests --specperf-run-profile=nightly --spec-steps=9 "
    )
    assert "; for steps=3: gate at the baseline's settings with: " in advice


def test_a_baselines_directory_is_the_repositorys_when_git_tracks_files_in_it(
    tmp_path: Path,
) -> None:
    assert not repository_baselines(tmp_path / "baselines")  # not there
    (tmp_path / "baselines").mkdir()
    assert not repository_baselines(tmp_path / "baselines")  # not in a git work tree
    shutil.rmtree(tmp_path / "baselines")
    shipped_in_a_repository(tmp_path)
    assert repository_baselines(tmp_path / "baselines")
    assert repository_baselines(tmp_path / "baselines" / DEFAULT_PROFILE)


def test_a_re_recording_of_the_repositorys_baseline_goes_to_a_directory_of_the_users_own(
    tmp_path: Path,
) -> None:
    """Issue 49, item 6: the shipped baselines/ of a clone is never what a printed recording
    writes; the recording keeps the shipped one's sweep and calibration, in the user's own
    directory, so it can be reviewed (and committed in its place by hand)."""
    shipped_in_a_repository(tmp_path)
    settings = settings_from(tmp_path, backend="sim", concurrency="1,2")
    argv = _argv(record_hint(settings, "sim-x5", 3))
    assert "--specperf-baselines=.specperf/baselines/greedy-synthetic-1000-tokens" in argv
    assert not any(arg == "--specperf-baselines=baselines" for arg in argv)
    assert "--specperf-concurrency=1,2,4,16,32,64" in argv
    assert "--specperf-calibrate" in argv and "--specperf-calibrate-boots=3" in argv


def test_a_message_with_a_recording_into_the_users_own_directory_says_how_to_gate_there(
    tmp_path: Path,
) -> None:
    shipped_in_a_repository(tmp_path)
    said = record_advice(settings_from(tmp_path, backend="sim"), "sim-x5", 3)
    assert said.endswith(
        " (into a directory of your own: git tracks baselines, which no printed command "
        "writes; then gate with --specperf-baselines=.specperf/baselines/"
        "greedy-synthetic-1000-tokens)"
    )


def test_a_recording_into_a_directory_git_does_not_track_goes_where_the_run_was_told(
    tmp_path: Path,
) -> None:
    settings = settings_from(tmp_path, backend="sim", baselines="bl")
    assert "--specperf-baselines=bl" in _argv(record_hint(settings, "sim-x5", 3))
    assert record_advice(settings, "sim-x5", 3) == record_hint(settings, "sim-x5", 3)


def _printed_commands_of(settings: Settings) -> dict[str, str]:
    """Every pytest command run/advice.py builds for ``settings``, by the function."""
    old = _shipped()
    incomparable = not_comparable_advice(settings, [3], old, "sim-x5")
    return {
        "record_command": record_command(settings, [3], "sim-x5"),
        "record_hint": record_hint(settings, "sim-x5", 3),
        "gate_command": gate_command(settings, [3], old) or "",
        "own_record_command": own_record_command(settings, [3], "sim-x5"),
        "not_comparable_advice (gate)": incomparable.split("with: ")[1].split(";")[0],
        "not_comparable_advice (record)": incomparable.split("with: ")[2].split(" (then")[0],
    }


def test_every_printed_command_keeps_the_runs_out_directory_run_profile_and_samples(
    tmp_path: Path,
) -> None:
    """Issue 49's friction: printed re-record commands dropped --specperf-out and the run
    profile's samples (one overwrote the quick start's .specperf/ and recorded 1 sample for
    a nightly that takes 5)."""
    settings = settings_from(tmp_path, **CASE_1, out="nightly-out")
    assert settings.repeats == 5
    for name, command in _printed_commands_of(settings).items():
        argv = _argv(command)
        assert argv[:3] == ["pytest", "perf_tests", "--specperf-run-profile=nightly"], name
        assert "--specperf-out=nightly-out" in argv, name
        assert "--specperf-repeats=5" in argv, name


def test_a_recording_never_takes_fewer_samples_per_point_than_the_run(tmp_path: Path) -> None:
    """Re-recording the shipped 3 boots x 3 samples from a run of 5 samples per point: 5."""
    settings = settings_from(tmp_path, backend="sim", repeats="5")
    argv = _argv(record_command(settings, [3], "sim-x5", old=_shipped()))
    assert "--specperf-repeats=5" in argv and "--specperf-calibrate-boots=3" in argv


def test_bench_promotes_a_run_into_a_directory_of_the_users_own(tmp_path: Path) -> None:
    """specperf bench's refresh: pasteable (no placeholder DIR), never the shipped baselines."""
    settings = settings_from(tmp_path, out="bench-out", max_new_tokens="60")
    assert promote_command(settings, Path("bench-out/results.json")) == (
        "specperf baseline promote bench-out/results.json "
        "--baselines bench-out/baselines/greedy-synthetic-60-tokens"
    )


def test_only_run_advice_builds_the_commands_the_suite_prints() -> None:
    """A command printed for the user (``pytest perf_tests ...``, ``specperf baseline
    promote ...``) is built by run/advice.py alone, so the rule it keeps (the run's out
    directory, run profile and samples; never the repository's baselines) holds for every
    one (tests/e2e/test_printed_commands_e2e.py runs them)."""
    # A string that starts a command, or the list run/advice.py joins one from.
    building = re.compile(r"[\"']pytest perf_tests|\bTEST_PATH\b|[\"']specperf[\"'], [\"']baseline")
    naming = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if building.search(path.read_text())
    )
    assert naming == ["run/advice.py"]
