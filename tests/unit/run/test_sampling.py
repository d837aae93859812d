"""run/sampling.py: the scheduler's wait for the GPU joins the sample's server CPU only when
py-spy read the process that worked hardest, and a refused py-spy is said once, then left."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest

from pytest_specperf.config.settings import build_settings
from pytest_specperf.results.schema import ServerCpu
from pytest_specperf.run.sampling import Sampler
from pytest_specperf.server.cpu_use import CpuSnapshot
from pytest_specperf.server.gpu_wait import StackCounts, StackSampler

SCHEDULER, DETOKENIZER = 101, 102


def sampler(tmp_path: Path) -> Sampler:
    values = {"backend": "sim", "server_stacks": "off"}
    settings = build_settings(lambda key: values.get(key), tmp_path)
    return Sampler(dataclasses.replace(settings, py_spy="/opt/bin/py-spy"), 3)


def snapshots(busiest: int) -> tuple[CpuSnapshot, CpuSnapshot]:
    other = DETOKENIZER if busiest == SCHEDULER else SCHEDULER
    before = CpuSnapshot(taken_at=0.0, seconds={busiest: ("s", 0.0), other: ("d", 0.0)})
    after = CpuSnapshot(taken_at=2.0, seconds={busiest: ("s", 2.0), other: ("d", 0.2)})
    return before, after


FOUND = ServerCpu(process="sglang::scheduler", share=1.0)


def test_the_wait_read_from_the_busiest_processs_stack_joins_its_share(tmp_path: Path) -> None:
    read = StackSampler("/opt/bin/py-spy", SCHEDULER)
    cpu = sampler(tmp_path)._with_gpu_wait(
        FOUND, read, StackCounts(samples=100, waiting=45), *snapshots(SCHEDULER)
    )
    assert cpu.gpu_wait == 0.45 and cpu.work_share == pytest.approx(0.55)


def test_a_stack_of_another_process_than_the_samples_busiest_is_not_used(tmp_path: Path) -> None:
    read = StackSampler("/opt/bin/py-spy", DETOKENIZER)
    cpu = sampler(tmp_path)._with_gpu_wait(
        FOUND, read, StackCounts(samples=100, waiting=45), *snapshots(SCHEDULER)
    )
    assert cpu == FOUND


def test_a_refused_py_spy_is_said_once_and_not_started_again(tmp_path: Path) -> None:
    depth = sampler(tmp_path)
    refused = StackSampler("/opt/bin/py-spy", SCHEDULER)
    refused.problem = "py-spy read no stack of the server's busiest process: Permission denied"
    with pytest.warns(UserWarning, match="Permission denied"):
        assert depth._with_gpu_wait(FOUND, refused, None, *snapshots(SCHEDULER)) == FOUND
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        depth._with_gpu_wait(FOUND, refused, None, *snapshots(SCHEDULER))
    assert depth._stack_sampler(snapshots(SCHEDULER)[1]) is None
