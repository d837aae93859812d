"""The testbed fingerprint of a server this run starts: what the machine and the server's
environment are (results/testbed_compare.py adds what the samples measured).

CPU model: /proc/cpuinfo (Linux), else platform. GPU name, count, driver and the CUDA version
the driver supports: NVML (nvidia-ml-py, server/gpu_use.py), only for a real SGLang server:
the simulator gets no GPU fields. torch: the server's interpreter's installed distribution
(``importlib.metadata``: no import of torch), whose local version names its CUDA build
(``2.11.0+cu130``). SGLang: /server_info's ``version``, else the server's distribution.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_specperf.results.schema import Testbed
from pytest_specperf.server.gpu_use import ServerGpus, text

_VERSIONS = (
    "import importlib.metadata as m\n"
    "for name in ('torch', 'sglang'):\n"
    "    try:\n"
    "        print(name, m.version(name))\n"
    "    except m.PackageNotFoundError:\n"
    "        print(name, '-')\n"
)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """``Intel(R) Xeon(R) Platinum 8480+``: the first ``model name`` (None: not known)."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or None


def package_versions(python: str | None) -> dict[str, str]:
    """torch's and SGLang's installed versions for the server's interpreter (absent: not
    installed there, or the interpreter did not answer)."""
    try:
        done = subprocess.run(
            [python or sys.executable, "-c", _VERSIONS],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (subprocess.SubprocessError, OSError):
        return {}
    versions = {}
    for line in done.stdout.splitlines():
        name, _, version = line.partition(" ")
        if version and version != "-":
            versions[name] = version
    return versions


def cuda_version(number: int) -> str:
    """NVML's 13000 -> ``13.0``; 12040 -> ``12.4``."""
    return f"{number // 1000}.{number % 1000 // 10}"


def collect(
    *,
    gpus: ServerGpus | None,
    python: str | None,
    sglang_reported: str | None,
    real_server: bool,
) -> Testbed:
    """The fingerprint of this machine and a server started by ``python``; ``real_server``
    False (the simulator): no GPU or package fields."""
    testbed = Testbed(cpu_model=cpu_model())
    if not real_server:
        return testbed
    versions = package_versions(python)
    testbed.torch = versions.get("torch")
    testbed.sglang = sglang_reported or versions.get("sglang")
    if gpus is not None:
        names = gpus.names()
        testbed.gpu_name = ", ".join(dict.fromkeys(names)) or None
        testbed.gpus = len(gpus.handles)
        testbed.gpu_uuid = ", ".join(gpus.uuids()) or None
        testbed.driver = _system(gpus.nvml, "nvmlSystemGetDriverVersion", text)
        testbed.cuda = _system(gpus.nvml, "nvmlSystemGetCudaDriverVersion", cuda_version)
    return testbed


def _system(nvml: Any, call: str, form: Any) -> str | None:
    try:
        return str(form(getattr(nvml, call)()))
    except (nvml.NVMLError, AttributeError):
        return None
