"""gate.recommend: best depth per concurrency, the schedule, where depth stops paying, KV cost,
SLO capacity and the concurrencies --specperf-refine measures."""

from __future__ import annotations

from pytest_specperf.gate.recommend import (
    recommend,
    refine_concurrencies,
    schedule,
    slo_capacity,
    switch_point,
)
from pytest_specperf.results.schema import (
    DepthRun,
    Goodput,
    Percentiles,
    PointMetrics,
    ScheduleRange,
    ServerSummary,
    SloCapacity,
    StepCost,
    StopsPaying,
)
from tests.support.points import make_point, make_run


def point(
    c: int, agg: float, per_req: float | None = None, meets: bool | None = None
) -> PointMetrics:
    goodput = None
    if meets is not None:
        goodput = Goodput(goodput_tok_s=agg, requests_meeting=1, requests=1, meets_slo=meets)
    return make_point(c, agg, ... if per_req is None else per_req, requests=1, goodput=goodput)


def run(depth: int, points: list[PointMetrics], tokens: int = 0, running: int = 0) -> DepthRun:
    server = ServerSummary(url="u", max_total_num_tokens=tokens, max_running_requests=running)
    return make_run(depth, points, server=server)


# Depth 3 wins at low load, depth 1 at high load: the seed's shape.
SHALLOW = run(1, [point(1, 120), point(4, 400), point(16, 1500), point(64, 1600)], 455_357, 26)
DEEP = run(3, [point(1, 230), point(4, 700), point(16, 1700), point(64, 1500)], 295_931, 17)


def test_best_depth_follows_the_higher_figure_per_concurrency() -> None:
    rec = recommend([SHALLOW, DEEP])
    assert rec is not None
    assert [(b.concurrency, b.by_agg) for b in rec.best] == [(1, 3), (4, 3), (16, 3), (64, 1)]


def test_a_deeper_depth_within_the_margin_loses_the_tie() -> None:
    """1% more is within the 2% margin: the shallower depth (more KV) is recommended."""
    rec = recommend([run(1, [point(1, 100)]), run(2, [point(1, 101)])])
    assert rec is not None and rec.best[0].by_agg == 1


def test_schedule_switches_at_the_geometric_midpoint() -> None:
    """Best 3 at C=16, best 1 at C=64: the switch is at sqrt(16*64) = 32."""
    rec = recommend([SHALLOW, DEEP])
    assert rec is not None and rec.metric == "agg_tok_s"
    assert rec.schedule == [
        ScheduleRange(min_concurrency=1, max_concurrency=31, depth=3),
        ScheduleRange(min_concurrency=32, max_concurrency=None, depth=1),
    ]
    assert rec.boundaries == [[16, 64]]


def test_schedule_of_neighbouring_concurrencies_leaves_no_gap() -> None:
    assert switch_point(4, 5) == 5
    assert schedule([(4, 2), (5, 1)]) == [
        ScheduleRange(min_concurrency=1, max_concurrency=4, depth=2),
        ScheduleRange(min_concurrency=5, max_concurrency=None, depth=1),
    ]


def test_deeper_depth_stops_paying_where_it_no_longer_wins() -> None:
    rec = recommend([SHALLOW, DEEP])
    assert rec is not None
    assert StopsPaying(shallower=1, deeper=3, metric="agg_tok_s", concurrency=64) in (
        rec.stops_paying
    )


def test_deeper_depth_that_always_wins_never_stops_paying() -> None:
    rec = recommend(
        [run(1, [point(1, 100), point(4, 300)]), run(2, [point(1, 150), point(4, 400)])]
    )
    assert rec is not None
    paying = [s for s in rec.stops_paying if s.metric == "agg_tok_s"]
    assert paying == [StopsPaying(shallower=1, deeper=2, metric="agg_tok_s", concurrency=None)]


def test_kv_cost_is_per_extra_step() -> None:
    """Two steps between depths 1 and 3: the loss is halved per step."""
    rec = recommend([SHALLOW, DEEP])
    assert rec is not None
    assert rec.kv_cost == [
        StepCost(
            shallower=1,
            deeper=3,
            kv_tokens_lost_per_step=(455_357 - 295_931) / 2,
            running_requests_lost_per_step=4.5,
        )
    ]


def test_slo_capacity_stops_at_the_first_miss() -> None:
    """C=1 and 4 meet, 16 misses, 32 meets again: the capacity is 4 (sustained from below)."""
    depth = run(
        2,
        [
            point(1, 1, meets=True),
            point(4, 1, meets=True),
            point(16, 1, meets=False),
            point(32, 1, meets=True),
        ],
    )
    assert slo_capacity(depth) == SloCapacity(depth=2, max_concurrency=4)


def test_slo_capacity_is_none_when_the_lowest_point_misses() -> None:
    assert slo_capacity(run(2, [point(1, 1, meets=False)])) == SloCapacity(
        depth=2, max_concurrency=None
    )


def test_with_slos_the_schedule_follows_goodput() -> None:
    shallow = run(1, [point(1, 100, meets=True), point(4, 300, meets=True)])
    deep = run(2, [point(1, 150, meets=True), point(4, 400, meets=True)])
    rec = recommend([shallow, deep])
    assert rec is not None and rec.metric == "goodput_tok_s"
    assert [cap.max_concurrency for cap in rec.slo_capacity] == [4, 4]


def test_single_depth_without_slos_has_no_recommendation() -> None:
    assert recommend([SHALLOW]) is None


def test_refine_measures_the_switch_points_not_yet_measured() -> None:
    rec = recommend([SHALLOW, DEEP])
    assert refine_concurrencies(rec, {1, 4, 16, 64}) == [32]
    assert refine_concurrencies(rec, {1, 4, 16, 32, 64}) == []


def test_per_request_ranking_uses_the_median_request_not_a_skewed_mean() -> None:
    """A depth whose mean per-request rate is inflated by one near-empty stream but whose
    median request is slower does not win by per-request speed."""
    shallow = point(4, 400, per_req=100)
    shallow.tpot_s = Percentiles(p50=0.010, p90=0.010, p99=0.010, mean=0.010)
    deep = point(4, 400, per_req=5000)
    deep.tpot_s = Percentiles(p50=0.012, p90=0.012, p99=0.012, mean=0.012)
    rec = recommend([run(1, [shallow]), run(2, [deep])])
    assert rec is not None and rec.best[0].by_per_req == 1


def test_the_control_is_recommended_where_speculation_stops_paying() -> None:
    """Depth 0 competes like any depth: at high concurrency 'do not speculate' is the pick,
    and a speculative depth must beat it by the margin."""
    control = run(0, [point(1, 100), point(4, 380), point(16, 1450), point(64, 1900)], 533_507, 30)
    rec = recommend([control, SHALLOW, DEEP])
    assert rec is not None
    assert rec.schedule[0].depth == 3 and rec.schedule[-1].depth == 0
    assert rec.schedule[-1].max_concurrency is None
    stops = {(s.shallower, s.deeper, s.metric): s.concurrency for s in rec.stops_paying}
    assert stops[(0, 1, "agg_tok_s")] == 64
