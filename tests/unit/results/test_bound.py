"""results/schema.point_bound and its merge over repeats: GPU-bound, CPU-bound or mixed."""

from __future__ import annotations

import pytest

from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.schema import GpuUse, ServerCpu, point_bound
from tests.support.points import make_point


def cpu(share: float) -> ServerCpu:
    return ServerCpu(process="sglang::scheduler", share=share)


def gpu(busy: float) -> GpuUse:
    return GpuUse(busy=busy, busy_low=busy, busy_high=busy, readings=10, interval_s=0.2)


@pytest.mark.parametrize(
    ("share", "busy", "bound"),
    [
        (0.70, 0.95, "gpu-bound"),
        # The lent H200's readings (docs/runs/2026-12-05-seed-h200): the seed point at C=64,
        # 2,048 tokens, its scheduler's core full while it spins on the GPU ...
        (1.00, 0.93, "gpu-bound"),
        (1.01, 0.96, "gpu-bound"),
        # ... the seed-class A/A's C=64 at 256 tokens (the GPU idle a sixth of the time) and
        # the NGRAM smoke's C=16 (2026-12-04 evening): the core is the limit.
        (1.00, 0.85, "cpu-bound"),
        (1.05, 0.17, "cpu-bound"),
        (0.90, None, "cpu-bound"),  # no NVML: a scheduler flat out still says CPU-bound
        (0.85, 0.95, "gpu-bound"),
        (0.60, 0.70, "mixed"),
        (0.60, None, None),  # neither side says
    ],
)
def test_the_rule(share: float, busy: float | None, bound: str | None) -> None:
    assert point_bound(cpu(share), gpu(busy) if busy is not None else None) == bound


def test_a_busy_gpu_is_the_bound_even_without_the_cpu_share() -> None:
    assert point_bound(None, gpu(0.99)) == "gpu-bound"
    assert point_bound(None, gpu(0.89)) is None


def test_repeats_keep_an_agreed_bound_and_call_a_split_one_mixed() -> None:
    a = make_point(concurrency=4)
    a.bound, a.gpu = "gpu-bound", gpu(0.95)
    b = make_point(concurrency=4)
    b.bound, b.gpu = "gpu-bound", gpu(0.92)
    merged = merge_samples([a, b])
    assert merged.bound == "gpu-bound"
    assert merged.gpu is not None and merged.gpu.busy == 0.92  # the least busy sample
    c = make_point(concurrency=4)
    c.bound = "cpu-bound"
    assert merge_samples([a, b, c]).bound == "mixed"
    d = make_point(concurrency=4)
    assert merge_samples([a, d]).bound is None


def test_the_depth_table_shows_gpu_busy_and_bound_only_where_read() -> None:
    from pytest_specperf.results.report import depth_table
    from tests.support.points import make_run

    plain = depth_table(make_run(3, [make_point(concurrency=1)]))
    assert "Bound" not in plain.header
    point = make_point(concurrency=16)
    point.server_cpu, point.gpu, point.bound = cpu(0.7), gpu(0.93), "gpu-bound"
    table = depth_table(make_run(3, [point]))
    assert table.header[-3:] == ["GPU busy", "Server CPU", "Bound"]
    assert table.rows[0][-3:] == ["93% (93-93%)", "70%", "gpu-bound"]
    wording = "gpu-bound where the GPU was busy 90% or more (whatever the"
    assert any(wording in note for note in table.notes)


def test_the_wait_for_the_gpu_read_from_the_stack_is_not_counted_as_cpu_work() -> None:
    waiting = ServerCpu(process="sglang::scheduler", share=1.0, gpu_wait=0.45)
    assert waiting.work_share == pytest.approx(0.55) and not waiting.cpu_bound
    assert point_bound(waiting, gpu(0.80)) == "mixed"
    working = ServerCpu(process="sglang::scheduler", share=1.0, gpu_wait=0.05)
    assert point_bound(working, gpu(0.50)) == "cpu-bound"


def test_the_table_shows_the_wait_beside_the_share() -> None:
    from pytest_specperf.results.report import depth_table
    from tests.support.points import make_run

    point = make_point(concurrency=64)
    point.server_cpu = ServerCpu(process="sglang::scheduler", share=1.0, gpu_wait=0.45)
    point.gpu, point.bound = gpu(0.93), "gpu-bound"
    table = depth_table(make_run(3, [point]))
    assert table.rows[0][-2] == "100% (GPU wait 45%)"
    assert any(
        "of which waiting for the GPU (py-spy, in torch's CUDA synchronize): C=64 45%" in note
        for note in table.notes
    )
