"""Following the suite's own advice never damages a baseline, and a gate that judged nothing
is not green: issues 24 and 34's reports, replayed on the simulator as a new user met them.

Every run works in a pytester directory with its own baselines directory (a copy of a shipped
file where one is needed, or a git repository holding a copy of all of baselines/), so no
command run here can touch the repository's baselines/.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO
from tests.support.e2e import sim_processes
from tests.support.repository import c1_baseline

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

# A command as the suite prints it: from "pytest perf_tests" to the first ";", "(" or space
# that does not start another option (the commands are shlex-joined; these paths need no
# quotes).
PRINTED_COMMAND = re.compile(r"\bpytest perf_tests(?: [^\s;()]+)+")

# Small and fast, but without --specperf-allow-no-baseline (FAST_ARGS has it).
TINY = [
    "--spec-steps=3",
    "--specperf-backend=sim",
    "--specperf-sim-speedup=10",
    "--specperf-max-new-tokens=100",
    "--specperf-concurrency=1",
    "--specperf-min-point-seconds=0",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:benchmark",
    "-rfs",
]
SHIPPED_STEPS_3 = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"


def _verdicts(workdir: Path) -> list[dict]:
    results = json.loads((workdir / ".specperf" / "results.json").read_text())
    return [v for run in results["runs"] for v in run["verdicts"]]


def _specperf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_specperf.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_printed_refresh_command_rewrites_the_baseline_it_names_and_promote_refuses_a_regression(
    pytester: pytest.Pytester, suite_dir: Path, tmp_path: Path
) -> None:
    """Record with --sim-slowdown into a temp dir, gate without it: the improvement's command
    names that dir, the sweep and the tokens, and run as printed it rewrites the file the
    message named. Then a slowed run fails saying what to do, and `promote` refuses it."""
    baselines = tmp_path / "bl"
    where = f"--specperf-baselines={baselines}"
    slow = "--specperf-server-arg=--sim-slowdown=0.2"
    record = pytester.runpytest_subprocess(
        "perf_tests", *TINY, where, slow, "--specperf-update-baselines"
    )
    assert record.ret == 0, record.stdout.str()
    path = baselines / DEFAULT_PROFILE / "sim-x10" / "steps-3.json"
    slowed_figure = json.loads(path.read_text())["points"]["1"]["agg_tok_s"]

    gate = pytester.runpytest_subprocess("perf_tests", *TINY, where)
    assert gate.ret == 0, gate.stdout.str()
    improvements = [v for v in _verdicts(suite_dir) if v["outcome"] == "improvement"]
    assert improvements, gate.stdout.str()
    command = improvements[0]["refresh_command"]
    assert f"[{path}]" in improvements[0]["message"]
    assert command in gate.stdout.str()
    argv = shlex.split(command)
    assert argv[:3] == ["pytest", "perf_tests", "--spec-steps=3"]
    for option in (where, "--specperf-concurrency=1", "--specperf-max-new-tokens=100"):
        assert option in argv
    assert not any("slowdown" in arg for arg in argv)

    rerecord = pytester.runpytest_subprocess(*argv[1:], "-p", "no:cacheprovider")
    assert rerecord.ret == 0, rerecord.stdout.str()
    rerecord.stdout.fnmatch_lines([f"baseline steps=3: wrote {path}"])
    assert json.loads(path.read_text())["points"]["1"]["agg_tok_s"] > slowed_figure * 1.1

    regressed = pytester.runpytest_subprocess("perf_tests", *TINY, where, slow)
    assert regressed.ret == 1
    out = regressed.stdout.str()
    assert re.search(r"steps=3 C=1 agg [\d,.]+ < floor [\d,.]+ \(-\d+\.\d% vs baseline\)", out), out
    assert f"what to do: open {suite_dir / '.specperf' / 'report.md'}" in out
    assert "slowed the server on purpose (--sim-slowdown=0.2)" in out

    before = path.read_bytes()
    results = str(suite_dir / ".specperf" / "results.json")
    refused = _specperf("baseline", "promote", results, "--specperf-baselines", str(baselines))
    assert refused.returncode == 2
    assert "regression" in refused.stderr and "--force" in refused.stderr
    dry = _specperf(
        "baseline",
        "promote",
        results,
        "--specperf-baselines",
        str(baselines),
        "--force",
        "--dry-run",
    )
    assert dry.returncode == 0, dry.stderr
    assert f"dry run: {path} not written" in dry.stdout
    assert path.read_bytes() == before


def test_a_recording_does_not_silently_downgrade_a_calibrated_baseline(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """The shipped calibrated steps-3 (3 boots, 9 samples per point, 1000 tokens, C=1..64) is
    kept when a one-sample recording at another workload and sweep would replace it: one line
    names what would be lost and what to run instead, and prints no command that allows the
    downgrade; --specperf-allow-baseline-downgrade, typed deliberately, still replaces it."""
    path = suite_dir / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
    path.parent.mkdir(parents=True)
    shutil.copy(SHIPPED_STEPS_3, path)
    before = path.read_bytes()
    args = [*TINY, "--specperf-sim-speedup=5", "--specperf-update-baselines"]

    refused = pytester.runpytest_subprocess("perf_tests", *args)
    assert refused.ret == 1, refused.stdout.str()
    refused.stdout.fnmatch_lines(
        [
            f"baseline steps=3: NOT written: refusing to replace {path}: it would drop "
            "C=4, 16, 32, 64, lower samples per point 9 -> 1, lower boots 3 -> 1, lose its "
            "calibration and replace its workload (max_new_tokens 1000 -> 100); gate at the "
            "baseline's settings with: pytest perf_tests --spec-steps=3 *"
            "--specperf-max-new-tokens=1000 --specperf-concurrency=1 --specperf-out=.specperf "
            "--specperf-repeats=1; or record a baseline at "
            "this run's settings in a directory of your own with: *"
            "--specperf-baselines=.specperf/baselines/greedy-synthetic-100-tokens *"
            "replacing it anyway, and losing that, takes an option you type yourself "
            "(docs/how-to/baseline-safety.md)"
        ]
    )
    assert "allow-baseline-downgrade" not in refused.stdout.str()
    summary = refused.stdout.lines[-1]
    assert re.search(r"\d+ unrecorded in", summary) and " recorded" not in summary, summary
    assert path.read_bytes() == before

    allowed = pytester.runpytest_subprocess(
        "perf_tests", *args, "--specperf-allow-baseline-downgrade"
    )
    assert allowed.ret == 0, allowed.stdout.str()
    allowed.stdout.fnmatch_lines([f"baseline steps=3: wrote {path}"])
    assert json.loads(path.read_text())["workload"]["max_new_tokens"] == 100


def test_a_gate_that_judged_nothing_fails_with_one_line_and_the_record_command(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """No baseline: every throughput check skips, and the run is red with one line that
    says why and gives a pasteable command (not a green build with no verdict)."""
    result = pytester.runpytest_subprocess("perf_tests", *TINY)
    assert result.ret == 1, result.stdout.str()
    lines = [
        line
        for line in result.stdout.lines
        if line.startswith("specperf: no throughput verdict for steps=3")
    ]
    assert len(lines) == 1, result.stdout.str()
    line = lines[0]
    assert "no baseline (" in line and "--specperf-allow-no-baseline" in line
    command = line.split("record the baseline with: ")[1].split("; or,")[0]
    argv = shlex.split(command)
    for option in (
        "--spec-steps=3",
        "--specperf-backend=sim",
        "--specperf-sim-speedup=10",
        "--specperf-baselines=baselines",
        "--specperf-concurrency=1",
        "--specperf-max-new-tokens=100",
        "--specperf-update-baselines",
    ):
        assert option in argv, command


def test_open_loop_points_run_alone_with_no_baseline_fail_as_closed_loop_ones_do(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """Only the open-loop test selected (a rate point here; a trace replay takes the same
    path) and no baseline: red with the one no-verdict line, not a green run of skips (it was
    green before: only the closed-loop tests' ids marked a depth as gated)."""
    open_loop = [
        *TINY,
        "--specperf-max-new-tokens=32",
        "--specperf-request-rate=8",
        "--specperf-rate-seconds=1",
        "--specperf-warmup-rounds=0",
        "--specperf-repeats=1",
        "-k",
        "test_open_loop_floor",
    ]
    result = pytester.runpytest_subprocess("perf_tests", *open_loop)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["specperf: no throughput verdict for steps=3, so nothing was *"])


def test_an_exploratory_run_that_judged_nothing_passes_and_says_so_in_one_line(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """The smoke run profile is exploratory: no baseline leaves the run green (exit 0), and
    the summary and report.md say, in one line, that nothing was gated and why (not only
    under -rs)."""
    result = pytester.runpytest_subprocess("perf_tests", *TINY, "--specperf-run-profile=smoke")
    assert result.ret == 0, result.stdout.str()
    lines = [line for line in result.stdout.lines if line.startswith("specperf: no verdict:")]
    assert len(lines) == 1, result.stdout.str()
    assert lines[0].startswith(
        "specperf: no verdict: an exploratory run "
        "(--specperf-allow-no-baseline, on in the smoke run profile): steps=3: no baseline ("
    )
    assert lines[0].endswith("nothing was gated (pytest -rs lists the skips)")
    assert "no throughput verdict" not in result.stdout.str()  # the red line of a gating run
    # report.md says the same, not only "no verdicts recorded" (issue 49).
    report = (suite_dir / ".specperf" / "report.md").read_text()
    assert lines[0].removeprefix("specperf: ") in report
    assert "no verdicts recorded" not in report


def test_a_sim_run_against_a_published_gpu_baseline_fails_naming_both_backends(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """The shipped real-GPU baseline (backend sglang) does not judge simulator figures: the
    depth fails saying so, rather than passing as a several-fold "improvement"."""
    shipped = REPO / "baselines" / DEFAULT_PROFILE / "4x-rtx-pro-6000-blackwell"
    copy = suite_dir / "baselines" / DEFAULT_PROFILE / shipped.name
    copy.mkdir(parents=True)
    shutil.copy(shipped / "steps-3.json", copy / "steps-3.json")
    gpu = f"--specperf-hardware={shipped.name}"
    result = pytester.runpytest_subprocess("perf_tests", *TINY, gpu)
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*recorded on backend sglang, this run uses backend sim: not comparable*"]
    )
    assert "--specperf-backend=sglang" in result.stdout.str()


def test_url_mode_takes_its_depth_from_the_server_and_labels_runs_as_bench_does(
    running_sim: str, pytester: pytest.Pytester, suite_dir: Path, tmp_path: Path
) -> None:
    """--specperf-url measures the server given, a depth-3 simulator the test started, and
    boots none: --spec-steps=0,1 is a usage error before anything is measured; the run takes
    its depth from /server_info, records the server as the simulator it says it is, measures
    no CPU of a process it did not start; pytest and `specperf bench` label the server with
    the same profile."""
    # running_sim comes first: its httpx calls must not run inside pytester's sys.modules
    # snapshot, whose restore would drop lazily imported httpcore modules and leave later
    # tests with exception classes httpx no longer maps.
    before = len(sim_processes())
    assert before == 1, "the user's own server is the only tagged one"
    url = f"--specperf-url={running_sim}"
    wrong = pytester.runpytest_subprocess("perf_tests", url, "--spec-steps=0,1", *TINY[3:])
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    wrong.stderr.fnmatch_lines(
        [f"*--spec-steps=0,1: the server at {running_sim} runs steps=3 (its /server_info)*"]
    )
    assert not (suite_dir / ".specperf" / "results.json").exists()

    measured = pytester.runpytest_subprocess(
        "perf_tests", url, *TINY[3:], "--specperf-allow-no-baseline"
    )
    assert measured.ret == 0, measured.stdout.str()
    assert len(sim_processes()) == before
    measured.stdout.fnmatch_lines(["*specperf: profile=* url=http://127.0.0.1:* depths=[[]3[]]*"])
    (run,) = json.loads((suite_dir / ".specperf" / "results.json").read_text())["runs"]
    # The server says it is the simulator (its /server_info): recorded as such, never as a GPU.
    assert run["backend"] == "sim"
    assert run["server"]["speculative_num_steps"] == 3
    assert not list((suite_dir / ".specperf").glob("server-steps*.log"))
    # Not this run's process: its CPU is not measured.
    assert all(point.get("server_cpu") is None for point in run["points"])
    pytest_profile = run["profile"]
    out = tmp_path / "bench"
    bench = _specperf(
        "bench",
        "--url",
        running_sim,
        "--concurrency",
        "1",
        "--max-new-tokens",
        "100",
        "--min-point-seconds",
        "0",
        "--out",
        str(out),
    )
    assert bench.returncode == 0, bench.stderr
    bench_results = json.loads((out / "results.json").read_text())
    assert bench_results["runs"][0]["profile"] == pytest_profile == DEFAULT_PROFILE


def test_a_simulator_by_url_against_a_published_gpu_baseline_fails_naming_both_backends(
    running_sim: str, pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """A server given by --specperf-url that says it is the simulator is judged as the
    simulator: with the GPU's hardware key it meets the shipped GPU baseline and fails naming
    both backends, rather than passing as a several-fold "improvement"."""
    shipped = REPO / "baselines" / DEFAULT_PROFILE / "4x-rtx-pro-6000-blackwell"
    copy = suite_dir / "baselines" / DEFAULT_PROFILE / shipped.name
    copy.mkdir(parents=True)
    shutil.copy(shipped / "steps-3.json", copy / "steps-3.json")
    url = f"--specperf-url={running_sim}"
    gpu = f"--specperf-hardware={shipped.name}"
    result = pytester.runpytest_subprocess("perf_tests", url, gpu, *TINY[3:])
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*recorded on backend sglang, this run uses backend sim: not comparable*"]
    )
    assert f"the server at {running_sim} runs backend sim" in result.stdout.str()
    recorded = json.loads((suite_dir / ".specperf" / "results.json").read_text())
    assert recorded["runs"][0]["backend"] == "sim"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--specperf-baselines=a-file"], "*--specperf-baselines: 'a-file' is not a directory*"),
        (["--specperf-out=a-file/out"], "*--specperf-out: 'a-file/out' is not a directory (*"),
        (["--specperf-refine", "-n", "2"], "*--specperf-refine: not under xdist (-n)*"),
    ],
)
def test_options_that_can_be_checked_before_boot_are_usage_errors(
    pytester: pytest.Pytester, suite_dir: Path, args: list[str], message: str
) -> None:
    """A baselines (or out) path that is a file, refine under xdist: one line, nothing booted."""
    (suite_dir / "a-file").write_text("not a directory\n")
    result = pytester.runpytest_subprocess("perf_tests", *TINY, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (suite_dir / ".specperf").exists()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh clone as far as the suite sees it: perf_tests and every shipped baseline,
    committed to a git repository of its own, so `git diff` tells what a command changed.

    Its ini turns the warm-up off (as CI's perf step does: the simulator has no cold shapes)
    and takes one sample per point (the ini's repeats win over a run profile's): what a
    printed command does to baselines/ does not depend on how many samples its points take,
    and the three replays took 145 s at the profiles' 3 and 5 instead of 64 s. The command
    lines are the suite's own, and neither setting is in any of them."""
    shutil.copytree(REPO / "perf_tests", pytester.path / "perf_tests")
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\nspecperf_warmup_rounds = 0\nspecperf_repeats = 1\n"
    )
    shutil.copytree(REPO / "baselines", pytester.path / "baselines")
    for args in (["init", "-q"], ["add", "baselines"], ["commit", "-q", "-m", "shipped"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=pytester.path,
            check=True,
            capture_output=True,
        )
    # pytest shortens the short summary's lines to the terminal's width unless in CI: the
    # commands in skip reasons are read whole.
    monkeypatch.setenv("CI", "1")
    return pytester.path


def _baselines_changes(project: Path) -> str:
    """What `git diff --exit-code -- baselines/` and untracked files say; "" when clean."""
    diff = subprocess.run(
        ["git", "diff", "--exit-code", "--stat", "--", "baselines/"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", "baselines/"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return "" if diff.returncode == 0 and not status.stdout else diff.stdout + status.stdout


def _printed_commands(output: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in PRINTED_COMMAND.finditer(output)))


def _replay_every_printed_command(
    pytester: pytest.Pytester, project: Path, output: str
) -> dict[str, str]:
    """Runs each command ``output`` printed, as printed; baselines/ must be as shipped after
    every one. Their outputs, by command."""
    commands = _printed_commands(output)
    assert commands, output
    outputs: dict[str, str] = {}
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["pytest", "perf_tests"], command
        assert not any("allow-baseline-downgrade" in arg for arg in argv), command
        ran = pytester.runpytest_subprocess(*argv[1:], "-p", "no:cacheprovider", "-rfs")
        out = ran.stdout.str()
        assert ran.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), f"{command}\n{out}"
        assert _baselines_changes(project) == "", f"{command} changed baselines/:\n{out}"
        outputs[command] = out
    return outputs


def _check_the_advice(project: Path, outputs: dict[str, str], tokens: int) -> None:
    """The first printed command gates at the baseline's settings (judged: no "no throughput
    verdict"), and the recording at the run's settings went to the user's own directory."""
    gate, *rest = outputs
    gate_argv = shlex.split(gate)
    assert "--specperf-max-new-tokens=1000" in gate_argv, gate
    assert not any(a.startswith(("--specperf-update", "--specperf-calibrate")) for a in gate_argv)
    assert "no throughput verdict" not in outputs[gate], outputs[gate]
    recordings = [c for c in rest if "--specperf-update-baselines" in shlex.split(c)]
    assert recordings, rest
    own = project / ".specperf" / "baselines" / f"greedy-synthetic-{tokens}-tokens"
    written = own / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
    assert f"baseline steps=3: wrote {written}" in outputs[recordings[0]]


def test_issue_34_case_1_replayed_as_written_changes_no_shipped_baseline(
    pytester: pytest.Pytester, project: Path
) -> None:
    """Issue 34, case 1, on a copy of the shipped baselines: the nightly run profile at 128
    tokens and C=1,4 is not comparable with the calibrated 1000-token steps-3. It exits 1;
    its first advice runs at the baseline's settings; no printed command records into
    baselines/ or allows a downgrade; each, run as printed, leaves baselines/ as shipped
    (the old advice replaced the calibrated file with one 128-token sample)."""
    case_1 = [
        "--specperf-run-profile=nightly",
        "--specperf-backend=sim",
        "--spec-steps=3",
        "--specperf-concurrency=1,4",
        "--specperf-max-new-tokens=128",
    ]
    first = pytester.runpytest_subprocess("perf_tests", *case_1, "-p", "no:cacheprovider", "-rfs")
    out = first.stdout.str()
    assert first.ret == pytest.ExitCode.TESTS_FAILED, out
    line = next(x for x in first.stdout.lines if x.startswith("specperf: no throughput verdict"))
    assert "(max_new_tokens: baseline 1000 vs run 128): not comparable" in line
    advice = line.split("so nothing was gated (", 1)[1].split(")); ", 1)[1]
    assert advice.startswith(
        "gate at the baseline's settings with: pytest perf_tests --specperf-run-profile=nightly "
        "--spec-steps=3 --specperf-backend=sim --specperf-sim-speedup=5 "
        "--specperf-baselines=baselines --specperf-max-new-tokens=1000 "
        "--specperf-concurrency=1,4 --specperf-out=.specperf --specperf-repeats=1;"
    ), advice
    for command in _printed_commands(out):
        argv = shlex.split(command)
        if "--specperf-update-baselines" in argv or "--specperf-calibrate" in argv:
            assert "--specperf-baselines=baselines" not in argv, command

    outputs = _replay_every_printed_command(pytester, project, out)
    _check_the_advice(project, outputs, tokens=128)


@pytest.mark.parametrize(
    "mismatch",
    [
        pytest.param(
            [
                "--specperf-run-profile=pr",
                "--specperf-concurrency=1",
                "--specperf-max-new-tokens=64",
            ],
            id="pr-tokens",
        ),
        pytest.param(
            ["--specperf-run-profile=nightly", "--specperf-concurrency=2"],
            id="nightly-concurrency",
        ),
    ],
)
def test_every_printed_command_of_a_mismatched_run_profile_leaves_baselines_as_shipped(
    pytester: pytest.Pytester, project: Path, mismatch: list[str]
) -> None:
    """The pr and nightly run profiles at settings the shipped baselines were not recorded
    at (other tokens; a concurrency they lack): red, and every printed command, run as
    printed, leaves baselines/ as shipped; the first gates at the baseline's settings."""
    args = ["--specperf-backend=sim", "--spec-steps=3", *mismatch]
    first = pytester.runpytest_subprocess("perf_tests", *args, "-p", "no:cacheprovider", "-rfs")
    out = first.stdout.str()
    assert first.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "specperf: no throughput verdict for steps=3" in out
    tokens = 64 if "--specperf-max-new-tokens=64" in mismatch else 1000
    outputs = _replay_every_printed_command(pytester, project, out)
    _check_the_advice(project, outputs, tokens=tokens)


def test_a_point_its_baseline_lacks_fails_a_gating_run_and_is_named_in_an_exploratory_one(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """Issue 49, item 5, at small settings: a baseline of C=1, then C=1,2 in the nightly run
    profile. Before, exit 0 with C=2 measured and never judged (only -rs said so). Now red,
    the last line naming C=2; with --specperf-allow-no-baseline green, the last line saying
    C=2 was not judged; report.md says it either way."""
    small = [
        *TINY[:3],
        "--specperf-max-new-tokens=32",
        "--specperf-min-point-seconds=0",
        "--specperf-warmup-rounds=0",
        "--specperf-repeats=1",
        "-p",
        "no:cacheprovider",
    ]
    c1_baseline(suite_dir / "baselines", tokens=32)
    path = suite_dir / "baselines" / DEFAULT_PROFILE / "sim-x10" / "steps-3.json"
    said = f"steps=3 C=2: not judged: no baseline point [{path}]"
    report = suite_dir / ".specperf" / "report.md"
    nightly = [*small, "--specperf-run-profile=nightly", "--specperf-concurrency=1,2"]

    gated = pytester.runpytest_subprocess("perf_tests", *nightly)
    assert gated.ret == pytest.ExitCode.TESTS_FAILED, gated.stdout.str()
    last = gated.stdout.lines[-2]  # the line before pytest's own summary line
    assert last.startswith(f"specperf: not judged, so the run fails: {said}; "), last
    assert last.endswith("or, for an exploratory run, add --specperf-allow-no-baseline")
    assert said in report.read_text()

    allowed = pytester.runpytest_subprocess("perf_tests", *nightly, "--specperf-allow-no-baseline")
    assert allowed.ret == pytest.ExitCode.OK, allowed.stdout.str()
    last = allowed.stdout.lines[-2]
    assert last.startswith("specperf: not judged: an exploratory run "), last
    assert said in last and said in report.read_text()
