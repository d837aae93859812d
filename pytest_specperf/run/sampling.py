"""One depth's samples on its running server: each boot's warm-up, the vCPU rotation, a point.

Plain code: ``DepthSession`` asks for a sample and records it; this module only measures (the
closed loop of measure/point.py, the server's busiest process and its vCPU around it).
"""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import msgspec

from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.warmup import warm_up
from pytest_specperf.results.acceptance import position_accept_rates
from pytest_specperf.results.schema import (
    PointMetrics,
    RequestRecord,
    ServerCpu,
    Warmup,
    point_bound,
)
from pytest_specperf.server import cpu_use
from pytest_specperf.server.gpu_use import ServerGpus
from pytest_specperf.server.gpu_wait import StackCounts, StackSampler
from pytest_specperf.server.process import ServerProcess

# How long a point whose connections broke waits for the server process to be seen gone.
CONNECTION_LOSS_SETTLE_S = 2.0


class ServerDied(SpecperfError):
    """The server process exited while a point was being measured."""


class ServerGone(SpecperfError):
    """The server of this depth failed earlier; later points cannot be measured."""


def settle_after(sample: PointMetrics) -> float:
    """Seconds to give the server to exit before asking whether it died: only after a point
    whose connections broke or were refused (a healthy server returns at once)."""
    broken = any(kind.startswith("connection") for kind in sample.errors)
    return CONNECTION_LOSS_SETTLE_S if broken else 0.0


def settle_after_warmup(warmup: Warmup) -> float:
    """As ``settle_after``, for a warm-up: one of its points that produced no token at all
    is the sign (its record keeps no failure counts)."""
    silent = any(figure == 0 for figures in warmup.agg_tok_s for figure in figures)
    return CONNECTION_LOSS_SETTLE_S if silent else 0.0


def describe_exit(code: int | None) -> str:
    """``-9`` -> ``was killed by SIGKILL``; ``1`` -> ``exited with code 1``."""
    if code is None:
        return "stopped answering"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class PointObserver(Protocol):
    """Sees each point being measured: e.g. the live progress line."""

    def point_started(
        self, depth: int, concurrency: int, total: int
    ) -> Callable[[RequestRecord], None]:
        """A point begins; the returned function is called with each finished request."""
        ...

    def point_finished(self) -> None: ...


@dataclass(frozen=True)
class Target:
    """The server a sample is taken from, as this boot sees it."""

    base_url: str
    model: str
    boot: int
    server: ServerProcess | None  # None: a server this run did not start (nothing to pin)
    worker: tuple[int, int] = (0, 1)  # under xdist: (this worker's index, the workers)


class Sampler:
    """Takes one depth's samples: one warm-up per boot, then each sample with the server's
    CPU read around it (and, with --specperf-rotate-server-cpu, its busiest process pinned to
    the boot's next vCPU first)."""

    def __init__(self, settings: Settings, depth: int) -> None:
        self.settings = settings
        self.depth = depth
        # The boot whose warm-up ran (measure/warmup.py): one warm-up per boot.
        self.warmed_boot: int | None = None
        # --specperf-rotate-server-cpu: this boot's vCPUs in turn, and this boot's last CPU
        # reading (a sample's or the warm-up's: which process to pin next).
        self.rotation: cpu_use.CoreRotation | None = None
        self.last_cpu: tuple[cpu_use.CpuSnapshot, cpu_use.CpuSnapshot] | None = None
        # --specperf-server-cpu=pin-fastest: the free vCPUs' speeds timed before this boot.
        self.free_core_speeds: dict[int, float] = {}
        # The launched server's GPUs through NVML (server/gpu_use.py), opened each boot;
        # None: not a real server this run launched, or no NVML.
        self.server_gpus: ServerGpus | None = None
        # --specperf-server-stacks: why py-spy read nothing, said once, after which it is not
        # started again for this depth (None: no problem).
        self.stacks_problem: str | None = None

    def new_boot(self) -> None:
        """A fresh server: the rotation starts again on its vCPUs."""
        self.rotation = self.last_cpu = self.server_gpus = None

    def time_free_cores(self, worker: tuple[int, int]) -> None:
        """pin-fastest: this worker's vCPUs timed while nothing of the server runs yet, the
        fastest kept as the one vCPU of this boot's rotation."""
        cores = cpu_use.CoreRotation.for_worker(cpu_use.allowed_cores(os.getpid()), *worker).cores
        self.free_core_speeds = cpu_use.time_cores(cores)
        fastest = cpu_use.fastest_core(self.free_core_speeds)
        # None timed: an empty rotation, so that nothing is pinned (not a rotation over all).
        self.rotation = cpu_use.CoreRotation([fastest] if fastest is not None else [])

    def needs_warm_up(self, boot: int) -> bool:
        return self.warmed_boot != boot and self.settings.warmup.enabled

    def warm_up(self, target: Target, concurrency: int) -> Warmup:
        """Warm every concurrency of the sweep (and this one), so that no measured sample pays
        for shapes the server runs for the first time."""
        s = self.settings
        self.warmed_boot = target.boot
        # With --specperf-rotate-server-cpu: which process works hardest under the warm-up's
        # load names the one to pin for the boot's first sample (and, with the stacks read,
        # the one whose stack to read).
        server = target.server if s.pins_server_process or s.py_spy else None
        server_pid = server.pid if server is not None else None
        cpu_before = cpu_use.snapshot(server_pid) if server_pid is not None else None
        warmup = event_loop.run(
            warm_up(
                target.base_url,
                s.workload,
                sorted({*s.concurrency, concurrency}),
                s.warmup,
                model=target.model,
                api_key=s.api_key,
                client_procs=s.client_procs,
            )
        )
        warmup.boot = target.boot
        cpu_after = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if cpu_before is not None and cpu_after is not None:
            self.last_cpu = (cpu_before, cpu_after)
        return warmup

    def sample(
        self,
        target: Target,
        concurrency: int,
        observer: PointObserver | None = None,
        *,
        refined: bool = False,
    ) -> tuple[PointMetrics, list[float]]:
        """One closed-loop sample of the point, tagged with its boot and the server's CPU;
        and the end-to-end seconds of its successful requests. ``observer`` sees it run."""
        s = self.settings
        durations: list[float] = []
        observed = (
            observer.point_started(self.depth, concurrency, s.workload.requests_for(concurrency))
            if observer is not None
            else None
        )

        def request_done(record: RequestRecord) -> None:
            if record.ok:
                durations.append(record.end - record.start)
            if observed is not None:
                observed(record)

        server_pid = target.server.pid if target.server is not None else None
        cpu_before = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if s.pins_server_process and server_pid is not None and cpu_before is not None:
            self._pin_next_core(server_pid, cpu_before, target.worker)
        gpu_reader = self.server_gpus.sampler().start() if self.server_gpus is not None else None
        stacks: StackSampler | None = None
        try:
            stacks = self._stack_sampler(cpu_before)
            sample = event_loop.run(
                measure_point(
                    target.base_url,
                    s.workload,
                    concurrency,
                    model=target.model,
                    api_key=s.api_key,
                    warmup=True,
                    slo=s.slo,
                    client_procs=s.client_procs,
                    on_request_done=request_done,
                    watch_load=s.watch_server_load,
                )
            )
        finally:
            gpu_use = gpu_reader.stop() if gpu_reader is not None else None
            counts = stacks.stop() if stacks is not None else None
            if observer is not None:
                observer.point_finished()
        cpu_after = cpu_use.snapshot(server_pid) if server_pid is not None else None
        if cpu_before is not None and cpu_after is not None:
            self.last_cpu = (cpu_before, cpu_after)
            found = cpu_use.busiest(cpu_before, cpu_after)
            if found is not None and stacks is not None:
                found = self._with_gpu_wait(found, stacks, counts, cpu_before, cpu_after)
            sample.server_cpu = cpu_use.with_core_speed(found) if found is not None else None
        sample.gpu = gpu_use
        sample.bound = point_bound(sample.server_cpu, gpu_use)
        sample.boot = target.boot
        sample.refined = refined
        # Every draft position of this depth, accepted or not (a short histogram stops early).
        sample.position_accept_rate = position_accept_rates(
            sample.accept_histogram, self.depth or None
        )
        return sample, durations

    def _stack_sampler(self, now: cpu_use.CpuSnapshot | None) -> StackSampler | None:
        """py-spy on the process that worked hardest in the last reading (the warm-up's or
        the last sample's, else since it started), started; None where the stacks are not
        read."""
        if self.settings.py_spy is None or now is None or self.stacks_problem is not None:
            return None
        pid = self._busiest_lately(now)
        if pid is None or pid not in now.seconds:
            return None
        return StackSampler(self.settings.py_spy, pid).start()

    def _with_gpu_wait(
        self,
        found: ServerCpu,
        stacks: StackSampler,
        counts: StackCounts | None,
        before: cpu_use.CpuSnapshot,
        after: cpu_use.CpuSnapshot,
    ) -> ServerCpu:
        """The busiest process with its wait for the GPU, when py-spy read that process."""
        if counts is None or counts.wait_share is None:
            if stacks.problem is not None and self.stacks_problem is None:
                self.stacks_problem = stacks.problem
                warnings.warn(
                    f"--specperf-server-stacks: {stacks.problem}; the server's CPU share "
                    "includes its wait for the GPU",
                    stacklevel=2,
                )
            return found
        if cpu_use.busiest_pid(before, after) != stacks.pid:
            return found  # another process worked hardest in this sample
        return msgspec.structs.replace(found, gpu_wait=round(counts.wait_share, 3))

    def _pin_next_core(
        self, server_pid: int, now: cpu_use.CpuSnapshot, worker: tuple[int, int]
    ) -> None:
        """The busiest server process of the last sample or of the boot's warm-up (without
        either: the one with the most CPU time) onto this boot's next vCPU; the rotation
        restarts each boot."""
        if self.rotation is None:
            self.rotation = cpu_use.CoreRotation.for_worker(
                cpu_use.allowed_cores(server_pid), *worker
            )
        if not self.rotation.cores:
            return
        pid = self._busiest_lately(now)
        if pid is not None:
            cpu_use.pin_process(pid, self.rotation.next_core())

    def _busiest_lately(self, now: cpu_use.CpuSnapshot) -> int | None:
        """The server process that worked hardest in the last reading (the last sample's or
        the boot's warm-up; without either: the one with the most CPU time since it started)."""
        before, after = self.last_cpu if self.last_cpu is not None else (None, now)
        return cpu_use.busiest_pid(before, after)
