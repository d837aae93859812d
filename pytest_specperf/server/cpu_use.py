"""How hard the server's busiest process worked the CPU while a sample ran.

SGLang's scheduler is one Python process that launches every step's kernels. When a step is
short (a small model, or a large one at small batches) the GPU waits on it between kernels,
and throughput measures the speed of the one core the scheduler runs on: on a shared runner
that speed moves between boots by more than a regression worth catching (H200, 2026-12-04:
boots 11-35% apart, the scheduler at 100% of a core in each). A sample records the busiest
process of the server's process tree and its CPU time over the sample's wall time, so a
report can say that a point was CPU-bound.

Processes started during the sample count from zero; those that ended are left out.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from pytest_specperf.results.schema import ServerCpu


@dataclass(frozen=True)
class CpuSnapshot:
    """Each live process of a tree: its name and the CPU seconds it has used."""

    taken_at: float
    seconds: dict[int, tuple[str, float]]


def process_name(process: psutil.Process) -> str:
    """SGLang renames its processes (``sglang::scheduler``) in argv, which the kernel's
    15-character name cuts short; other processes are named by their executable."""
    with contextlib.suppress(psutil.Error, IndexError):
        first = process.cmdline()[0]
        if first:
            return Path(first).name
    return process.name()


def snapshot(root_pid: int) -> CpuSnapshot | None:
    """The tree under ``root_pid`` now, or None when the root is gone."""
    try:
        root = psutil.Process(root_pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    seconds: dict[int, tuple[str, float]] = {}
    for process in tree:
        with contextlib.suppress(psutil.Error), process.oneshot():
            times = process.cpu_times()
            seconds[process.pid] = (process_name(process), times.user + times.system)
    return CpuSnapshot(taken_at=time.monotonic(), seconds=seconds)


def busiest(before: CpuSnapshot, after: CpuSnapshot) -> ServerCpu | None:
    """The process that used the most CPU between the snapshots, as a share of one core."""
    wall = after.taken_at - before.taken_at
    if wall <= 0 or not after.seconds:
        return None
    used = {
        pid: (name, spent - before.seconds.get(pid, (name, 0.0))[1])
        for pid, (name, spent) in after.seconds.items()
    }
    name, spent = max(used.values(), key=lambda entry: entry[1])
    return ServerCpu(process=name, share=round(max(spent, 0.0) / wall, 3))
