"""The testbed fingerprint's measured figures, and how two fingerprints differ.

A run's figures follow its machine: a CPU-bound profile can read well under a baseline
recorded on another machine with nothing changed, its scheduler at 100% of a core whose speed
differs between machines (docs/explanation/gate.md). A verdict says first when its run's
machine differs from the baseline's (``differences``), so a red caused by the runner reads as
such.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from pytest_specperf.results.formats import relative_change
from pytest_specperf.results.schema import PointMetrics, Testbed

# vCPU speeds (M loop iterations/s) within this share of each other count as the same: the
# probe moves by a few percent between runs on one vCPU.
CORE_SPEED_TOLERANCE = 0.10
# SM clocks within this share count as the same (boost moves them by tens of MHz).
SM_CLOCK_TOLERANCE = 0.05


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def measured(testbed: Testbed, points: Sequence[PointMetrics]) -> Testbed:
    """``testbed`` with the figures its samples measured: the vCPU speed under a CPU-bound
    server, the SM clock and the power (medians; a field none measured keeps its value)."""
    samples = [sample for point in points for sample in point.all_samples()]
    speeds = [
        s.server_cpu.core_speed
        for s in samples
        if s.server_cpu is not None and s.server_cpu.core_speed is not None
    ]
    clocks = [s.gpu.sm_clock_mhz for s in samples if s.gpu and s.gpu.sm_clock_mhz is not None]
    power = [s.gpu.power_w for s in samples if s.gpu and s.gpu.power_w is not None]
    return msgspec.structs.replace(
        testbed,
        core_speed=_median(speeds) if speeds else testbed.core_speed,
        sm_clock_mhz=_median(clocks) if clocks else testbed.sm_clock_mhz,
        power_w=_median(power) if power else testbed.power_w,
    )


def merged(testbeds: Sequence[Testbed | None]) -> Testbed | None:
    """One fingerprint for a baseline recorded over several boots: the last boot's names,
    the median of the boots' measured figures."""
    known = [t for t in testbeds if t is not None]
    if not known:
        return None

    def median_of(name: str) -> float | None:
        return _median([v for t in known if (v := getattr(t, name)) is not None])

    return msgspec.structs.replace(
        known[-1],
        core_speed=median_of("core_speed"),
        sm_clock_mhz=median_of("sm_clock_mhz"),
        power_w=median_of("power_w"),
    )


def _apart(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) > tolerance * max(a, b)


def differences(run: Testbed | None, baseline: Testbed | None) -> list[str]:
    """What differs between the run's machine and the baseline's (empty: nothing known
    differs; a field either side lacks is not compared)."""
    if run is None or baseline is None:
        return []
    found = []
    for label, name in (
        ("CPU", "cpu_model"),
        ("GPU", "gpu_name"),
        ("GPUs", "gpus"),
        ("driver", "driver"),
        ("CUDA", "cuda"),
        ("torch", "torch"),
        ("SGLang", "sglang"),
    ):
        mine, theirs = getattr(run, name), getattr(baseline, name)
        if mine is not None and theirs is not None and mine != theirs:
            found.append(f"{label} {mine} vs {theirs}")
    if (
        run.core_speed is not None
        and baseline.core_speed is not None
        and _apart(run.core_speed, baseline.core_speed, CORE_SPEED_TOLERANCE)
    ):
        found.append(
            f"vCPU {run.core_speed:.2f} vs {baseline.core_speed:.2f} M loops/s "
            f"({relative_change(run.core_speed / baseline.core_speed)})"
        )
    if (
        run.sm_clock_mhz is not None
        and baseline.sm_clock_mhz is not None
        and _apart(run.sm_clock_mhz, baseline.sm_clock_mhz, SM_CLOCK_TOLERANCE)
    ):
        found.append(f"SM clock {run.sm_clock_mhz:,.0f} vs {baseline.sm_clock_mhz:,.0f} MHz")
    return found


def differs_line(run: Testbed | None, baseline: Testbed | None) -> str | None:
    """``testbed differs from the baseline's: CPU A vs B, vCPU 4.50 vs 7.00 M loops/s (-36%)``
    (None: nothing known differs)."""
    found = differences(run, baseline)
    return f"testbed differs from the baseline's: {', '.join(found)}" if found else None
