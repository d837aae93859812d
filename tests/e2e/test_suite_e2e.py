"""`pytest perf_tests ...` as a user runs it, on the simulator, through pytester subprocesses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.e2e import (
    FAST_ARGS,
    SharedRun,
    sim_processes,
    suite_results,
    with_the_recorded_baseline,
)

pytestmark = pytest.mark.usefixtures("no_leftover_sims")


def test_without_baseline_points_skip_with_how_to_record(shared_plain_run: SharedRun) -> None:
    """No baseline for the key: gated tests skip, saying how to record one, and the table prints."""
    result = shared_plain_run.result
    result.assert_outcomes(skipped=10)
    result.stdout.fnmatch_lines(
        [
            "*C | Agg tok/s | Per-req tok/s | Tokens | Wall (s) | Ok*",
            "*no baseline for profile=qwen3.5-122b-a10b-fp8-tp4-mtp hardware=sim-x10 steps=3*"
            "--specperf-sim-speedup=10 *--specperf-update-baselines*",
        ]
    )


def test_ci_job_summary_gets_the_report_appended(shared_plain_run: SharedRun) -> None:
    """With $GITHUB_STEP_SUMMARY set, the report is appended after what the job wrote there."""
    text = (shared_plain_run.path / "step-summary.md").read_text(encoding="utf-8")
    assert text.startswith("earlier step\n# pytest-specperf results\n")
    assert "C | Agg tok/s | Per-req tok/s" in text and "steps=3 " in text


def test_recorded_baselines_pass_and_slowdown_fails_the_floors(
    pytester: pytest.Pytester, suite_dir: Path, shared_recording: SharedRun
) -> None:
    """Record, re-run green, then --sim-slowdown=0.2 fails the floors with a precise message."""
    baseline = with_the_recorded_baseline(shared_recording, suite_dir)
    assert json.loads(baseline.read_text())["kv"]["max_running_requests"] == 17

    green = pytester.runpytest_subprocess("perf_tests", "--spec-steps=3", *FAST_ARGS)
    # The depth test needs calibrated noise; a baseline of one run keeps the fixed rule.
    # Greedy outputs, speedup and self-test need a second depth, the control, the option;
    # the SLO capacity needs --specperf-slo.
    green.assert_outcomes(passed=5, skipped=5)
    green.stdout.fnmatch_lines(
        [
            "gate floor: steps=3, point by point: -10.0% vs baseline for each of * figures *"
            "width: *fixed tolerance 10%"
        ]
    )

    slow = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=3", *FAST_ARGS, "--specperf-server-arg=--sim-slowdown=0.2"
    )
    outcomes = slow.parseoutcomes()
    assert outcomes.get("failed", 0) >= 2
    slow.stdout.fnmatch_lines(
        [f"*steps=3 C=1: agg tok/s * < floor * (baseline * - 10%) [[]{baseline}]*"]
    )
    slow.stdout.fnmatch_lines(["*steps=3 C=4: *tok/s * < floor*"])
    # Why it moved: the sim's slowdown stretches every step, the drafts are as good as before.
    slow.stdout.fnmatch_lines(["*steps=3 C=*: agg tok/s * < floor*why: agg -*: acceptance *"])


def test_a_red_verdict_on_another_machine_says_so_first(
    pytester: pytest.Pytester, suite_dir: Path, shared_recording: SharedRun
) -> None:
    """The baseline carries its machine's fingerprint; a run on another CPU model (here: the
    file says so) gets the difference as the first line of its failure. The simulator
    fills no GPU field."""
    path = with_the_recorded_baseline(shared_recording, suite_dir)
    baseline = json.loads(path.read_text())
    testbed = baseline["testbed"]
    assert testbed["cpu_model"] and not {"gpu_name", "driver", "cuda", "torch"} & set(testbed)
    testbed["cpu_model"] = "AMD EPYC 9654 96-Core Processor"
    path.write_text(json.dumps(baseline))

    slow = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=3", *FAST_ARGS, "--specperf-server-arg=--sim-slowdown=0.2"
    )
    slow.stdout.fnmatch_lines(
        [
            "*_ test_throughput_floor[[]steps3-c1[]] _*",
            "testbed differs from the baseline's: CPU * vs AMD EPYC 9654 96-Core Processor",
            "steps=3 C=1 agg * < floor *",
        ],
        consecutive=True,
    )
    run = suite_results(suite_dir)["runs"][0]
    assert run["testbed"]["cpu_model"] != testbed["cpu_model"]


def test_three_depths_boot_once_each_and_show_the_trade_off(
    shared_three_depths: SharedRun,
) -> None:
    """--spec-steps=1,2,3: one server per depth; speed rises with depth while KV capacity falls."""
    result = shared_three_depths.result
    result.stdout.fnmatch_lines(["*Speculation depth trade-off*", "KV | *"])
    runs = shared_three_depths.results()["runs"]
    assert [run["depth"] for run in runs] == [1, 2, 3]
    ports = {run["server"]["url"] for run in runs}
    assert len(ports) == 3, "each depth boots its own server, exactly once"
    out = shared_three_depths.path / ".specperf"
    logs = sorted(p.name for p in out.glob("server-steps*.log"))
    assert logs == ["server-steps1.log", "server-steps2.log", "server-steps3.log"]
    single = [next(p for p in run["points"] if p["concurrency"] == 1) for run in runs]
    assert single[0]["per_req_tok_s"] < single[1]["per_req_tok_s"] < single[2]["per_req_tok_s"]
    kv_tokens = [run["server"]["max_total_num_tokens"] for run in runs]
    running = [run["server"]["max_running_requests"] for run in runs]
    assert kv_tokens == sorted(kv_tokens, reverse=True) and len(set(kv_tokens)) == 3
    assert running == [26, 21, 17]


def test_a_booted_servers_busiest_process_is_measured_at_every_point(
    shared_plain_run: SharedRun,
) -> None:
    """Each point of a server this run started records its busiest process's share of a core,
    and the depth's table says it."""
    points = shared_plain_run.results()["runs"][0]["points"]
    assert points and all(point["server_cpu"]["share"] > 0 for point in points)
    assert all(point["server_cpu"]["process"] for point in points)
    shared_plain_run.result.stdout.fnmatch_lines(["*server CPU*of one core*"])


def test_a_cpu_bound_servers_vcpu_is_timed_after_each_sample(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """A simulator that spins through its steps, as SGLang's scheduler does on a small model,
    holds a core: where a sample found it at 90% or more, the vCPU it ran on was timed."""
    result = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=3", "--specperf-server-arg=--sim-cpu-bound", *FAST_ARGS
    )
    cpus = [p["server_cpu"] for p in suite_results(suite_dir)["runs"][0]["points"]]
    # A sleeping simulator uses 5-9% of a core; a spinning one all it gets beside the client.
    assert cpus and all(cpu["share"] > 0.3 for cpu in cpus)
    bound = [cpu for cpu in cpus if cpu["share"] >= 0.9]
    assert all(cpu["core"] is not None and cpu["core_speed"] > 0 for cpu in bound)
    if bound:
        result.stdout.fnmatch_lines(["*its vCPU ran a single-thread probe at * M loops/s*"])


def test_rotation_puts_each_sample_of_a_cpu_bound_server_on_the_next_vcpu(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--specperf-rotate-server-cpu: the samples, in the order measured (C=1, C=4, C=1, ...),
    ran on the vCPUs the server may use, in turn."""
    pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        "--specperf-server-arg=--sim-cpu-bound",
        "--specperf-rotate-server-cpu",
        "--specperf-repeats=3",
        *FAST_ARGS,
    )
    points = {p["concurrency"]: p for p in suite_results(suite_dir)["runs"][0]["points"]}
    cores = sorted(os.sched_getaffinity(0))
    order = [cores[turn % len(cores)] for turn in range(6)]
    assert [s["server_cpu"]["core"] for s in points[1]["samples"]] == order[0::2]
    assert [s["server_cpu"]["core"] for s in points[4]["samples"]] == order[1::2]


def test_pin_fastest_times_the_free_vcpus_and_keeps_the_server_on_the_fastest(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--specperf-server-cpu=pin-fastest: every vCPU this run may use is timed before the boot,
    and every sample of the server ran on the fastest of them. The simulator has no GPU:
    its GPU fields stay empty."""
    pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        "--specperf-server-arg=--sim-cpu-bound",
        "--specperf-server-cpu=pin-fastest",
        "--specperf-repeats=2",
        *FAST_ARGS,
    )
    run = suite_results(suite_dir)["runs"][0]
    server = run["server"]
    speeds = {int(core): speed for core, speed in server["free_core_speeds"].items()}
    assert set(speeds) == set(os.sched_getaffinity(0))
    assert server["cpu_placement"] == "pin-fastest"
    assert speeds[server["pinned_core"]] == max(speeds.values())
    samples = [s for p in run["points"] for s in p["samples"]]
    assert {s["server_cpu"]["core"] for s in samples} == {server["pinned_core"]}
    assert all(s.get("gpu") is None for s in samples)
    # Without GPU figures only a scheduler flat out is called anything (CPU-bound).
    for sample in samples:
        cpu_bound = sample["server_cpu"]["share"] >= 0.9
        assert sample.get("bound") == ("cpu-bound" if cpu_bound else None)


def test_server_stacks_on_reads_the_simulators_stack_and_finds_no_wait_for_a_gpu(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--specperf-server-stacks=on: py-spy reads the busiest process's stack during each sample
    after the first (which names that process); the simulator never waits in torch's CUDA
    synchronize, so its wait is 0 and its share stays its work."""
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        "--specperf-server-stacks=on",
        "--specperf-repeats=2",
        *FAST_ARGS,
    )
    samples = [s for p in suite_results(suite_dir)["runs"][0]["points"] for s in p["samples"]]
    waits = [s["server_cpu"].get("gpu_wait") for s in samples]
    assert waits[0] is None or waits[0] == 0.0
    read = [wait for wait in waits if wait is not None]
    assert len(read) >= len(samples) - 1 and set(read) == {0.0}, waits
    result.stdout.fnmatch_lines(["*of which waiting for the GPU (py-spy*C=1 0%*"])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--spec-steps=17", "*--spec-steps: 17 is out of range 0..16*"),
        ("--spec-steps=abc", "*--spec-steps: 'abc' is not a whole number*"),
        ("--specperf-concurrency=-4", "*--specperf-concurrency: -4 is out of range*"),
        ("--specperf-backend=vllm", "*--specperf-backend: 'vllm' is not one of sglang, sim*"),
        ("--specperf-profile=nope", "*unknown profile 'nope'*"),
    ],
)
def test_bad_option_values_are_one_line_usage_errors(
    pytester: pytest.Pytester, suite_dir: Path, option: str, message: str
) -> None:
    """A bad value stops the run before anything boots, with one line that names the option."""
    before = len(sim_processes())
    result = pytester.runpytest_subprocess("perf_tests", "--specperf-backend=sim", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
    assert len(sim_processes()) == before


def test_unreachable_url_is_a_usage_error_naming_the_url(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """An --specperf-url nobody answers fails at once with the URL in the message."""
    result = pytester.runpytest_subprocess("perf_tests", "--specperf-url=http://127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot reach http://127.0.0.1:9*"])


def test_calibration_across_boots_keeps_every_sample_and_records_its_noise(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """--specperf-calibrate over 2 boots at R=2: 4 samples per point in results.json, tagged
    with their boot, and a baseline whose noise is calibrated over both boots."""
    result = pytester.runpytest_subprocess(
        "perf_tests",
        "--spec-steps=3",
        *FAST_ARGS,
        "--specperf-repeats=2",
        "--specperf-calibrate",
        "--specperf-calibrate-boots=2",
    )
    assert result.ret == 0
    points = suite_results(suite_dir)["runs"][0]["points"]
    assert [[s["boot"] for s in p["samples"]] for p in points] == [[0, 0, 1, 1]] * 2
    baseline = suite_dir / "baselines/qwen3.5-122b-a10b-fp8-tp4-mtp/sim-x10/steps-3.json"
    noise = json.loads(baseline.read_text())["points"]["4"]["noise"]["agg_tok_s"]
    assert (noise["source"], noise["boots"], noise["samples"]) == ("calibrated", 2, 4)
