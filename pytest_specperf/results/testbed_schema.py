"""results.json's testbed structs (re-exported by ``results/schema.py``): the server's CPU and
GPUs during a sample, what bounded the sample, the machine a run was measured on."""

from __future__ import annotations

from typing import Literal

import msgspec

# A server process at this share of one core or more is the bottleneck, not a bystander.
CPU_BOUND_SHARE = 0.9
# What that means for the figures, said wherever a CPU-bound server is reported.
CPU_BOUND_MEANING = (
    "the throughput follows the speed of one core of this runner, which can move between boots"
)


class ServerCpu(msgspec.Struct, frozen=True, kw_only=True):
    """The server's busiest process while a sample ran (server/cpu_use.py): its name and its
    CPU time over the sample's wall time (1.0: one core flat out)."""

    process: str
    share: float
    # The vCPU that process last ran on when the sample ended (None: not known).
    core: int | None = None
    # That vCPU's speed right after the sample, while the server idled: a single-thread Python
    # loop pinned there, M iterations/s (server/cpu_use.py, core_speed). Measured only for a
    # CPU-bound process, whose throughput follows it; on a shared virtual machine it moves
    # between vCPUs and over time (docs/reference/metrics.md).
    core_speed: float | None = None
    # The share of the sample's wall time its main thread waited for the GPU (in torch's CUDA
    # synchronize, which spins and so counts in ``share``), from py-spy's stack samples
    # (server/gpu_wait.py); None: not sampled.
    gpu_wait: float | None = None

    @property
    def work_share(self) -> float:
        """Its share of a core less its wait for the GPU (the share where the wait is not
        known)."""
        return max(self.share - (self.gpu_wait or 0.0), 0.0)

    @property
    def cpu_bound(self) -> bool:
        return self.work_share >= CPU_BOUND_SHARE


# A point's bottleneck (``point_bound``), read GPU first: the GPU busy at GPU_BUSY_SHARE or
# more is GPU-bound, whatever the server's CPU reads; else the server's busiest process at
# CPU_BOUND_SHARE of a core or more (less its wait for the GPU where py-spy read its stack,
# ``ServerCpu.work_share``) is CPU-bound (its throughput then follows that core); anything
# else measured is mixed. Why the GPU first: SGLang's scheduler waits for each batch on a
# default CUDA event (``result.copy_done.synchronize()``), and CUDA's default wait spins while
# a process has fewer contexts than the machine has cores, so the scheduler's core reads 100%
# whether it works or waits (docs/reference/metrics.md). A GPU kernel-busy 90% of the time
# leaves a faster CPU at most about a tenth to win.
GPU_BUSY_SHARE = 0.9
Bound = Literal["gpu-bound", "cpu-bound", "mixed"]


class GpuUse(msgspec.Struct, frozen=True, kw_only=True):
    """The server's GPUs while a sample ran (server/gpu_use.py): NVML read on a thread every
    ``interval_s``. ``busy`` is the mean of NVML's utilization rate (the share of its last
    sampling period, 1/6 s to 1 s by product, in which a kernel ran) over the readings and
    the GPUs; the SM clock and the board power are the means of theirs (None: not read)."""

    busy: float
    busy_low: float
    busy_high: float
    readings: int
    interval_s: float
    gpus: int = 1
    sm_clock_mhz: float | None = None
    power_w: float | None = None


def point_bound(cpu: ServerCpu | None, gpu: GpuUse | None) -> Bound | None:
    """What bounded a sample (the rule above); None where neither side says."""
    if gpu is not None and gpu.busy >= GPU_BUSY_SHARE:
        return "gpu-bound"
    if cpu is not None and cpu.cpu_bound:
        return "cpu-bound"
    if cpu is None or gpu is None:
        return None
    return "mixed"


def follows_its_core(cpu: ServerCpu | None, bound: Bound | None) -> bool:
    """Whether a point's throughput follows one core of the runner: its busiest process
    CPU-bound and the point not gpu-bound (a full core beside a busy GPU is the wait)."""
    return cpu is not None and cpu.cpu_bound and bound != "gpu-bound"


class Testbed(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The machine a run (or a baseline) was measured on (server/fingerprint.py collects it,
    results/testbed_compare.py fills in the measured figures and compares two). Every field is
    None where it could not be read: on the simulator, or without NVML, the GPU fields stay
    empty.
    """

    cpu_model: str | None = None
    # The single-thread speed of the vCPUs the server's busiest process ran on, M loop
    # iterations/s (server/cpu_use.py core_speed): the median over the samples that timed one
    # (CPU-bound ones), else the vCPU --specperf-server-cpu=pin-fastest chose.
    core_speed: float | None = None
    gpu_name: str | None = None
    gpus: int | None = None
    # NVML's UUID of each of the server's GPUs, comma-separated: which cards, so that a
    # baseline merged from several runs (``specperf baseline merge``) counts machines, not runs.
    # Never compared with a baseline's: every runner's differs.
    gpu_uuid: str | None = None
    # Means over the samples' GPU readings (GpuUse): MHz and W.
    sm_clock_mhz: float | None = None
    power_w: float | None = None
    driver: str | None = None
    # The CUDA version the driver supports (NVML), e.g. "13.0".
    cuda: str | None = None
    # The server's own interpreter's packages (torch's local version names its CUDA build).
    torch: str | None = None
    sglang: str | None = None
