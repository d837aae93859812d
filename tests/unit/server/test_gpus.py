"""pytest_specperf.server.gpus: each parallel server gets its own GPUs, or the run is refused."""

from __future__ import annotations

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.server.gpus import (
    PresentGpus,
    check_gpu_plan,
    gpu_env,
    gpu_slice,
    present_gpus,
    worker_index,
    xdist_worker_count,
)

EIGHT = PresentGpus(tuple(str(i) for i in range(8)), "test")


def no_nvidia_smi() -> int | None:
    return None


def test_override_count_means_ids_from_zero() -> None:
    assert present_gpus("4", {}, no_nvidia_smi).ids == ("0", "1", "2", "3")


def test_override_list_is_taken_as_given() -> None:
    assert present_gpus("0,1,5", {}, no_nvidia_smi).ids == ("0", "1", "5")


def test_env_override_comes_before_cuda_visible_devices() -> None:
    found = present_gpus(None, {"SPECPERF_GPUS": "2", "CUDA_VISIBLE_DEVICES": "7"}, no_nvidia_smi)
    assert (found.ids, found.source) == (("0", "1"), "$SPECPERF_GPUS")


def test_cuda_visible_devices_lists_the_physical_ids_this_process_may_use() -> None:
    assert present_gpus(None, {"CUDA_VISIBLE_DEVICES": "2,3,6"}, no_nvidia_smi).ids == (
        "2",
        "3",
        "6",
    )


def test_empty_cuda_visible_devices_means_no_gpu() -> None:
    assert present_gpus(None, {"CUDA_VISIBLE_DEVICES": ""}, lambda: 8).ids == ()


def test_without_overrides_nvidia_smi_counts() -> None:
    found = present_gpus(None, {}, lambda: 2)
    assert (found.ids, found.source) == (("0", "1"), "nvidia-smi -L")


@pytest.mark.parametrize("raw", ["0,,1", "0,0", ",", "a,"])
def test_bad_gpu_list_is_a_usage_error(raw: str) -> None:
    with pytest.raises(UsageError, match="--specperf-gpus"):
        present_gpus(raw, {}, no_nvidia_smi)


@pytest.mark.parametrize(("worker", "index"), [(None, 0), ("master", 0), ("gw0", 0), ("gw3", 3)])
def test_worker_index_from_xdist_id(worker: str | None, index: int) -> None:
    assert worker_index(worker) == index


@pytest.mark.parametrize(
    ("dist", "tx", "count"),
    [("no", None, 1), ("load", ["popen", "popen"], 2), ("loadscope", ["3*popen"], 3)],
)
def test_xdist_worker_count(dist: str, tx: list[str] | None, count: int) -> None:
    assert xdist_worker_count(dist, tx) == count


def test_worker_n_gets_the_nth_slice_of_k_gpus() -> None:
    """gw0 -> [0, 4), gw1 -> [4, 8): disjoint."""
    assert gpu_slice(EIGHT, "gw0", 4) == ("0", "1", "2", "3")
    assert gpu_slice(EIGHT, "gw1", 4) == ("4", "5", "6", "7")


def test_slices_follow_cuda_visible_devices_order() -> None:
    present = PresentGpus(("6", "2", "3", "7"), "CUDA_VISIBLE_DEVICES")
    assert gpu_slice(present, "gw1", 2) == ("3", "7")


def test_a_worker_past_the_last_slice_gets_an_error_not_shared_gpus() -> None:
    with pytest.raises(UsageError, match="worker gw2 has no GPUs left"):
        gpu_slice(EIGHT, "gw2", 4)


def test_gpu_env_pins_the_server_and_leaves_env_alone_without_assignment() -> None:
    assert gpu_env(("4", "5")) == {"CUDA_VISIBLE_DEVICES": "4,5"}
    assert gpu_env(None) == {}


def plan(**changes: object) -> None:
    values: dict[str, object] = {
        "backend": "sglang",
        "attached": False,
        "workers": 2,
        "parallel_servers": 2,
        "per_server": 4,
        "present": EIGHT,
        "tp_size": 4,
    }
    values.update(changes)
    check_gpu_plan(**values)  # type: ignore[arg-type]


def test_plan_that_fits_passes() -> None:
    plan()


def test_more_gpus_asked_than_present_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"x 3 worker\(s\) needs 12 GPUs, but 8 are present"):
        plan(workers=3, parallel_servers=2)


def test_sglang_servers_side_by_side_without_gpu_slices_are_refused_saying_why() -> None:
    with pytest.raises(UsageError, match=r"measure each other.*--specperf-gpus-per-server"):
        plan(per_server=None, present=None)


@pytest.mark.parametrize(
    "changes",
    [
        {"backend": "sim"},
        {"attached": True},
        {"parallel_servers": 1},
    ],
)
def test_xdist_without_gpu_slices_is_allowed_when_no_two_sglang_servers_boot(
    changes: dict[str, object],
) -> None:
    plan(per_server=None, present=None, **changes)


def test_fewer_gpus_per_server_than_tensor_parallel_size_is_refused() -> None:
    with pytest.raises(UsageError, match="--tp-size 4, which needs 4 GPUs per server"):
        plan(per_server=2)
