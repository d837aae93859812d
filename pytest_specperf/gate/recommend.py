"""Which depth to run at which load: the recommendation from a multi-depth run.

Pure functions over results (no server, no pytest). The rules:

- The metrics: aggregate tok/s, per-request tok/s of the median request (1 / TPOT p50: see
  PointMetrics.median_request_tok_s) and goodput under the SLOs.
- At each concurrency measured at two or more depths, the best depth by a metric is the one
  with the highest value, except that a deeper depth must beat every shallower candidate by
  more than ``margin`` (2% unless set): each extra step costs KV capacity, so a tie goes to the
  shallower depth. Points with failed requests still count (their figures already include
  the failures); depths without a figure at that concurrency are left out.
- The schedule joins neighbouring concurrencies with the same best depth into ranges; where
  the best depth changes between two measured concurrencies a and b, the switch is put at
  their geometric midpoint round(sqrt(a*b)) -- the concurrency ``--specperf-refine`` measures.
- A deeper depth stops paying (per pair of neighbouring depths and metric) at the lowest
  measured concurrency from which it never again beats the shallower one by the margin.
- The KV cost of each extra step: the drop in max_total_num_tokens and max_running_requests
  between neighbouring depths, divided by the number of steps between them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from pytest_specperf.results.schema import (
    BestDepth,
    DepthRun,
    PointMetrics,
    Recommendation,
    ScheduleRange,
    SloCapacity,
    StepCost,
    StopsPaying,
)

DEFAULT_MARGIN = 0.02
Metric = Callable[[PointMetrics], float | None]


def _agg(point: PointMetrics) -> float | None:
    return point.agg_tok_s


def _per_req(point: PointMetrics) -> float | None:
    return point.median_request_tok_s


def _goodput(point: PointMetrics) -> float | None:
    return point.goodput.goodput_tok_s if point.goodput is not None else None


METRICS: dict[str, Metric] = {
    "agg_tok_s": _agg,
    "per_req_tok_s": _per_req,
    "goodput_tok_s": _goodput,
}


def _ordered(runs: Sequence[DepthRun]) -> list[DepthRun]:
    return sorted(runs, key=lambda r: r.depth)


def concurrencies(runs: Sequence[DepthRun]) -> list[int]:
    """Concurrencies measured at two or more depths, ascending."""
    counts: dict[int, int] = {}
    for run in runs:
        for c in {p.concurrency for p in run.points}:
            counts[c] = counts.get(c, 0) + 1
    return sorted(c for c, n in counts.items() if n >= 2)


def best_depth(
    runs: Sequence[DepthRun], concurrency: int, metric: Metric, margin: float = DEFAULT_MARGIN
) -> int | None:
    """The best depth at one concurrency (see the module rules); None if < 2 depths have it."""
    candidates: list[tuple[int, float]] = []
    for run in _ordered(runs):
        point = run.point(concurrency)
        value = metric(point) if point is not None else None
        if value is not None:
            candidates.append((run.depth, value))
    if len(candidates) < 2:
        return None
    best, best_value = candidates[0]
    for depth, value in candidates[1:]:
        if value > best_value * (1.0 + margin):
            best, best_value = depth, value
    return best


def switch_point(low: int, high: int) -> int:
    """Where a schedule switches between two measured concurrencies: the geometric midpoint."""
    return max(low + 1, min(high, round(math.sqrt(low * high))))


def schedule(picks: Sequence[tuple[int, int]]) -> list[ScheduleRange]:
    """(concurrency, best depth) pairs, ascending -> depth per concurrency range."""
    ranges: list[ScheduleRange] = []
    start = 1
    for index, (concurrency, depth) in enumerate(picks):
        following = picks[index + 1] if index + 1 < len(picks) else None
        if following is not None and following[1] == depth:
            continue
        end = None if following is None else switch_point(concurrency, following[0]) - 1
        ranges.append(ScheduleRange(min_concurrency=start, max_concurrency=end, depth=depth))
        if end is not None:
            start = end + 1
    return ranges


def boundaries(picks: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    return [
        (a, b) for (a, depth_a), (b, depth_b) in itertools.pairwise(picks) if depth_a != depth_b
    ]


def stops_paying(
    shallow: DepthRun, deep: DepthRun, metric_name: str, margin: float = DEFAULT_MARGIN
) -> StopsPaying | None:
    """None when the two depths share no measured concurrency for the metric."""
    metric = METRICS[metric_name]
    pays: list[tuple[int, bool]] = []
    for point in sorted(deep.points, key=lambda p: p.concurrency):
        other = shallow.point(point.concurrency)
        deep_value = metric(point)
        shallow_value = metric(other) if other is not None else None
        if deep_value is None or shallow_value is None:
            continue
        pays.append((point.concurrency, deep_value > shallow_value * (1.0 + margin)))
    if not pays:
        return None
    stops: int | None = None
    for concurrency, paid in reversed(pays):
        if paid:
            break
        stops = concurrency
    return StopsPaying(
        shallower=shallow.depth, deeper=deep.depth, metric=metric_name, concurrency=stops
    )


def step_cost(shallow: DepthRun, deep: DepthRun) -> StepCost:
    steps = deep.depth - shallow.depth
    a, b = shallow.server, deep.server

    def lost(before: int | None, after: int | None) -> float | None:
        if before is None or after is None or steps <= 0:
            return None
        return (before - after) / steps

    return StepCost(
        shallower=shallow.depth,
        deeper=deep.depth,
        kv_tokens_lost_per_step=lost(
            a.max_total_num_tokens if a else None, b.max_total_num_tokens if b else None
        ),
        running_requests_lost_per_step=lost(
            a.max_running_requests if a else None, b.max_running_requests if b else None
        ),
    )


def slo_capacity(run: DepthRun) -> SloCapacity | None:
    """None when the depth has no point judged against SLOs."""
    judged = sorted((p for p in run.points if p.goodput is not None), key=lambda p: p.concurrency)
    if not judged:
        return None
    largest: int | None = None
    for point in judged:
        assert point.goodput is not None
        if not point.goodput.meets_slo:
            break
        largest = point.concurrency
    return SloCapacity(depth=run.depth, max_concurrency=largest)


def recommend(runs: Sequence[DepthRun], margin: float = DEFAULT_MARGIN) -> Recommendation | None:
    """The recommendation; None when no two depths share a measured concurrency and no point
    was judged against SLOs (with SLOs, a single depth still gets its SLO capacity)."""
    ordered = _ordered(runs)
    shared = concurrencies(ordered)
    slo = [cap for run in ordered if (cap := slo_capacity(run)) is not None]
    if not shared and not slo:
        return None
    schedules: dict[str, list[ScheduleRange]] = {}
    picks_by_metric: dict[str, list[tuple[int, int]]] = {}
    for name, metric in METRICS.items():
        picks = [
            (c, depth)
            for c in shared
            if (depth := best_depth(ordered, c, metric, margin)) is not None
        ]
        if picks:
            picks_by_metric[name] = picks
            schedules[name] = schedule(picks)
    primary = "goodput_tok_s" if "goodput_tok_s" in schedules else "agg_tok_s"
    best = [
        BestDepth(
            concurrency=c,
            by_agg=best_depth(ordered, c, _agg, margin),
            by_per_req=best_depth(ordered, c, _per_req, margin),
            by_goodput=best_depth(ordered, c, _goodput, margin),
        )
        for c in shared
    ]
    pairs = list(itertools.pairwise(ordered))
    paying = [
        item
        for shallow, deep in pairs
        for name in schedules
        if (item := stops_paying(shallow, deep, name, margin)) is not None
    ]
    changes = sorted({pair for picks in picks_by_metric.values() for pair in boundaries(picks)})
    return Recommendation(
        metric=primary,
        schedule=schedules.get(primary, []),
        schedules=schedules,
        best=best,
        stops_paying=paying,
        kv_cost=[step_cost(shallow, deep) for shallow, deep in pairs],
        slo_capacity=slo,
        boundaries=[list(pair) for pair in changes],
        margin=margin,
    )


def refine_concurrencies(recommendation: Recommendation | None, measured: set[int]) -> list[int]:
    """The switch points of every boundary that are not measured yet, ascending."""
    if recommendation is None:
        return []
    points = {switch_point(a, b) for a, b in recommendation.boundaries}
    return sorted(c for c in points if c not in measured)
