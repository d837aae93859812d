"""server/gpu_wait.py: py-spy's stack samples tell a process's wait for the GPU from its work."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.server.gpu_wait import (
    StackCounts,
    StackSampler,
    count_stacks,
    find_py_spy,
    ptrace_problem,
)
from tests.support.processes import pid_of_an_ended_process

STREAMS = "/venv/lib/python3.12/site-packages/torch/cuda/streams.py"
TORCH_CUDA = "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py"


def test_the_main_threads_samples_in_torchs_synchronize_are_its_wait() -> None:
    raw = "\n".join(
        [
            f"thread (0x1): MainThread;event_loop (a.py:10);Event.synchronize ({STREAMS}:245) 50",
            f"thread (0x1): MainThread;event_loop (a.py:10);synchronize ({TORCH_CUDA}:1209) 10",
            "thread (0x1): MainThread;event_loop (scheduler.py:10);run_batch (scheduler.py:20) 40",
            f"thread (0x2): watchdog;loop (watchdog.py:5);synchronize ({STREAMS}:225) 100",
        ]
    )
    counts = count_stacks(raw)
    assert (counts.samples, counts.waiting) == (100, 60)
    assert counts.wait_share == pytest.approx(0.6)


def test_a_function_named_synchronize_outside_torch_cuda_is_not_a_wait() -> None:
    raw = "thread (0x1): MainThread;main (app.py:3);synchronize (app.py:9) 10"
    assert count_stacks(raw).waiting == 0


def test_without_a_main_thread_the_thread_that_waits_stands_for_it() -> None:
    raw = "\n".join(
        [
            f"thread (0x1): worker;synchronize ({STREAMS}:1) 5",
            "thread (0x1): worker;run (a.py:1) 25",
            "thread (0x2): other;run (a.py:1) 30",
        ]
    )
    assert (count_stacks(raw).samples, count_stacks(raw).waiting) == (30, 5)


def test_nothing_read_gives_no_share() -> None:
    assert count_stacks("").wait_share is None


# A process that waits in torch's Event.synchronize (a stand-in package of that path, as
# SGLang's scheduler waits on its copy_done event) for 30 ms, then works 10 ms, for ever: it
# waits for "the GPU" three quarters of its time. The stand-in sleeps where CUDA would spin:
# py-spy (--idle) samples the frame either way, and a spinning test process would take a core
# from the timing-sensitive tests beside it on a 2-core runner.
_WAITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from torch.cuda.streams import Event

def work():
    end = time.perf_counter() + 0.01
    while time.perf_counter() < end:
        pass

copy_done = Event()
while True:
    copy_done.synchronize()
    work()
"""
_SYNCHRONIZE = """
import time

class Event:
    def synchronize(self):
        time.sleep(0.03)
"""


@pytest.fixture
def waiter(tmp_path: Path) -> Iterator[int]:
    package = tmp_path / "torch" / "cuda"
    package.mkdir(parents=True)
    (tmp_path / "torch" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "streams.py").write_text(_SYNCHRONIZE)
    process = subprocess.Popen([sys.executable, "-c", _WAITER, str(tmp_path)])
    time.sleep(0.5)
    yield process.pid
    process.kill()
    process.wait()


def _py_spy() -> str:
    found = find_py_spy()
    assert found is not None, "py-spy is in the test extra: pip install -e '.[test]'"
    return found


def test_py_spy_reads_a_running_process_waiting_three_quarters_of_its_time(waiter: int) -> None:
    sampler = StackSampler(_py_spy(), waiter, rate_hz=100).start()
    time.sleep(2.0)
    counts = sampler.stop()
    assert counts is not None, sampler.problem
    assert counts.samples >= 100
    assert counts.wait_share == pytest.approx(0.75, abs=0.15)  # 0.70-0.77 measured here


def test_a_process_that_is_gone_reads_nothing_and_says_why() -> None:
    sampler = StackSampler(_py_spy(), pid_of_an_ended_process()).start()
    time.sleep(0.3)
    assert sampler.stop() is None
    assert sampler.problem is not None and "py-spy read no stack" in sampler.problem
    assert str(sampler.pid) not in sampler.problem  # one warning for every process it names


def test_a_missing_executable_is_a_problem_not_an_error() -> None:
    sampler = StackSampler("/nonexistent/py-spy", 1).start()
    assert sampler.stop() is None
    assert sampler.problem is not None and "could not start" in sampler.problem


def test_a_thread_py_spy_could_not_name_is_still_read() -> None:
    # As py-spy 0.4.3 wrote it for a process that never imported threading.
    raw = "thread (6763);<module> (<string>:5);Event.synchronize (/x/torch/cuda/streams.py:5) 118"
    counts = count_stacks(raw)
    assert (counts.samples, counts.waiting) == (118, 118)


def test_a_main_thread_line_without_its_name_is_still_the_main_threads() -> None:
    raw = "\n".join(
        [
            "thread (0x1): MainThread;loop (a.py:1) 82",
            f"thread (0x1): MainThread;loop (a.py:1);Event.synchronize ({STREAMS}:245) 10",
            "thread (0x1);loop (a.py:1) 1",
            f"thread (0x2): worker;Stream.synchronize ({STREAMS}:102) 93",
        ]
    )
    assert count_stacks(raw) == StackCounts(samples=93, waiting=10)


def test_root_may_read_any_process(tmp_path: Path) -> None:
    scope = tmp_path / "ptrace_scope"
    scope.write_text("1\n")
    assert ptrace_problem(euid=0, scope_file=scope) is None


@pytest.mark.parametrize(("scope", "refused"), [("0", False), ("1", True), ("2", True)])
def test_yamas_ptrace_scope_decides_for_another_user(
    tmp_path: Path, scope: str, refused: bool
) -> None:
    path = tmp_path / "ptrace_scope"
    path.write_text(f"{scope}\n")
    problem = ptrace_problem(euid=1000, scope_file=path)
    assert (problem is not None) == refused
    if problem is not None:
        assert f"ptrace_scope is {scope}" in problem and "sysctl" in problem


def test_without_yama_another_process_of_ones_own_user_may_be_read(tmp_path: Path) -> None:
    assert ptrace_problem(euid=1000, scope_file=tmp_path / "absent") is None
