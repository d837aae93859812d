"""A stand-in for the ``pynvml`` module at its boundary: the calls server/gpu_use.py and
server/fingerprint.py make, with the types nvidia-ml-py returns (utilization as a struct with
``.gpu`` in percent, power in mW, clocks in MHz; names as str or bytes by release)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


class NVMLError(Exception):
    pass


@dataclass
class FakeGpu:
    name: str | bytes = "NVIDIA H200"
    uuid: str = "GPU-aaaa"
    busy: list[int] = field(default_factory=lambda: [95])  # percent, one per reading, cycled
    sm_clock_mhz: int = 1980
    power_mw: int = 650_000
    broken: bool = False  # every reading raises NVMLError
    reads: int = 0


@dataclass
class FakeNvml:
    gpus: list[FakeGpu]
    driver: str | bytes = "580.159.04"
    cuda: int = 13000
    NVML_CLOCK_SM: int = 1
    NVMLError: type[Exception] = NVMLError
    initialised: int = 0

    def nvmlInit(self) -> None:
        self.initialised += 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        if not 0 <= index < len(self.gpus):
            raise NVMLError("Invalid Argument")
        return self.gpus[index]

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> FakeGpu:
        for gpu in self.gpus:
            if gpu.uuid == uuid:
                return gpu
        raise NVMLError("Not Found")

    def nvmlDeviceGetName(self, handle: FakeGpu) -> str | bytes:
        return handle.name

    def nvmlDeviceGetUUID(self, handle: FakeGpu) -> str:
        return handle.uuid

    def nvmlDeviceGetUtilizationRates(self, handle: FakeGpu) -> Any:
        if handle.broken:
            raise NVMLError("GPU is lost")
        value = handle.busy[handle.reads % len(handle.busy)]
        handle.reads += 1
        return SimpleNamespace(gpu=value, memory=10)

    def nvmlDeviceGetClockInfo(self, handle: FakeGpu, kind: int) -> int:
        if handle.broken:
            raise NVMLError("GPU is lost")
        assert kind == self.NVML_CLOCK_SM
        return handle.sm_clock_mhz

    def nvmlDeviceGetPowerUsage(self, handle: FakeGpu) -> int:
        if handle.broken:
            raise NVMLError("GPU is lost")
        return handle.power_mw

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu) -> Any:
        if handle.broken:
            raise NVMLError("GPU is lost")
        return SimpleNamespace(used=130 * 2**30, total=140 * 2**30, free=10 * 2**30)

    def nvmlSystemGetDriverVersion(self) -> str | bytes:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda
