"""A writer of the history store in its own process: ``python -m tests.support.history_writer``.

    history_writer STORE WRITER RUNS [--points N] [--hang-after-points K]

Writes RUNS runs as the plugin does (the run's row at its start, then one point at a time,
then complete). With --hang-after-points, the last run stops after K points, prints HUNG and
sleeps (a run the test kills with SIGKILL); else it keeps writing and prints each run id.
"""

from __future__ import annotations

import argparse
import sys
import time

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults
from tests.support.points import make_point


def sample_point(concurrency: int, agg: float = 1000.0) -> PointMetrics:
    return make_point(
        concurrency,
        agg,
        requests=8,
        wall_s=0.8,
        accept_length=2.5,
        spec_verify_ct=320,
        position_accept_rate=[0.8, 0.6, 0.4],
    )


def sample_results(run_id: str, points: list[PointMetrics], commit: str = "c0") -> RunResults:
    return RunResults(
        run_id=run_id,
        started_at="2026-12-01T00:00:00+00:00",
        tool_version="test",
        tested_commit=commit,
        runs=[
            DepthRun(
                depth=3,
                profile="test-profile",
                backend="sim",
                hardware="test-hw",
                workload={"workload": "greedy-synthetic"},
                points=points,
            )
        ],
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("writer")
    parser.add_argument("runs", type=int)
    parser.add_argument("--points", type=int, default=3)
    parser.add_argument("--hang-after-points", type=int, default=None)
    args = parser.parse_args(argv)
    store = HistoryStore.open(args.store)
    context = RunContext(run_profile="nightly", runner=args.writer)
    for number in range(args.runs):
        run_id = f"{args.writer}-{number:03d}"
        last = number == args.runs - 1
        stop_at = args.hang_after_points if last else None
        points: list[PointMetrics] = []
        store.begin_run(sample_results(run_id, points), context)
        for index in range(args.points):
            if stop_at is not None and index == stop_at:
                print("HUNG", run_id, flush=True)
                time.sleep(600)
            points.append(sample_point(2**index))
            store.record(sample_results(run_id, points), context)
        store.finish_run(run_id)
        print(run_id, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
