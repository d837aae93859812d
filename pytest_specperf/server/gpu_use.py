"""How busy the server's GPUs were while a sample ran, read through NVML (nvidia-ml-py).

Beside the server's CPU share (cpu_use.py) this tells a GPU-bound point from a CPU-bound one:
a large model keeps the GPU busy while its scheduler reads a full core, and a tiny one leaves
the GPU waiting on a scheduler at 100% (docs/reference/metrics.md).

A thread reads each of the server's GPUs every ``interval_s`` while the sample runs: NVML's
utilization rate (the share of its own last sampling period, 1/6 s to 1 s by product, in which
a kernel ran), the SM clock (MHz) and the board power (mW). ``pynvml`` is imported only here
and only when asked: without it, or without a driver (the simulator on a CPU machine), nothing
is read and every GPU field stays empty.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pytest_specperf.results.schema import GpuUse

# Under NVML's shortest sampling period (1/6 s), so no busy stretch goes unread, and cheap:
# three ctypes calls per GPU, which release the interpreter lock.
READ_INTERVAL_S = 0.2


def load_nvml() -> Any | None:
    """pynvml, initialised; None without nvidia-ml-py or without a working driver."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    return pynvml


def text(value: Any) -> str:
    """NVML's strings come back as bytes from older nvidia-ml-py releases, str from newer."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def device_handles(nvml: Any, gpu_ids: Sequence[str] | None, limit: int | None) -> list[Any]:
    """The NVML handles of the server's GPUs: ``gpu_ids`` (its CUDA_VISIBLE_DEVICES, indices
    or ``GPU-``/``MIG-`` UUIDs), else every GPU; only the first ``limit`` (its tp size).

    A CUDA index is taken as NVML's: CUDA orders by speed, then PCI bus id, NVML by PCI bus
    id, which agree on a machine of identical GPUs (every runner this suite targets); give
    UUIDs where the GPUs differ."""
    try:
        if gpu_ids is None:
            handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        else:
            handles = [
                nvml.nvmlDeviceGetHandleByUUID(gpu)
                if gpu.startswith(("GPU-", "MIG-"))
                else nvml.nvmlDeviceGetHandleByIndex(int(gpu))
                for gpu in gpu_ids
            ]
    except (nvml.NVMLError, ValueError):
        return []
    return handles[:limit] if limit else handles


@dataclass
class _Readings:
    busy: list[float] = field(default_factory=list)
    sm_clock_mhz: list[float] = field(default_factory=list)
    power_w: list[float] = field(default_factory=list)


class GpuSampler:
    """Reads the GPUs on a thread from ``start()`` to ``stop()``; ``stop()`` returns the
    summary (None: nothing was read)."""

    def __init__(
        self, nvml: ModuleType | Any, handles: Sequence[Any], interval_s: float = READ_INTERVAL_S
    ) -> None:
        self.nvml = nvml
        self.handles = list(handles)
        self.interval_s = interval_s
        self._readings = _Readings()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> GpuSampler:
        self._thread = threading.Thread(target=self._run, name="specperf-gpu-use", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while True:
            self.read_once()
            if self._stop.wait(self.interval_s):
                return

    def read_once(self) -> None:
        nvml = self.nvml
        busy: list[float] = []
        for handle in self.handles:
            with contextlib.suppress(nvml.NVMLError):
                busy.append(nvml.nvmlDeviceGetUtilizationRates(handle).gpu / 100)
            with contextlib.suppress(nvml.NVMLError):
                clock = nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)
                self._readings.sm_clock_mhz.append(float(clock))
            with contextlib.suppress(nvml.NVMLError):
                self._readings.power_w.append(nvml.nvmlDeviceGetPowerUsage(handle) / 1000)
        if len(busy) == len(self.handles) and busy:
            # One reading is the GPUs' mean at one moment: a tensor-parallel server is as busy
            # as its GPUs together.
            self._readings.busy.append(statistics.fmean(busy))

    def stop(self) -> GpuUse | None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5 + self.interval_s)
        return summarize(self._readings, self.interval_s, len(self.handles))


def summarize(readings: _Readings, interval_s: float, gpus: int) -> GpuUse | None:
    if not readings.busy:
        return None
    return GpuUse(
        busy=round(statistics.fmean(readings.busy), 3),
        busy_low=round(min(readings.busy), 3),
        busy_high=round(max(readings.busy), 3),
        readings=len(readings.busy),
        interval_s=interval_s,
        gpus=gpus,
        sm_clock_mhz=round(statistics.fmean(readings.sm_clock_mhz), 1)
        if readings.sm_clock_mhz
        else None,
        power_w=round(statistics.fmean(readings.power_w), 1) if readings.power_w else None,
    )


@dataclass
class ServerGpus:
    """A server's GPUs as NVML sees them, opened once per boot; ``sampler()`` per sample."""

    nvml: Any
    handles: list[Any]

    @classmethod
    def open(
        cls, gpu_ids: Sequence[str] | None, limit: int | None, nvml: Any | None = None
    ) -> ServerGpus | None:
        """None where NVML cannot be read (no nvidia-ml-py, no driver, no such GPU)."""
        nvml = load_nvml() if nvml is None else nvml
        if nvml is None:
            return None
        handles = device_handles(nvml, gpu_ids, limit)
        return cls(nvml, handles) if handles else None

    def names(self) -> list[str]:
        names = []
        for handle in self.handles:
            with contextlib.suppress(self.nvml.NVMLError):
                names.append(text(self.nvml.nvmlDeviceGetName(handle)))
        return names

    def uuids(self) -> list[str]:
        """Each GPU's UUID (``GPU-8f3c...``): which physical cards the server ran on."""
        found = []
        for handle in self.handles:
            with contextlib.suppress(self.nvml.NVMLError):
                found.append(text(self.nvml.nvmlDeviceGetUUID(handle)))
        return found

    def sampler(self, interval_s: float = READ_INTERVAL_S) -> GpuSampler:
        return GpuSampler(self.nvml, self.handles, interval_s)


def describe_gpus(gpu_ids: Sequence[str] | None = None, nvml: Any | None = None) -> str | None:
    """Each GPU's busy share and memory now, one line each (None: NVML not readable), for a
    boot that stopped without a word: a hung kernel shows busy, a wedged driver no answer."""
    nvml = load_nvml() if nvml is None else nvml
    if nvml is None:
        return None
    lines = []
    for index, handle in enumerate(device_handles(nvml, gpu_ids, None)):
        try:
            busy = nvml.nvmlDeviceGetUtilizationRates(handle).gpu
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        except nvml.NVMLError as exc:
            lines.append(f"GPU {index}: NVML error: {exc}")
            continue
        lines.append(
            f"GPU {index}: {busy}% busy, {memory.used / 2**30:.1f} of "
            f"{memory.total / 2**30:.1f} GiB in use"
        )
    return "\n".join(lines) or None
