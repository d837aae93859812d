"""Load as production sends it, on the simulator: a trace replayed at its timestamps, request
rates with the highest one meeting the SLOs per depth, and long prompts whose KV bounds the
running requests per depth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_specperf.measure.trace import read_trace, shipped_trace_path
from tests.support.e2e import FAST_ARGS, suite_results

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

# The send schedule is the trace's to within this (at speed 1).
SEND_TOLERANCE_S = 0.005


def _depth(results: dict[str, Any], depth: int) -> dict[str, Any]:
    return next(run for run in results["runs"] if run["depth"] == depth)


def test_trace_replay_sends_each_request_at_its_timestamp_at_depths_1_and_3(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """The shipped 200-request trace replayed at speed 1 on steps 1 and 3: each request is
    scheduled at its timestamp; 196 of 200 sent within 5 ms of it, not counting the time the
    sender's thread waited for a CPU just before it (recorded per send); none early; the
    median within 1 ms. All succeed with their trace's output lengths, and the server's running
    requests stay within its cap."""
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=1,3",
        *FAST_ARGS,
        "--specperf-workload=trace:synthetic",
        "-k",
        "test_open_loop_floor",
    )
    result.stdout.fnmatch_lines(["*Open-loop points*", "*Running requests*"])
    trace = read_trace(shipped_trace_path())
    expected = trace.offsets_s()
    outputs = sum(r.output_length for r in trace.requests)
    results = suite_results(suite_dir)
    for depth in (1, 3):
        run = _depth(results, depth)
        (point,) = run["rate_points"]
        assert point["load"] == "trace"
        assert point["ok"] == point["requests"] == 200
        assert point["tokens"] == outputs
        scheduled = [s for s, *_ in point["send_times"]]
        assert scheduled == pytest.approx(expected, abs=1e-6)
        # [scheduled, sent, held]: held is the run-queue wait of the sender's thread before
        # the send (Linux's schedstat), what a loaded machine, not the sender, made it late by.
        assert all(len(entry) == 3 for entry in point["send_times"]), "no run-queue wait"
        lags = [sent - due for due, sent, _held in point["send_times"]]
        own = [sent - due - held for due, sent, held in point["send_times"]]
        print(
            f"steps={depth}: send lateness max {max(lags) * 1000:.2f} ms, "
            f"{sum(lag > SEND_TOLERANCE_S for lag in lags)}/200 over 5 ms; without the "
            f"run-queue wait max {max(own) * 1000:.2f} ms, "
            f"{sum(lag > SEND_TOLERANCE_S for lag in own)}/200 over 5 ms; loop's worst stall "
            f"{point['client']['loop_lag_max_s'] * 1000:.1f} ms"
        )
        assert min(lags) >= 0
        assert sorted(lags)[len(lags) // 2] < 0.001
        # On a loaded 2-core machine the OS holds the client's thread off the CPU for 4-30 ms
        # now and then (a scheduler tick is 4 ms), and the loop then catches up on the other
        # streams' reads before it runs the next timer: a single send's lateness is a noise
        # figure (printed above; docs/reference/workloads.md, "How closely the sends keep the
        # schedule"), not a bound this machine can hold. What fails on a sender that drifts
        # is how many sends miss the 5 ms.
        late = [(i, round(lag * 1000, 2)) for i, lag in enumerate(own) if lag > SEND_TOLERANCE_S]
        # 98%: beside the other xdist worker's end-to-end tests (CI) 2 of 200 were seen
        # over, with two CPU hogs 1-2 (the figures above).
        assert len(late) <= 4, f"steps={depth}: sends later than 5 ms (index, ms): {late}"
        cap = run["server"]["max_running_requests"]
        assert 1 <= point["server_load"]["running_max"] <= cap
    assert result.ret == 0


def _slo_rate(results: dict[str, Any], depth: int) -> float:
    search = _depth(results, depth)["rate_search"]
    assert search["max_rate"] is not None, search
    return float(search["max_rate"])


def test_rate_sweep_finds_each_depths_highest_rate_meeting_the_slo_and_a_slower_server_less(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """Poisson rates 8 and 64 requests/s at depths 1 and 3 under a TTFT SLO: each depth's
    highest rate meeting it is bracketed and bisected; the report names the depth serving the
    most; on a server slowed by --sim-slowdown=0.5 every depth's rate is lower."""
    args = [
        "perf_tests",
        "--spec-steps=1,3",
        *FAST_ARGS,
        "--specperf-concurrency=1",
        "--specperf-request-rate=8,64",
        "--specperf-rate-seconds=1",
        "--specperf-slo=ttft_p99_ms=100",
        "-k",
        "open_loop",
    ]
    fast = pytester.runpytest_subprocess(*args)
    fast.stdout.fnmatch_lines(
        [
            "*Highest request rate meeting the SLOs (ttft_p99_ms=100*",
            "steps=* serves the most request rate within the SLOs: *",
        ]
    )
    before = suite_results(suite_dir)
    rates = {depth: _slo_rate(before, depth) for depth in (1, 3)}
    for depth in (1, 3):
        search = _depth(before, depth)["rate_search"]
        assert search["high"] is not None and search["high"] > search["max_rate"]
        assert len(search["probes"]) <= 2 + 6
    slow = pytester.runpytest_subprocess(*args, "--specperf-server-arg=--sim-slowdown=0.5")
    after = suite_results(suite_dir)
    slowed = {depth: _slo_rate(after, depth) for depth in (1, 3)}
    assert all(slowed[d] < rates[d] for d in (1, 3)), (rates, slowed)
    assert slow.ret == 0 and fast.ret == 0


def test_32k_token_prompts_run_fewer_requests_at_depth_3_than_at_depth_1(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """32 requests of 32,000-token prompts (a plain CSV trace) at C=32: KV capacity, not
    max_running_requests, bounds the running requests, and fewer run at depth 3 (295,931 KV
    tokens) than at depth 1 (455,357), as the server's own /metrics count shows."""
    rows = "".join(f"{i * 10},32000,64\n" for i in range(32))
    (suite_dir / "long.csv").write_text("timestamp,input_length,output_length\n" + rows)
    fast = [a for a in FAST_ARGS if not a.startswith("--specperf-concurrency")]
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=1,3",
        *fast,
        "--specperf-workload=trace:long.csv",
        "--specperf-concurrency=32",
        "--specperf-requests=32",
        "--specperf-sim-speedup=50",
        "-k",
        "test_throughput_floor",
    )
    result.stdout.fnmatch_lines(["*Running requests (the server's own count)*"])
    results = suite_results(suite_dir)
    running = {}
    for depth in (1, 3):
        run = _depth(results, depth)
        (point,) = run["points"]
        assert point["requests"] == point["ok"] == 32
        running[depth] = point["server_load"]["running_max"]
        assert running[depth] < run["server"]["max_running_requests"]
        # At most what the pool holds of 32,000-token prompts and their first outputs.
        assert running[depth] <= run["server"]["max_total_num_tokens"] // 32_000
    assert running[3] < running[1], running
    assert result.ret == 0


def test_a_regression_on_a_rate_point_is_red_with_the_usual_one_line(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """A baseline of rate=4 recorded, then the server slowed by 30%: the rate point's test
    fails with the gate's one line naming the load."""
    args = [
        "perf_tests/test_throughput.py",
        "perf_tests/test_open_loop.py",
        "--spec-steps=3",
        *FAST_ARGS,
        "--specperf-concurrency=1",
        "--specperf-request-rate=4",
        "--specperf-rate-seconds=3",
    ]
    record = pytester.runpytest_subprocess(*args, "--specperf-update-baselines")
    assert record.ret == 0
    baseline = next((suite_dir / "baselines").rglob("steps-3.json"))
    assert "rate=4" in json.loads(baseline.read_text())["rate_points"]
    slowed = pytester.runpytest_subprocess(
        *args, "--specperf-server-arg=--sim-slowdown=0.3", "--specperf-confirm=off"
    )
    slowed.stdout.fnmatch_lines(
        [
            "*test_open_loop_floor?steps3-rate4? _*",
            "steps=3 rate=4 per-req * < floor * (-*% vs baseline)",
        ]
    )
    assert slowed.ret == 1
