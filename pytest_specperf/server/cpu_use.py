"""How hard the server's busiest process worked the CPU while a sample ran.

SGLang's scheduler is one Python process that launches every step's kernels. When a step is
short (a small model, or a large one at small batches) the GPU waits on it between kernels,
and throughput measures the speed of the one core the scheduler runs on: on a shared runner
that speed moves between boots by more than a regression worth catching
(docs/runs/2026-12-04-h200). A sample records the busiest
process of the server's process tree and its CPU time over the sample's wall time, so a
report can say that a point was CPU-bound.

Processes started during the sample count from zero; those that ended are left out.

When that process was CPU-bound, the vCPU it last ran on is timed right after the sample
(``core_speed``): on a shared virtual machine a single-thread loop's speed differs between
vCPUs and over time, and a CPU-bound scheduler's throughput moves with the vCPU it is on
(docs/reference/metrics.md, docs/runs/2026-12-04-placement-h200).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec
import psutil

from pytest_specperf.results.schema import ServerCpu

# --specperf-server-cpu: where the server's busiest process (SGLang's scheduler) runs.
#   none: where the OS puts it.
#   rotate: before each sample, pinned to the next of the boot's vCPUs (CoreRotation).
#   pin-fastest: the free vCPUs timed before each boot (fastest_core), the process pinned to
#     the fastest before each sample.
#   sglang-affinity: SGLang's own SGLANG_SET_CPU_AFFINITY=1 (see SGLANG_AFFINITY_ENV).
ServerCpuPlacement = Literal["none", "rotate", "pin-fastest", "sglang-affinity"]
SERVER_CPU_PLACEMENTS: tuple[ServerCpuPlacement, ...] = (
    "none",
    "rotate",
    "pin-fastest",
    "sglang-affinity",
)
# SGLang's switch, read by each scheduler process as it starts (0.5.12 and 0.5.23 alike:
# managers/scheduler.py configure_scheduler_process -> utils/common.py set_gpu_proc_affinity):
# psutil binds that process to physical cores [gpu_id * n, (gpu_id + 1) * n), n = the physical
# cores // the tensor-parallel ranks on the node, plus their hyper-thread siblings (+ the
# physical count) when the logical count differs. Only the schedulers, not the HTTP server or
# the detokenizer; and with one GPU on the node n is every core: a no-op for placement there.
SGLANG_AFFINITY_ENV = {"SGLANG_SET_CPU_AFFINITY": "1"}

# Long enough for a steady count, short enough to add little to a sample of seconds.
CORE_PROBE_SECONDS = 0.1
# Run in its own process so that pinning it moves nothing of the client's, and the client's
# threads cannot take the interpreter lock from it while it counts.
_CORE_PROBE = (
    "import os, sys, time\n"
    "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "end = time.perf_counter() + float(sys.argv[2])\n"
    "n = 0\n"
    "while time.perf_counter() < end:\n"
    "    n += 1\n"
    "print(n)\n"
)


@dataclass(frozen=True)
class CpuSnapshot:
    """Each live process of a tree: its name and the CPU seconds it has used."""

    taken_at: float
    seconds: dict[int, tuple[str, float]]
    # The vCPU each process last ran on.
    cores: dict[int, int] = field(default_factory=dict)


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
    cores: dict[int, int] = {}
    for process in tree:
        with contextlib.suppress(psutil.Error), process.oneshot():
            times = process.cpu_times()
            seconds[process.pid] = (process_name(process), times.user + times.system)
            with contextlib.suppress(AttributeError):  # cpu_num: not on every platform
                cores[process.pid] = process.cpu_num()
    return CpuSnapshot(taken_at=time.monotonic(), seconds=seconds, cores=cores)


def _used(before: CpuSnapshot | None, after: CpuSnapshot) -> dict[int, tuple[str, float]]:
    """Each process's name and the CPU seconds it used between the snapshots (with no
    earlier snapshot: since it started)."""
    earlier = before.seconds if before is not None else {}
    return {
        pid: (name, spent - earlier.get(pid, (name, 0.0))[1])
        for pid, (name, spent) in after.seconds.items()
    }


def busiest_pid(before: CpuSnapshot | None, after: CpuSnapshot) -> int | None:
    """The process that used the most CPU between the snapshots (None: no process)."""
    used = _used(before, after)
    return max(used, key=lambda pid: used[pid][1]) if used else None


def busiest(before: CpuSnapshot, after: CpuSnapshot) -> ServerCpu | None:
    """The process that used the most CPU between the snapshots, as a share of one core."""
    wall = after.taken_at - before.taken_at
    if wall <= 0 or not after.seconds:
        return None
    used = _used(before, after)
    pid, (name, spent) = max(used.items(), key=lambda entry: entry[1][1])
    return ServerCpu(
        process=name, share=round(max(spent, 0.0) / wall, 3), core=after.cores.get(pid)
    )


def core_speed(core: int, seconds: float = CORE_PROBE_SECONDS) -> float | None:
    """M iterations/s of a single-thread Python loop pinned to vCPU ``core``; None where this
    platform cannot pin a process or the vCPU is not this process's to use."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CORE_PROBE, str(core), str(seconds)],
            capture_output=True,
            text=True,
            timeout=30 + seconds,
            check=True,
        )
        return round(int(done.stdout) / seconds / 1e6, 3)
    except (subprocess.SubprocessError, OSError, ValueError):
        return None


def with_core_speed(cpu: ServerCpu) -> ServerCpu:
    """``cpu`` with its vCPU's speed now, when it was CPU-bound on a known vCPU."""
    if not cpu.cpu_bound or cpu.core is None:
        return cpu
    return msgspec.structs.replace(cpu, core_speed=core_speed(cpu.core))


def time_cores(
    cores: Sequence[int], probe: Callable[[int], float | None] = core_speed
) -> dict[int, float]:
    """Each vCPU's single-thread speed now (M iterations/s), those that could be timed."""
    speeds = {}
    for core in cores:
        speed = probe(core)
        if speed is not None:
            speeds[core] = speed
    return speeds


def fastest_core(speeds: dict[int, float]) -> int | None:
    """The vCPU that ran the loop fastest (the lowest-numbered of equals); None: none timed."""
    if not speeds:
        return None
    return min(speeds, key=lambda core: (-speeds[core], core))


@dataclass
class CoreRotation:
    """--specperf-rotate-server-cpu: before each sample, the server's busiest process is pinned
    to the next of the vCPUs it may use, in the same order in every boot. A boot then averages
    its samples over several vCPUs instead of drawing one: on a shared virtual machine the
    vCPU it lands on sets a CPU-bound server's speed for the whole boot, while the share of
    fast vCPUs holds steady, so rounds over the same vCPUs agree where single vCPUs do not
    (docs/runs/2026-12-05-h200)."""

    cores: list[int]
    turn: int = 0

    @classmethod
    def for_worker(cls, cores: list[int], worker: int, workers: int) -> CoreRotation:
        """Worker ``worker`` of ``workers`` (xdist, one server each) turns over every
        ``workers``-th vCPU from its own, so that two servers' samples are never pinned to
        one vCPU at once (all of them when there are fewer vCPUs than workers)."""
        return cls(cores[worker::workers] or cores)

    def next_core(self) -> int:
        core = self.cores[self.turn % len(self.cores)]
        self.turn += 1
        return core


def allowed_cores(pid: int) -> list[int]:
    """The vCPUs process ``pid`` may run on (empty: not known on this platform, or gone)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return []


def pin_process(pid: int, core: int) -> bool:
    """Every thread of process ``pid`` on vCPU ``core`` (threads it starts later inherit it);
    False when the process is gone or may not run there."""
    try:
        threads = [thread.id for thread in psutil.Process(pid).threads()]
    except psutil.Error:
        return False
    pinned = False
    for thread in threads:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(thread, {core})
            pinned = True
    return pinned
