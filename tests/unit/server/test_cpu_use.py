"""pytest_specperf.server.cpu_use: the server's busiest process and its share of a core;
placement choices (--specperf-server-cpu)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.results.schema import ServerCpu
from pytest_specperf.server.cpu_use import (
    SGLANG_AFFINITY_ENV,
    CoreRotation,
    CpuSnapshot,
    allowed_cores,
    busiest,
    busiest_pid,
    core_speed,
    fastest_core,
    pin_process,
    snapshot,
    time_cores,
    with_core_speed,
)
from tests.support.processes import pid_of_an_ended_process

# A parent with a busy and an idle child, each renamed in argv as SGLang renames its own.
TREE = f"""
exec -a specperf-busy {sys.executable} -c 'while True: pass' &
exec -a specperf-idle {sys.executable} -c 'import time; time.sleep(60)' &
wait
"""


@pytest.fixture
def server_tree() -> Iterator[int]:
    parent = subprocess.Popen(["bash", "-c", TREE], start_new_session=True)
    try:
        time.sleep(0.3)  # both children started
        yield parent.pid
    finally:
        subprocess.run(["pkill", "-KILL", "-s", str(parent.pid)], check=False)
        parent.kill()
        parent.wait()


def _busiest_over(tree: int, seconds: float) -> ServerCpu | None:
    before = snapshot(tree)
    time.sleep(seconds)
    after = snapshot(tree)
    assert before is not None and after is not None
    return busiest(before, after)


def test_the_busiest_process_of_the_tree_is_named_as_its_argv_names_it(server_tree: int) -> None:
    found = _busiest_over(server_tree, 1.0)
    assert found is not None and found.process == "specperf-busy"
    assert found.share > 0.1


def test_a_tree_whose_root_is_gone_gives_no_snapshot() -> None:
    assert snapshot(pid_of_an_ended_process()) is None


def test_a_share_is_cpu_seconds_over_wall_seconds() -> None:
    before = CpuSnapshot(taken_at=10.0, seconds={1: ("launcher", 5.0), 2: ("scheduler", 20.0)})
    after = CpuSnapshot(taken_at=12.0, seconds={1: ("launcher", 5.2), 2: ("scheduler", 21.9)})
    found = busiest(before, after)
    assert found is not None and (found.process, found.share) == ("scheduler", 0.95)


def test_a_process_started_during_the_sample_counts_from_zero() -> None:
    before = CpuSnapshot(taken_at=0.0, seconds={1: ("launcher", 5.0)})
    after = CpuSnapshot(taken_at=4.0, seconds={1: ("launcher", 5.1), 7: ("worker", 2.0)})
    found = busiest(before, after)
    assert found is not None and (found.process, found.share) == ("worker", 0.5)


def test_no_time_between_snapshots_gives_no_share() -> None:
    same = CpuSnapshot(taken_at=3.0, seconds={1: ("launcher", 5.0)})
    assert busiest(same, same) is None


def test_the_busiest_process_carries_the_vcpu_it_last_ran_on(server_tree: int) -> None:
    found = _busiest_over(server_tree, 0.5)
    assert found is not None and found.core in os.sched_getaffinity(0)


def test_a_vcpu_this_process_may_use_is_timed() -> None:
    speed = core_speed(min(os.sched_getaffinity(0)))
    assert speed is not None and speed > 0


def test_a_vcpu_this_machine_lacks_has_no_speed() -> None:
    assert core_speed((os.cpu_count() or 1) + 64) is None


def test_a_cpu_bound_process_gets_its_vcpu_timed() -> None:
    bound = ServerCpu(process="sglang::scheduler", share=1.0, core=min(os.sched_getaffinity(0)))
    speed = with_core_speed(bound).core_speed
    assert speed is not None and speed > 0


@pytest.mark.parametrize(
    "cpu",
    [
        ServerCpu(process="python", share=0.3, core=0),  # not CPU-bound: its vCPU does not matter
        ServerCpu(process="sglang::scheduler", share=1.0),  # its vCPU not known
    ],
)
def test_no_probe_unless_cpu_bound_on_a_known_vcpu(cpu: ServerCpu) -> None:
    assert with_core_speed(cpu) == cpu


def test_the_rotation_takes_the_vcpus_in_turn_and_starts_over() -> None:
    rotation = CoreRotation([2, 5, 7])
    assert [rotation.next_core() for _ in range(5)] == [2, 5, 7, 2, 5]


def test_a_process_may_use_the_vcpus_its_affinity_names() -> None:
    assert allowed_cores(os.getpid()) == sorted(os.sched_getaffinity(0))


def test_every_thread_of_a_pinned_process_runs_on_that_vcpu() -> None:
    threads = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,)).start()\n"
        "time.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", threads])
    try:
        time.sleep(0.3)  # its second thread started
        core = max(os.sched_getaffinity(0))
        assert pin_process(child.pid, core)
        tids = [int(t.name) for t in Path(f"/proc/{child.pid}/task").iterdir()]
        assert len(tids) == 2
        assert all(os.sched_getaffinity(tid) == {core} for tid in tids)
    finally:
        child.kill()
        child.wait()


def test_a_gone_process_is_not_pinned() -> None:
    assert not pin_process(pid_of_an_ended_process(), 0)


def test_with_no_earlier_snapshot_the_busiest_is_the_one_with_most_cpu_so_far() -> None:
    now = CpuSnapshot(taken_at=9.0, seconds={1: ("launcher", 40.0), 2: ("scheduler", 90.0)})
    assert busiest_pid(None, now) == 2
    earlier = CpuSnapshot(taken_at=5.0, seconds={1: ("launcher", 10.0), 2: ("scheduler", 89.0)})
    assert busiest_pid(earlier, now) == 1


def test_xdist_workers_turn_over_disjoint_vcpus() -> None:
    cores = list(range(8))
    first, second = (CoreRotation.for_worker(cores, worker, 2) for worker in (0, 1))
    assert first.cores == [0, 2, 4, 6] and second.cores == [1, 3, 5, 7]


def test_more_workers_than_vcpus_share_them_all() -> None:
    assert CoreRotation.for_worker([0, 1], 3, 4).cores == [0, 1]


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
