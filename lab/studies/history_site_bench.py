"""How long `specperf history site` takes on a large store, and how big its index page is.

Builds a history store of N nightly runs (default 1,000) x 3 depths (the control and two
speculative ones) x 5 concurrencies through the store's own writing API (HistoryStore.record
and finish_run, as a nightly run writes), each point with 3 samples, their intervals,
latency percentiles, accept length and per-position acceptance, each run with its speedups
and recommendation, and a 6% step-time slowdown from night N*0.6 on; then times the site's
build as the CLI runs it (open the store, gather, render every page, copy the assets) and
reports the build time and the size of index.html (issue 36: under 20 s and 5 MB).

    python lab/studies/history_site_bench.py                      # 1,000 runs
    python lab/studies/history_site_bench.py --runs 200 --keep /tmp/site-store
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.site import build_site
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import (
    DepthRun,
    Interval,
    Percentiles,
    PointMetrics,
    Recommendation,
    RunResults,
    ScheduleRange,
    ServerSummary,
    Speedup,
    StopsPaying,
)

DEPTHS = (0, 2, 3)
CONCURRENCIES = (1, 4, 16, 32, 64)
INDEX_LIMIT_BYTES = 5 * 1024 * 1024
BUILD_LIMIT_S = 20.0


def _latency(median_s: float) -> Percentiles:
    return Percentiles(median_s, median_s * 1.4, median_s * 2.0, median_s * 1.1)


def _boots_point(concurrency: int, boots: int, agg: float, **fields: Any) -> PointMetrics:
    """A point of ``boots`` boots of 10 s each, 2C requests of 500 tokens per boot, none failed."""
    return PointMetrics(
        concurrency=concurrency,
        requests=2 * boots * concurrency,
        ok=2 * boots * concurrency,
        failed=0,
        tokens=1000 * boots * concurrency,
        wall_s=10.0 * boots,
        agg_tok_s=agg,
        per_req_tok_s=agg / concurrency,
        **fields,
    )


def _point(rng: random.Random, depth: int, concurrency: int, slow: float) -> PointMetrics:
    accept = 1.0 if depth == 0 else 1.0 + 0.8 * depth * rng.uniform(0.97, 1.03)
    step_rate = 900.0 * concurrency**0.75 / (1 + 0.15 * depth) * slow
    samples = []
    for boot in range(3):
        agg = step_rate * accept * math.exp(rng.gauss(0, 0.02))
        samples.append(
            _boots_point(
                concurrency, 1, agg, accept_length=None if depth == 0 else accept, boot=boot
            )
        )
    aggs = sorted(s.agg_tok_s for s in samples)
    agg = aggs[1]
    per_req = agg / concurrency
    rates = [0.85 ** (p + 1) for p in range(depth)]
    return _boots_point(
        concurrency,
        3,
        agg,
        ttft_s=_latency(0.02 + 0.002 * concurrency),
        itl_s=_latency(1.0 / per_req),
        tpot_s=_latency(1.0 / per_req),
        e2e_s=_latency(1000.0 / per_req),
        accept_length=None if depth == 0 else accept,
        spec_verify_ct=0 if depth == 0 else int(3000 * concurrency / accept),
        intervals={
            "agg_tok_s": Interval(low=aggs[0], high=aggs[2], level=0.95, method="bootstrap"),
            "per_req_tok_s": Interval(
                low=aggs[0] / concurrency, high=aggs[2] / concurrency, level=0.95, method="x"
            ),
        },
        samples=samples,
        position_accept_rate=rates,
    )


def _recommendation() -> Recommendation:
    return Recommendation(
        metric="agg_tok_s",
        schedule=[
            ScheduleRange(min_concurrency=1, max_concurrency=16, depth=3),
            ScheduleRange(min_concurrency=32, max_concurrency=None, depth=2),
        ],
        stops_paying=[
            StopsPaying(shallower=0, deeper=2, metric="agg_tok_s", concurrency=None),
            StopsPaying(shallower=0, deeper=3, metric="agg_tok_s", concurrency=None),
            StopsPaying(shallower=2, deeper=3, metric="agg_tok_s", concurrency=32),
        ],
    )


def night(rng: random.Random, number: int, slow: float, start: dt.datetime) -> RunResults:
    runs = []
    for depth in DEPTHS:
        runs.append(
            DepthRun(
                depth=depth,
                profile="bench-profile",
                backend="sim",
                hardware="1x-h200",
                workload={"workload": "greedy-synthetic"},
                server=ServerSummary(
                    url="http://127.0.0.1:30000",
                    version="0.5.23",
                    max_total_num_tokens=400_000 - 20_000 * depth,
                    max_running_requests=64,
                ),
                points=[_point(rng, depth, c, slow) for c in CONCURRENCIES],
                status="complete",
            )
        )
    control = {p.concurrency: p.agg_tok_s for p in runs[0].points}
    speedup = [
        Speedup(
            depth=run.depth,
            concurrency=p.concurrency,
            agg=p.agg_tok_s / control[p.concurrency],
            per_req=(p.per_req_tok_s or 0.0) / (control[p.concurrency] / p.concurrency),
        )
        for run in runs[1:]
        for p in run.points
    ]
    return RunResults(
        run_id=f"night{number:04d}",
        started_at=(start + dt.timedelta(days=number)).isoformat(timespec="seconds"),
        tool_version="bench",
        runs=runs,
        speedup=speedup,
        recommendation=_recommendation(),
        tested_commit=f"{rng.getrandbits(160):040x}",
    )


def write_store(path: Path, runs: int, seed: int) -> float:
    rng = random.Random(seed)
    store = HistoryStore.open(path)
    started = time.perf_counter()
    start = dt.datetime(2024, 1, 1, 2, 0, tzinfo=dt.UTC)
    context = RunContext(run_profile="nightly", runner="bench-runner")
    try:
        for number in range(runs):
            slow = 0.94 if number >= int(runs * 0.6) else 1.0
            results = night(rng, number, slow, start)
            store.record(results, context)
            store.finish_run(results.run_id)
    finally:
        store.close()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--keep", type=Path, default=None, help="keep the store and site here")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="specperf-site-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    store_path = work / "history.sqlite"
    try:
        if not store_path.exists():
            seconds = write_store(store_path, args.runs, args.seed)
            mib = store_path.stat().st_size / 2**20
            print(
                f"store: {args.runs} runs x {len(DEPTHS)} depths x {len(CONCURRENCIES)} "
                f"concurrencies written in {seconds:.1f} s ({mib:.1f} MiB)"
            )
        started = time.perf_counter()
        store = HistoryStore.open(store_path)
        try:
            built = build_site(store, work / "site")
        finally:
            store.close()
        build_s = time.perf_counter() - started
        index_bytes = built.index.stat().st_size
        pages = sorted((work / "site" / "series").glob("*.html"))
        largest = max((p.stat().st_size for p in pages), default=0)
        print(f"site: {built.pages} pages, {built.series} series, {built.changes} change points")
        print(f"build time: {build_s:.1f} s (limit {BUILD_LIMIT_S:.0f} s)")
        speculation = (work / "site" / "speculation.html").stat().st_size
        print(
            f"index.html: {index_bytes / 2**20:.2f} MiB "
            f"(limit {INDEX_LIMIT_BYTES / 2**20:.0f} MiB); "
            f"largest series page {largest / 2**20:.2f} MiB; "
            f"speculation.html {speculation / 2**20:.2f} MiB"
        )
        ok = build_s < BUILD_LIMIT_S and index_bytes < INDEX_LIMIT_BYTES
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
