"""A history store of a few nights with a step, written through the store's own API: the
history site's unit tests (tests/unit/history/site/) build their stores from it."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import (
    DepthRun,
    Interval,
    Percentiles,
    Recommendation,
    RunResults,
    ScheduleRange,
    ServerSummary,
    Speedup,
    StopsPaying,
)
from tests.support.points import make_point

STEP_AT = 5  # the first slower night (0-based)
NIGHTS = 10


def night(number: int, *, profile: str = "prof", commit: str | None = None) -> RunResults:
    slow = 0.85 if number >= STEP_AT else 1.0
    wiggle = 1 + 0.002 * (number % 3)
    runs = []
    for depth in (0, 3):
        points = []
        for concurrency in (1, 4):
            agg = (400.0 if depth == 0 else 900.0) * concurrency * slow * wiggle
            points.append(
                make_point(
                    concurrency,
                    agg,
                    accept_length=None if depth == 0 else 2.5,
                    ttft_s=Percentiles(0.02, 0.03, 0.05, 0.025),
                    itl_s=Percentiles(0.004, 0.005, 0.008, 0.0045),
                    intervals={
                        "agg_tok_s": Interval(
                            low=agg * 0.98, high=agg * 1.02, level=0.95, method="t"
                        )
                    },
                    position_accept_rate=[] if depth == 0 else [0.8, 0.6, 0.4],
                )
            )
        runs.append(
            DepthRun(
                depth=depth,
                profile=profile,
                backend="sim",
                hardware="sim-x5",
                workload={"workload": "greedy-synthetic"},
                server=ServerSummary(
                    url="http://x", version="0.5.23", max_total_num_tokens=300_000 - 1000 * depth
                ),
                points=points,
            )
        )
    stops = 4 if number >= STEP_AT else None
    return RunResults(
        run_id=f"run{number:02d}",
        started_at=f"2026-12-{number + 1:02d}T02:00:00+00:00",
        tool_version="test",
        tested_commit=commit or f"{number:02d}" + "ab" * 19,
        runs=runs,
        speedup=[Speedup(depth=3, concurrency=c, agg=2.25 * wiggle, per_req=2.25) for c in (1, 4)],
        recommendation=Recommendation(
            metric="agg_tok_s",
            schedule=[ScheduleRange(min_concurrency=1, max_concurrency=None, depth=3)],
            stops_paying=[
                StopsPaying(shallower=0, deeper=3, metric="agg_tok_s", concurrency=stops)
            ],
        ),
    )


def write_nights(path: Path, count: int = NIGHTS, **fields: str) -> Path:
    store = HistoryStore.open(path)
    try:
        for number in range(count):
            results = night(number, **fields)
            store.record(results, RunContext(run_profile="nightly", runner="runner-1"))
            store.finish_run(results.run_id)
    finally:
        store.close()
    return path
