"""measure.repeats: the interleaved order of a repeated sweep and R samples -> one point."""

from __future__ import annotations

import msgspec
import pytest

from pytest_specperf.measure.repeats import interleaved, merge_samples, split_by_boot
from pytest_specperf.results.schema import (
    ClientHealth,
    DepthRun,
    Interval,
    PointMetrics,
    ServerCpu,
)
from tests.support.points import make_point


def sample(
    agg: float,
    per_req: float | None = None,
    *,
    concurrency: int = 4,
    boot: int = 0,
    failed: int = 0,
    lag_p99: float = 0.001,
    client_bound: str | None = None,
) -> PointMetrics:
    return make_point(
        concurrency,
        agg,
        agg / 4 if per_req is None else per_req,
        requests=8,
        failed=failed,
        errors={"HTTP 500": failed} if failed else {},
        tokens=8000,
        wall_s=2.0,
        accept_length=4.0,
        spec_verify_ct=2000,
        client=ClientHealth(
            cpu_s=0.1,
            wall_s=2.0,
            loop_lag_p50_s=0.0,
            loop_lag_p99_s=lag_p99,
            loop_lag_max_s=lag_p99,
            samples=10,
        ),
        client_bound=client_bound,
        boot=boot,
    )


def fake_summarize(values: object) -> tuple[float, Interval | None]:
    numbers = sorted(values)  # type: ignore[call-overload]
    return numbers[len(numbers) // 2], Interval(
        low=numbers[0], high=numbers[-1], level=0.95, method="range"
    )


def test_interleaved_measures_every_level_once_per_round() -> None:
    """1, 4, 16, 1, 4, 16: rounds follow each other, never 1, 1, 4, 4."""
    order = [level for _, level in interleaved([1, 4, 16], 2)]
    assert order == [1, 4, 16, 1, 4, 16]


def test_merged_point_reports_the_median_and_the_interval_of_its_samples() -> None:
    point = merge_samples([sample(90.0), sample(110.0), sample(100.0)], fake_summarize)
    assert point.agg_tok_s == 100.0
    assert point.intervals["agg_tok_s"].low == 90.0
    assert point.intervals["agg_tok_s"].high == 110.0


def test_merged_point_keeps_every_sample() -> None:
    point = merge_samples([sample(90.0), sample(110.0)], fake_summarize)
    assert [s.agg_tok_s for s in point.samples] == [90.0, 110.0]


def test_merged_point_sums_requests_and_failures_of_all_samples() -> None:
    point = merge_samples([sample(90.0, failed=1), sample(110.0, failed=2)], fake_summarize)
    assert (point.requests, point.ok, point.failed) == (16, 13, 3)
    assert point.errors == {"HTTP 500": 3}


def test_merged_point_sums_histograms_and_takes_the_median_rate_per_position() -> None:
    """Acceptance histograms are counts (summed); each position's rate is the samples' median."""
    samples = [sample(100.0), sample(110.0), sample(120.0)]
    for item, histogram, rates in zip(
        samples,
        ([1, 2, 7], [0, 4, 6], [2, 2, 6, 1]),
        ([0.9, 0.7], [1.0, 0.6], [0.8, 0.6, 0.1]),
        strict=True,
    ):
        item.accept_histogram, item.position_accept_rate = histogram, rates
    merged = merge_samples(samples, fake_summarize)
    assert merged.accept_histogram == [3, 8, 19, 1]
    assert merged.position_accept_rate == [0.9, 0.6, 0.1]


def test_merging_a_merged_point_with_new_samples_flattens_them() -> None:
    """Confirmation adds samples to a point that is already a merge: one flat list."""
    first = merge_samples([sample(90.0), sample(100.0)], fake_summarize)
    again = merge_samples([first, sample(110.0)], fake_summarize)
    assert [s.agg_tok_s for s in again.samples] == [90.0, 100.0, 110.0]


def test_one_sample_is_its_own_point() -> None:
    only = sample(90.0)
    assert merge_samples([only], fake_summarize) is only


def test_merged_point_shows_the_client_health_of_the_sample_that_lagged_most() -> None:
    point = merge_samples([sample(90.0, lag_p99=0.001), sample(100.0, lag_p99=0.2)], fake_summarize)
    assert point.client is not None and point.client.loop_lag_p99_s == 0.2


def test_a_client_bound_sample_makes_the_point_client_bound_naming_the_sample() -> None:
    point = merge_samples(
        [sample(90.0), sample(100.0, client_bound="loop lag p99 80 ms")], fake_summarize
    )
    assert point.client_bound == "sample 2 of 2: loop lag p99 80 ms"


def test_merging_more_samples_names_the_client_bound_one_among_all() -> None:
    """Merging a merged point with new samples counts every sample, without nesting names."""
    earlier = merge_samples([sample(90.0), sample(95.0)], fake_summarize)
    point = merge_samples([earlier, sample(100.0, client_bound="lag")], fake_summarize)
    assert point.client_bound == "sample 3 of 3: lag"


def test_samples_of_different_concurrencies_do_not_merge() -> None:
    with pytest.raises(ValueError, match="different concurrencies"):
        merge_samples([sample(90.0, concurrency=1), sample(90.0, concurrency=4)], fake_summarize)


def test_default_summary_is_the_gates_own() -> None:
    """Without an injected summary the interval comes from gate.decision.summarize."""
    point = merge_samples([sample(90.0), sample(100.0), sample(110.0)])
    assert point.intervals["agg_tok_s"].method.startswith("t interval")


def _run(points: list[PointMetrics]) -> DepthRun:
    return DepthRun(
        depth=3, profile="p", backend="sim", hardware="sim-x5", workload={}, points=points
    )


def test_split_by_boot_gives_one_run_per_boot_with_that_boots_samples() -> None:
    point = merge_samples(
        [sample(90.0, boot=0), sample(92.0, boot=0), sample(120.0, boot=1)], fake_summarize
    )
    boots = split_by_boot(_run([point]), fake_summarize)
    assert [[s.agg_tok_s for s in r.points[0].all_samples()] for r in boots] == [
        [90.0, 92.0],
        [120.0],
    ]


def test_split_by_boot_of_one_boot_is_the_run_itself() -> None:
    run = _run([merge_samples([sample(90.0), sample(92.0)], fake_summarize)])
    assert split_by_boot(run, fake_summarize) == [run]


def test_sample_boot_survives_results_json() -> None:
    point = merge_samples([sample(90.0, boot=0), sample(92.0, boot=1)], fake_summarize)
    decoded = msgspec.json.decode(msgspec.json.encode(point), type=PointMetrics)
    assert [s.boot for s in decoded.samples] == [0, 1]


def test_merged_point_keeps_the_least_busy_samples_server_cpu() -> None:
    """CPU-bound only if every sample was: the least busy sample's figure stands for the point."""
    samples = [sample(100.0), sample(101.0), sample(99.0)]
    for each, share in zip(samples, (0.99, 0.62, 0.97), strict=True):
        each.server_cpu = ServerCpu(process="sglang::scheduler", share=share)
    merged = merge_samples(samples)
    assert merged.server_cpu == ServerCpu(process="sglang::scheduler", share=0.62)
