"""Workloads, goodput under SLOs and the recommendation, as a user runs them on the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import FAST_ARGS, suite_results

pytestmark = pytest.mark.usefixtures("no_leftover_sims")


def test_realistic_workload_with_slos_gives_goodput_and_a_schedule(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """Sampled prompts accept fewer drafts than the greedy workload; with --specperf-slo each
    point has its goodput and each depth its SLO capacity; the recommendation has a schedule;
    --specperf-refine reports what it did and leaves no server behind."""
    realistic = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=1,3",
        *FAST_ARGS,
        "--specperf-workload=realistic",
        "--specperf-slo=ttft_p99_ms=60000,e2e_p99_ms=600000",
        "--specperf-refine",
    )
    realistic.stdout.fnmatch_lines(
        [
            "*Goodput under SLOs (ttft_p99_ms=60000, e2e_p99_ms=600000;*",
            "*Recommendation (which depth at which load)*",
            "schedule (by goodput tok/s): C 1*",
            "KV cost per extra step, steps=1->3: * tokens, * running requests",
            "steps=3: largest concurrency meeting the SLOs: C=4",
            "refine: *",
        ]
    )
    results = suite_results(suite_dir)
    assert results["recommendation"]["metric"] == "goodput_tok_s"
    assert results["slo"]["ttft_p99_ms"] == 60000
    deep = next(run for run in results["runs"] if run["depth"] == 3)
    assert deep["workload"]["workload"] == "realistic"
    assert all(point["goodput"]["meets_slo"] for point in deep["points"])

    greedy = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=3", *FAST_ARGS, "--specperf-concurrency=1"
    )
    assert greedy.ret == 0
    greedy_deep = suite_results(suite_dir)["runs"][0]

    def accept(run: dict) -> float:
        return sum(p["tokens"] for p in run["points"]) / sum(
            p["spec_verify_ct"] for p in run["points"]
        )

    assert accept(deep) < accept(greedy_deep)


def test_a_trace_line_no_request_can_hold_is_refused_before_anything_boots(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """A trace line of input_length 50,000,000 on the simulator: a usage error naming the file,
    the line and the limit, no server started, no server log (it was an HTTP 413 after the
    boot, naming no line)."""
    trace = suite_dir / "long.jsonl"
    trace.write_text(
        '{"timestamp": 0, "input_length": 100, "output_length": 10}\n'
        '{"timestamp": 5, "input_length": 50000000, "output_length": 10}\n'
    )
    result = pytester.runpytest_subprocess(
        "perf_tests", *FAST_ARGS, "--spec-steps=1", "--specperf-workload=trace:long.jsonl"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*trace {trace} line 2: input_length 50,000,000*1,048,576*"])
    assert not list(suite_dir.glob(".specperf/server-steps*.log"))
