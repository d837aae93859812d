"""Terminal/markdown text of goodput under SLOs and of the depth recommendation."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.results.report_table import Table
from pytest_specperf.results.schema import DepthRun, Recommendation, ScheduleRange, Slo

SCHEDULE_METRIC_LABELS = {
    "agg_tok_s": "aggregate tok/s",
    "per_req_tok_s": "per-request tok/s (median request)",
    "goodput_tok_s": "goodput tok/s",
}


def _slo_text(slo: Slo) -> str:
    limits = [
        f"{name}={value:g}"
        for name in ("ttft_p99_ms", "itl_p99_ms", "e2e_p99_ms")
        if (value := getattr(slo, name)) is not None
    ]
    return ", ".join(limits) + f"; a point meets them when >= {slo.attainment:.0%} of requests do"


def goodput_table(runs: Sequence[DepthRun], slo: Slo) -> Table:
    """Per depth and concurrency: goodput, requests meeting every SLO, misses by reason."""
    header = ["steps", "C", "Goodput tok/s", "Agg tok/s", "Met SLO", "Misses", "Meets"]
    rows = []
    for run in sorted(runs, key=lambda r: r.depth):
        for point in sorted(run.points, key=lambda p: p.concurrency):
            good = point.goodput
            if good is None:
                continue
            misses = ", ".join(f"{k} {v}" for k, v in sorted(good.misses.items())) or "-"
            refined = " (refined)" if point.refined else ""
            rows.append(
                [
                    str(run.depth),
                    f"{point.concurrency}{refined}",
                    f"{good.goodput_tok_s:,.1f}",
                    f"{point.agg_tok_s:,.1f}",
                    f"{good.requests_meeting}/{good.requests}",
                    misses,
                    "yes" if good.meets_slo else "no",
                ]
            )
    return Table(f"Goodput under SLOs ({_slo_text(slo)})", header, rows)


def _depth_choice(depth: int) -> str:
    """``steps=3``; the control reads as what it recommends: not speculating at all."""
    return "steps=0 (no speculation)" if depth == CONTROL_DEPTH else f"steps={depth}"


def schedule_text(ranges: Sequence[ScheduleRange]) -> str:
    parts = []
    for item in ranges:
        high = "+" if item.max_concurrency is None else f"-{item.max_concurrency}"
        if item.max_concurrency == item.min_concurrency:
            high = ""
        parts.append(f"C {item.min_concurrency}{high}: {_depth_choice(item.depth)}")
    return "; ".join(parts) or "-"


def _depth(value: int | None) -> str:
    return "-" if value is None else str(value)


RECOMMENDATION_TITLE = "Recommendation (which depth at which load)"
BEST_HEADER = ("C", "by agg tok/s", "by per-req tok/s (median request)", "by goodput")


def recommendation_table(recommendation: Recommendation) -> Table:
    """The best depth per concurrency (no rows when none could be chosen); the schedule, where
    deeper stops paying, the KV cost of each step, the SLO capacity and the boundaries as
    notes under it."""
    rows = [
        [str(b.concurrency), _depth(b.by_agg), _depth(b.by_per_req), _depth(b.by_goodput)]
        for b in recommendation.best
    ]
    notes = _recommendation_notes(recommendation)
    if rows:
        notes.insert(0, f"a deeper depth must win by more than {recommendation.margin:.0%}")
    return Table(RECOMMENDATION_TITLE, BEST_HEADER, rows, notes)


def recommendation_text(recommendation: Recommendation) -> str:
    table = recommendation_table(recommendation)
    if table.rows:
        return table.text()
    return "\n".join([table.title, *table.notes])


def _recommendation_notes(rec: Recommendation) -> list[str]:
    lines: list[str] = []
    if rec.best:
        lines.append(
            f"schedule (by {SCHEDULE_METRIC_LABELS.get(rec.metric, rec.metric)}): "
            f"{schedule_text(rec.schedule)}"
        )
        for name, ranges in rec.schedules.items():
            if name != rec.metric:
                label = SCHEDULE_METRIC_LABELS.get(name, name)
                lines.append(f"schedule (by {label}): {schedule_text(ranges)}")
    for item in rec.stops_paying:
        if item.metric == "per_req_tok_s":
            continue  # per-request speed is what depth buys; it rarely stops paying
        label = SCHEDULE_METRIC_LABELS.get(item.metric, item.metric)
        if item.concurrency is None:
            lines.append(
                f"steps={item.deeper} over steps={item.shallower}: pays ({label}) at every "
                f"concurrency measured"
            )
        else:
            lines.append(
                f"steps={item.deeper} over steps={item.shallower}: stops paying ({label}) "
                f"from C={item.concurrency}"
            )
    for cost in rec.kv_cost:
        tokens = cost.kv_tokens_lost_per_step
        running = cost.running_requests_lost_per_step
        if tokens is None and running is None:
            continue
        lines.append(
            f"KV cost per extra step, steps={cost.shallower}->{cost.deeper}: "
            f"{'-' if tokens is None else f'{tokens:,.0f}'} tokens, "
            f"{'-' if running is None else f'{running:,.1f}'} running requests"
        )
    for cap in rec.slo_capacity:
        largest = (
            "none (the lowest concurrency misses them)"
            if cap.max_concurrency is None
            else f"C={cap.max_concurrency}"
        )
        lines.append(f"steps={cap.depth}: largest concurrency meeting the SLOs: {largest}")
    if rec.boundaries:
        pairs = ", ".join(f"{a}-{b}" for a, b in rec.boundaries)
        lines.append(f"best depth changes between C {pairs} (--specperf-refine measures there)")
    return lines
