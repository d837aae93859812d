"""results/testbed_compare.py: the fingerprint's measured figures and how two fingerprints
differ."""

from __future__ import annotations

from pytest_specperf.results.schema import GpuUse, ServerCpu, Testbed
from pytest_specperf.results.testbed_compare import differences, differs_line, measured, merged
from tests.support.points import make_point

H200 = Testbed(cpu_model="Intel(R) Xeon(R) Platinum 8480+", gpu_name="NVIDIA H200", driver="580")


def test_a_run_on_another_cpu_says_which_and_how_much_slower_its_vcpu_ran() -> None:
    run = Testbed(cpu_model="AMD EPYC 9654", core_speed=4.5, gpu_name="NVIDIA H200")
    baseline = Testbed(cpu_model="Intel Xeon 8480", core_speed=7.0, gpu_name="NVIDIA H200")
    assert differs_line(run, baseline) == (
        "testbed differs from the baseline's: CPU AMD EPYC 9654 vs Intel Xeon 8480, "
        "vCPU 4.50 vs 7.00 M loops/s (-35.7%)"
    )


def test_the_same_machine_within_the_probe_noise_is_not_different() -> None:
    run = Testbed(cpu_model="Xeon", core_speed=6.7, sm_clock_mhz=1980)
    assert differs_line(run, Testbed(cpu_model="Xeon", core_speed=7.0, sm_clock_mhz=1965)) is None


def test_a_field_either_side_lacks_is_not_compared() -> None:
    # An old baseline (no fingerprint) or the simulator (no GPU fields) says nothing.
    assert differences(H200, None) == []
    assert differences(Testbed(cpu_model=H200.cpu_model), H200) == []


def test_driver_and_versions_are_compared() -> None:
    run = Testbed(driver="590", torch="2.14.1+cu130", sglang="0.5.23")
    base = Testbed(driver="580", torch="2.11.0+cu130", sglang="0.5.12")
    assert differences(run, base) == [
        "driver 590 vs 580",
        "torch 2.14.1+cu130 vs 2.11.0+cu130",
        "SGLang 0.5.23 vs 0.5.12",
    ]


def test_measured_takes_the_samples_medians_and_keeps_what_none_measured() -> None:
    point = make_point(concurrency=1)
    point.samples = [make_point(concurrency=1), make_point(concurrency=1), make_point(1)]
    for sample, speed, clock in zip(
        point.samples, (4.4, 4.6, 7.0), (1980, 1970, 1990), strict=True
    ):
        sample.server_cpu = ServerCpu(process="sched", share=1.0, core=3, core_speed=speed)
        sample.gpu = GpuUse(
            busy=0.5, busy_low=0.4, busy_high=0.6, readings=5, interval_s=0.2, sm_clock_mhz=clock
        )
    result = measured(Testbed(cpu_model="x", power_w=700.0), [point])
    assert (result.core_speed, result.sm_clock_mhz, result.power_w) == (4.6, 1980, 700.0)


def test_a_baseline_over_boots_takes_the_boots_median_figures() -> None:
    boots = [Testbed(cpu_model="x", core_speed=s) for s in (4.5, 7.0, 6.9)] + [None]
    result = merged(boots)
    assert result is not None and result.core_speed == 6.9 and result.cpu_model == "x"
    assert merged([None]) is None
