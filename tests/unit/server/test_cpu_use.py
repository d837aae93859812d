"""pytest_specperf.server.cpu_use: placement choices (--specperf-server-cpu)."""

from __future__ import annotations

import os

import pytest

from pytest_specperf.server.cpu_use import (
    SGLANG_AFFINITY_ENV,
    core_speed,
    fastest_core,
    time_cores,
)


def test_time_cores_keeps_the_cores_that_could_be_timed() -> None:
    speeds = {0: 4.5, 1: None, 2: 7.1}
    assert time_cores([0, 1, 2], probe=speeds.get) == {0: 4.5, 2: 7.1}


def test_the_fastest_core_is_the_quickest_loop_and_the_lowest_of_equals() -> None:
    assert fastest_core({0: 4.5, 3: 7.1, 5: 7.0}) == 3
    assert fastest_core({4: 7.0, 2: 7.0}) == 2
    assert fastest_core({}) is None


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux affinity")
def test_a_real_core_is_timed() -> None:
    core = sorted(os.sched_getaffinity(0))[0]
    speeds = time_cores([core], probe=lambda c: core_speed(c, seconds=0.02))
    assert set(speeds) == {core} and speeds[core] > 0


def test_sglang_affinity_is_sglangs_own_switch() -> None:
    # SGLang reads it through envs.SGLANG_SET_CPU_AFFINITY (an EnvBool): "1" is true.
    assert SGLANG_AFFINITY_ENV == {"SGLANG_SET_CPU_AFFINITY": "1"}
