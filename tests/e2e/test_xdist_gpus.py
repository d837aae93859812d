"""xdist on several GPUs, on the simulator: each worker's server gets its own GPU slice.

The simulator reports the CUDA_VISIBLE_DEVICES it was started with in /server_info, so what
each server was given is checked on a machine with no GPU (--specperf-gpus says how many the
machine has).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import FAST_ARGS, suite_results

pytestmark = pytest.mark.usefixtures("no_leftover_sims")


def two_workers(pytester: pytest.Pytester, gpus: int) -> pytest.RunResult:
    """Depths 1 and 2 on two xdist workers, 4 GPUs per server, ``gpus`` GPUs present."""
    return pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=1,2", "-n", "2", "--specperf-gpus-per-server=4",
        f"--specperf-gpus={gpus}", *FAST_ARGS,
    )  # fmt: skip


def test_each_worker_boots_its_depth_on_its_own_gpus_with_one_merged_report(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """-n 2 --specperf-gpus-per-server 4 on 8 GPUs: gw0 gets 0-3, gw1 4-7, one server each."""
    result = two_workers(pytester, gpus=8)
    # Without baselines everything skips but the greedy-output comparison of the later depth.
    result.assert_outcomes(passed=1, skipped=19)
    runs = suite_results(suite_dir)["runs"]
    assert [run["depth"] for run in runs] == [1, 2]
    given = [run["server"]["gpus"] for run in runs]
    assert sorted(given) == [["0", "1", "2", "3"], ["4", "5", "6", "7"]]
    seen_by_servers = [run["server"]["sim"]["cuda_visible_devices"] for run in runs]
    assert seen_by_servers == [",".join(gpus) for gpus in given]
    assert len({run["server"]["url"] for run in runs}) == 2, "each server on its own port"
    report = (suite_dir / ".specperf" / "report.md").read_text()
    assert f"gpus={','.join(given[0])}" in report and f"gpus={','.join(given[1])}" in report


def test_more_gpus_asked_than_present_is_a_usage_error(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    result = two_workers(pytester, gpus=4)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--specperf-gpus-per-server=4 x 2 worker(s) needs 8 GPUs, but 4 are present*"]
    )


def test_sglang_servers_side_by_side_without_gpu_slices_are_refused(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """The sglang backend with -n 2 over two depths: refused before anything boots, with why."""
    result = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=1,2", "-n", "2", "--specperf-backend=sglang"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*servers sharing GPUs measure each other*30,835*57,934,502*"])
