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

from tests.e2e.conftest import FAST_ARGS

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
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--specperf-update-baselines: each gated test reads RECORDED (R), says what, exit 0."""
    result = pytester.runpytest_subprocess(*RECORD, "-v", "--junitxml=junit.xml")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*test_kv_capacity_not_below_baseline[[]steps3[]] RECORDED*",
            "*test_throughput_floor[[]steps3-c1[]] RECORDED*",
            "RECORDED *test_throughput_floor[[]steps3-c4[]]: steps=3 C=4: agg * tok/s, "
            "per-req * tok/s, 8/8 ok",
            "baseline steps=3: wrote *steps-3.json",
            "*= 4 recorded in *",
        ]
    )
    assert "skipped" not in result.stdout.str()
    # Not a terminal: no progress line, not even a wiped one.
    assert CURSOR_SAVE not in result.stdout.str() and "requests," not in result.stdout.str()
    recorded = junit_properties(suite_dir / "junit.xml")["test_accept_length_floor[steps3]"]
    assert recorded["specperf.recorded"].startswith("steps=3 accept length ")


def test_gate_run_leaves_figures_in_junit_and_one_benchmark_record_per_point(
    pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--junitxml gets measured/floor/baseline; --benchmark-json one record per (depth, C)."""
    # Inherited from an xdist run of these tests, it would make pytest-benchmark in the
    # pytest below believe it is an xdist worker, and turn itself off.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    # A wide tolerance (floors at 10% of the baseline): this test is about where the figures
    # go, and must not fail on a noisy machine.
    assert pytester.runpytest_subprocess(*RECORD, "--specperf-tolerance=0.9").ret == 0
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        *FAST_ARGS,
        "--junitxml=junit.xml",
        "--benchmark-json=bench.json",
    )
    result.assert_outcomes(passed=4)
    assert "Benchmark fixture was not used" not in result.stdout.str()
    results = json.loads((suite_dir / ".specperf" / "results.json").read_text())
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
    assert "4 skipped" in text.splitlines()[-1]
