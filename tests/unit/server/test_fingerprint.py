"""server/fingerprint.py: the fingerprint of the machine and of the server's environment."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_specperf.server.fingerprint import collect, cpu_model, cuda_version, package_versions
from pytest_specperf.server.gpu_use import ServerGpus
from tests.unit.server.fake_nvml import FakeGpu, FakeNvml


def test_the_cpu_model_is_the_first_model_name(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n\n"
        "processor\t: 1\nmodel name\t: something else\n"
    )
    assert cpu_model(cpuinfo) == "Intel(R) Xeon(R) Platinum 8480+"


def test_nvml_cuda_numbers_read_as_versions() -> None:
    assert cuda_version(13000) == "13.0" and cuda_version(12040) == "12.4"


def test_package_versions_come_from_the_servers_interpreter() -> None:
    # This venv has SGLang (the contract tests') and torch; whatever is there is named.
    versions = package_versions(sys.executable)
    assert set(versions) <= {"torch", "sglang"}
    assert package_versions("/no/such/python") == {}


def test_a_real_server_gets_gpu_driver_and_cuda_from_nvml() -> None:
    nvml = FakeNvml([FakeGpu(name=b"NVIDIA H200")], driver=b"580.159.04", cuda=13000)
    gpus = ServerGpus.open(None, None, nvml=nvml)
    testbed = collect(gpus=gpus, python=None, sglang_reported="0.5.12", real_server=True)
    assert (testbed.gpu_name, testbed.gpus) == ("NVIDIA H200", 1)
    assert (testbed.driver, testbed.cuda, testbed.sglang) == ("580.159.04", "13.0", "0.5.12")


def test_a_real_server_records_which_cards_it_ran_on() -> None:
    """The GPUs' UUIDs: what tells two runs of one machine from runs of two."""
    nvml = FakeNvml([FakeGpu(uuid="GPU-1111"), FakeGpu(uuid="GPU-2222")])
    gpus = ServerGpus.open(None, None, nvml=nvml)
    testbed = collect(gpus=gpus, python=None, sglang_reported="0.5.12", real_server=True)
    assert testbed.gpu_uuid == "GPU-1111, GPU-2222"


def test_the_simulator_gets_no_gpu_or_package_fields() -> None:
    nvml = FakeNvml([FakeGpu()])
    gpus = ServerGpus.open(None, None, nvml=nvml)
    testbed = collect(gpus=gpus, python=None, sglang_reported=None, real_server=False)
    assert testbed.cpu_model is not None or sys.platform != "linux"
    assert (testbed.gpu_name, testbed.driver, testbed.cuda, testbed.torch) == (None,) * 4


def test_a_real_server_without_nvml_has_empty_gpu_fields() -> None:
    testbed = collect(gpus=None, python=None, sglang_reported="0.5.12", real_server=True)
    assert (testbed.gpu_name, testbed.gpus, testbed.driver, testbed.cuda) == (None,) * 4
