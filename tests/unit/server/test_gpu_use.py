"""pytest_specperf.server.gpu_use: the server's GPUs read through NVML during a sample."""

from __future__ import annotations

import time

import pytest

from pytest_specperf.server import gpu_use
from pytest_specperf.server.gpu_use import GpuSampler, ServerGpus, describe_gpus, device_handles
from tests.unit.server.fake_nvml import FakeGpu, FakeNvml


def test_without_nvidia_ml_py_nothing_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pynvml(name: str, *args: object, **kwargs: object) -> object:
        if name == "pynvml":
            raise ImportError("no pynvml")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    assert gpu_use.load_nvml() is None
    assert ServerGpus.open(None, None) is None


def test_without_a_driver_nothing_is_read() -> None:
    # This machine has nvidia-ml-py and no NVIDIA driver: nvmlInit raises, nothing invented.
    pytest.importorskip("pynvml")
    assert gpu_use.load_nvml() is None


def test_the_server_gpus_are_its_visible_devices_up_to_its_tp_size() -> None:
    gpus = [FakeGpu(uuid=f"GPU-{i}") for i in range(4)]
    nvml = FakeNvml(gpus)
    assert device_handles(nvml, ("2", "3"), None) == [gpus[2], gpus[3]]
    assert device_handles(nvml, ("GPU-1",), None) == [gpus[1]]
    assert device_handles(nvml, None, 2) == gpus[:2]
    assert device_handles(nvml, ("7",), None) == []  # not there: nothing, not another GPU


def test_a_sample_reads_busy_share_clock_and_power() -> None:
    nvml = FakeNvml([FakeGpu(busy=[90, 100], sm_clock_mhz=1980, power_mw=600_000)])
    sampler = GpuSampler(nvml, nvml.gpus)
    for _ in range(4):
        sampler.read_once()
    use = sampler.stop()
    assert use is not None
    assert use.busy == pytest.approx(0.95)
    assert (use.busy_low, use.busy_high, use.readings) == (0.9, 1.0, 4)
    assert use.sm_clock_mhz == 1980 and use.power_w == 600.0


def test_a_tensor_parallel_server_is_as_busy_as_its_gpus_together() -> None:
    nvml = FakeNvml([FakeGpu(busy=[100]), FakeGpu(uuid="GPU-b", busy=[50])])
    sampler = GpuSampler(nvml, nvml.gpus)
    sampler.read_once()
    use = sampler.stop()
    assert use is not None and use.busy == 0.75 and use.gpus == 2


def test_a_gpu_nvml_cannot_read_gives_no_figures() -> None:
    nvml = FakeNvml([FakeGpu(broken=True)])
    sampler = GpuSampler(nvml, nvml.gpus)
    sampler.read_once()
    assert sampler.stop() is None


def test_the_thread_reads_at_its_interval_until_stopped() -> None:
    nvml = FakeNvml([FakeGpu()])
    sampler = GpuSampler(nvml, nvml.gpus, interval_s=0.01).start()
    time.sleep(0.2)
    use = sampler.stop()
    reads = nvml.gpus[0].reads
    time.sleep(0.05)
    assert use is not None and use.readings >= 3
    assert nvml.gpus[0].reads == reads  # stopped: no reading after stop()


def test_open_names_the_gpus_from_str_or_bytes() -> None:
    nvml = FakeNvml([FakeGpu(name=b"NVIDIA H200"), FakeGpu(uuid="GPU-b", name="NVIDIA H200")])
    opened = ServerGpus.open(None, None, nvml=nvml)
    assert opened is not None and opened.names() == ["NVIDIA H200", "NVIDIA H200"]


def test_a_silent_boot_is_told_what_its_gpus_are_doing() -> None:
    nvml = FakeNvml([FakeGpu(busy=[100]), FakeGpu(uuid="GPU-b", broken=True)])
    assert describe_gpus(None, nvml=nvml) == (
        "GPU 0: 100% busy, 130.0 of 140.0 GiB in use\nGPU 1: NVML error: GPU is lost"
    )
