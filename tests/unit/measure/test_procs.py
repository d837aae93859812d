"""measure.procs: a point's streams over several client processes, merged exactly."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.measure import procs
from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import ClientHealth, PointMetrics
from tests.support.local_http import Answer, LocalServer, response


@given(st.integers(1, 600), st.integers(1, 2000), st.integers(1, 16))
def test_spread_gives_every_worker_and_request_to_exactly_one_process(
    concurrency: int, requests: int, processes: int
) -> None:
    """Workers and requests are split without loss or duplication, workers near-equal."""
    processes = min(processes, concurrency)
    shares = procs.spread(concurrency, requests, processes)
    assert sum(w for w, _ in shares) == concurrency
    assert sum(n for _, n in shares) == requests
    assert max(w for w, _ in shares) - min(w for w, _ in shares) <= 1


def test_spread_gives_each_process_twice_its_workers_at_n_2c() -> None:
    assert procs.spread(64, 128, 4) == [(16, 32)] * 4


def test_explicit_processes_are_capped_at_one_per_stream() -> None:
    assert procs.resolve_client_procs(8, 3) == 3
    assert procs.resolve_client_procs(2, 64) == 2


def test_low_load_runs_in_one_process() -> None:
    assert procs.resolve_client_procs(None, procs.STREAMS_PER_PROCESS) == 1


def test_high_load_uses_at_most_half_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """By load: one process per STREAMS_PER_PROCESS streams, at most half the cores."""
    monkeypatch.setattr(procs, "usable_cores", lambda: 16)
    assert procs.resolve_client_procs(None, 3 * procs.STREAMS_PER_PROCESS) == 3
    assert procs.resolve_client_procs(None, 100 * procs.STREAMS_PER_PROCESS) == 8
    monkeypatch.setattr(procs, "usable_cores", lambda: 2)
    assert procs.resolve_client_procs(None, 100 * procs.STREAMS_PER_PROCESS) == 1


def test_merged_health_sums_cpu_and_keeps_the_worst_lag() -> None:
    def one(cpu_s: float, lag_s: float) -> ClientHealth:
        return ClientHealth(
            cpu_s=cpu_s, wall_s=10.0, loop_lag_p50_s=lag_s / 2, loop_lag_p99_s=lag_s,
            loop_lag_max_s=lag_s, samples=100,
        )  # fmt: skip

    merged = procs.merge_health([one(2.0, 0.01), one(6.0, 0.002)])
    assert (merged.cpu_s, merged.wall_s, merged.loop_lag_p99_s) == (8.0, 10.0, 0.01)
    assert merged.processes == 2 and merged.busiest_cpu_share == pytest.approx(0.6)


def sse_final(tokens: int) -> bytes:
    meta = {"completion_tokens": tokens, "finish_reason": {"type": "length"}, "spec_verify_ct": 2}
    return f"data: {json.dumps({'text': 'x', 'meta_info': meta})}\n\ndata: [DONE]\n\n".encode()


def measure_over(
    client_procs: int, concurrency: int, workload: Workload | None = None
) -> tuple[PointMetrics, LocalServer]:
    pieces = response(sse_final(5))

    async def handler(seen: object) -> Answer:
        await asyncio.sleep(0.02)
        return Answer(pieces)

    async def main() -> tuple[PointMetrics, LocalServer]:
        async with LocalServer(handler) as server:
            point = await measure_point(
                server.url,
                workload or Workload(),
                concurrency,
                warmup=True,
                client_procs=client_procs,
            )
            return point, server

    return asyncio.run(main())


def test_point_over_two_processes_counts_every_request_once() -> None:
    """Over 2 processes: N requests measured, warm-ups apart, all merged into one point."""
    point, server = measure_over(2, 4)
    assert (point.requests, point.ok, point.tokens) == (8, 8, 40)
    assert point.client is not None and point.client.processes == 2
    warmups = [s for s in server.seen if s.json()["sampling_params"]["max_new_tokens"] == 32]
    assert len(warmups) == 2 * 2  # max(warmup_requests, workers) per process
    assert point.accept_length == pytest.approx(2.5)


@pytest.mark.parametrize("client_procs", [1, 2])
def test_min_point_seconds_holds_in_one_process_and_in_several(client_procs: int) -> None:
    """Requests of about 20 ms, N = 8, at least 0.5 s: every process keeps sending for that
    long from the shared start and ends on whole rounds of its own workers."""
    point, _ = measure_over(client_procs, 4, Workload(min_point_seconds=0.5))
    assert point.wall_s >= 0.5
    assert point.requests > 8 and point.requests % 2 == 0 and point.ok == point.requests
