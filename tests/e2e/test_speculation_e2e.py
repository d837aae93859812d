"""The control, per-position acceptance, losslessness and the self-test, as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import sim_processes, suite_results

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

# Short points: the speculation checks need every depth's sweep, not long ones.
SHORT = [
    "--specperf-backend=sim",
    "--specperf-sim-speedup=20",
    "--specperf-max-new-tokens=64",
    "--specperf-concurrency=1",
    "--specperf-min-point-seconds=0",
    "-p",
    "no:cacheprovider",
    "-rsf",
]


def test_control_run_shows_speedup_acceptance_and_equal_greedy_outputs(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--spec-steps=0,3 with --specperf-self-test: the speedup table, per-position acceptance,
    identical greedy outputs, and each depth's self-test catching the injected slowdown."""
    result = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=0,3", "--specperf-self-test", *SHORT
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("passed", 0) == 3, outcomes
    result.stdout.fnmatch_lines(
        [
            "*Speedup over no speculation (steps=0)*",
            "C | steps=3 agg / per-req",
            "1 | *x / *x",
            "*Acceptance per draft position*",
            "3 | * | * | * | *",
            "*Greedy output equality (temperature 0)*",
            "3 vs 0 | 6/6 (100%) | -",
            "self-test steps=0: /slow_down * the gate CAUGHT it*",
            "self-test steps=3: /slow_down * the gate CAUGHT it*",
        ]
    )
    results = suite_results(suite_dir)
    control, deeper = results["runs"]
    assert "--speculative" not in control["server"]["launch_command"]
    assert control["position_accept_rate"] == [] and len(deeper["position_accept_rate"]) == 3
    assert [(s["depth"], s["concurrency"]) for s in results["speedup"]] == [(3, 1)]
    assert results["lossless"][0]["identical"] == results["lossless"][0]["prompts"] == 6
    assert deeper["self_test"]["caught"] and deeper["self_test"]["reset"]
    assert not sim_processes()


def test_corrupted_depth_fails_the_losslessness_check(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--sim-corrupt-output=1 makes depth 1 lossy: the check fails naming prompt and token."""
    result = pytester.runpytest_subprocess(
        "perf_tests/test_losslessness.py",
        "--spec-steps=0,1",
        "--specperf-server-arg=--sim-corrupt-output=1",
        *SHORT,
    )
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_greedy_outputs_equal_across_depths*steps1*",
            "*steps=1 vs steps=0: prompt 'python-retry' differs from token 16 on*",
            "1 vs 0 | 0/6 (0%) | python-retry: 16, *",
        ]
    )
