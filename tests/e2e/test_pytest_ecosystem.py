"""The suite in the pytest ecosystem: RECORDED outcomes, JUnit properties, pytest-benchmark
JSON and the live progress line, as a user gets them from `pytest perf_tests ...`."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.support.e2e import FAST_ARGS, SharedRun, suite_results, with_the_recorded_baseline

pytestmark = pytest.mark.usefixtures("no_leftover_sims")
RECORD = ("perf_tests", "--spec-steps=3", *FAST_ARGS, "--specperf-update-baselines")
CURSOR_SAVE = "\x1b7"


def junit_properties(path: Path) -> dict[str, dict[str, str]]:
    """test name -> {property name: value} of a JUnit XML file."""
    root = ElementTree.parse(path).getroot()
    return {
        case.attrib["name"]: {p.attrib["name"]: p.attrib["value"] for p in case.iter("property")}
        for case in root.iter("testcase")
    }


def test_recording_run_reports_recorded_tests_with_their_figures(
    shared_recording: SharedRun,
) -> None:
    """--specperf-update-baselines: each gated test reads RECORDED (R), says what, exit 0
    (the shared recording: RECORD with -v --junitxml=junit.xml)."""
    result = shared_recording.result
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*test_kv_capacity_not_below_baseline[[]steps3[]] RECORDED*",
            "*test_throughput_floor[[]steps3-c1[]] RECORDED*",
            "RECORDED *test_throughput_floor[[]steps3-c4[]]: steps=3 C=4: agg * tok/s, "
            "per-req * tok/s, 8/8 ok",
            "baseline steps=3: wrote *steps-3.json",
            "*= 4 skipped, 2 deselected, 6 recorded in *",
        ]
    )
    # Only the checks that need another depth, the control, --specperf-slo or
    # --specperf-self-test skip.
    skipped = [line for line in result.stdout.lines if "::" in line and " SKIPPED" in line]
    assert [line.split("::")[0] for line in skipped] == [
        "perf_tests/test_goodput.py",
        "perf_tests/test_losslessness.py",
        "perf_tests/test_speedup.py",
        "perf_tests/test_self_test.py",
    ]
    # Not a terminal: no progress line, not even a wiped one.
    assert CURSOR_SAVE not in result.stdout.str() and "requests," not in result.stdout.str()
    junit = shared_recording.path / "junit.xml"
    recorded = junit_properties(junit)["test_accept_length_floor[steps3]"]
    assert recorded["specperf.recorded"].startswith("steps=3 accept length ")


def test_gate_run_leaves_figures_in_junit_and_one_benchmark_record_per_point(
    pytester: pytest.Pytester,
    suite_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    shared_recording: SharedRun,
) -> None:
    """--junitxml gets measured/floor/baseline; --benchmark-json one record per (depth, C)."""
    # Inherited from an xdist run of these tests, it would make pytest-benchmark in the
    # pytest below believe it is an xdist worker, and turn itself off.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    # A wide tolerance (floors at 10% of the baseline): this test is about where the figures
    # go, and must not fail on a noisy machine. The shared recording's baseline with the
    # tolerance that RECORD plus --specperf-tolerance=0.9 would have written into it.
    path = with_the_recorded_baseline(shared_recording, suite_dir)
    baseline = json.loads(path.read_text())
    assert baseline["tolerance"]["throughput"] == 0.1
    baseline["tolerance"]["throughput"] = 0.9
    path.write_text(json.dumps(baseline))
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        *FAST_ARGS,
        "--junitxml=junit.xml",
        "--benchmark-json=bench.json",
    )
    # The pooled depth test needs calibrated noise: a one-run baseline skips it; greedy
    # outputs, the speedup, the SLO capacity and the self-test need another depth, the
    # control, their options.
    result.assert_outcomes(passed=5, skipped=5)
    assert "Benchmark fixture was not used" not in result.stdout.str()
    results = suite_results(suite_dir)
    points = {p["concurrency"]: p for p in results["runs"][0]["points"]}

    figures = junit_properties(suite_dir / "junit.xml")["test_throughput_floor[steps3-c4]"]
    assert float(figures["specperf.agg_tok_s"]) == pytest.approx(points[4]["agg_tok_s"], abs=1e-3)
    baseline = float(figures["specperf.agg_tok_s.baseline"])
    assert float(figures["specperf.agg_tok_s.floor"]) == pytest.approx(baseline * 0.1, abs=1e-3)
    assert {"specperf.per_req_tok_s.floor", "specperf.per_req_tok_s.baseline"} <= set(figures)

    benchmarks = json.loads((suite_dir / "bench.json").read_text())["benchmarks"]
    by_name = {b["name"]: b for b in benchmarks}
    assert sorted(by_name) == [
        "test_throughput_floor[steps3-c1]",
        "test_throughput_floor[steps3-c4]",
    ]
    record = by_name["test_throughput_floor[steps3-c4]"]
    assert record["stats"]["rounds"] == points[4]["ok"] == 8
    assert record["extra_info"]["agg_tok_s"] == points[4]["agg_tok_s"]
    assert record["extra_info"]["gate"]["specperf.agg_tok_s.baseline"] == pytest.approx(baseline)


# One point at C=1, no baseline: its tests skip, but the point is measured (and would be a
# pytest-benchmark record) all the same.
ONE_POINT_C1 = (
    "perf_tests/test_throughput.py",
    "--spec-steps=3",
    *FAST_ARGS,
    "--specperf-concurrency=1",
)
BENCHMARK_TABLE = "benchmark 'specperf steps=3'"


def test_a_plain_run_shows_no_benchmark_banner_or_table(
    pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --benchmark-* option: the suite's own tables only, not pytest-benchmark's."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    result = pytester.runpytest_subprocess(*ONE_POINT_C1)
    output = result.stdout.str()
    assert "specperf results" in output and "1 | " in output  # the seed table's row C=1
    assert not [line for line in result.stdout.lines if line.startswith("benchmark: ")]
    assert BENCHMARK_TABLE not in output
    assert "Benchmark fixture was not used" not in output


def test_benchmark_output_asked_for_comes_after_the_suites_tables(
    pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--benchmark-json: pytest-benchmark's banner, table and file, after the seed table."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    result = pytester.runpytest_subprocess(*ONE_POINT_C1, "--benchmark-json=bench.json")
    lines = result.stdout.lines
    assert [line for line in lines if line.startswith("benchmark: ")]
    seed_table = next(i for i, line in enumerate(lines) if line.startswith("C | Agg tok/s"))
    table = next(i for i, line in enumerate(lines) if BENCHMARK_TABLE in line)
    assert seed_table < table
    records = json.loads((suite_dir / "bench.json").read_text())["benchmarks"]
    assert [record["name"] for record in records] == ["test_throughput_floor[steps3-c1]"]


def test_progress_line_shows_on_a_terminal(pytester: pytest.Pytester, suite_dir: Path) -> None:
    """On a tty each point's status line is drawn and wiped (piped: the recording test above)."""
    args = ["perf_tests", "--spec-steps=3", *FAST_ARGS]

    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=suite_dir,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    output = bytearray()
    while True:
        ready, _, _ = select.select([controller], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the run is over
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert process.wait(timeout=30) == 0
    text = output.decode(errors="replace")
    assert f"{CURSOR_SAVE} steps=3 C=4: 0/8 requests" in text
    assert "steps=3 C=4: 8/8 requests" in text
    assert "10 skipped" in text.splitlines()[-1]
