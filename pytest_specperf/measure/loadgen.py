"""Closed-loop streaming load generator.

One point: C workers, each sending its next request as soon as its last one ends, until N
requests have been sent and (with a minimum duration) that many seconds have passed. Every
request streams (measure/stream.py, one connection per worker);
token counts come from the server (meta_info.completion_tokens or the usage chunk), never from
counting chunks. A request that fails is recorded with its reason and the point goes on.
One process's share of a point (run_local_point); measure/point.py spreads a point over
several processes above a load threshold (measure/procs.py).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from pytest_specperf.measure.client_monitor import ClientMonitor
from pytest_specperf.measure.sse import RequestFailed
from pytest_specperf.measure.stream import StreamClient, StreamTarget
from pytest_specperf.measure.workload import Workload, endpoint_path, request_body
from pytest_specperf.results.schema import ClientHealth, RequestRecord

# A worker whose connects the server refused this many times in a row, REFUSED_PAUSE_S apart,
# stops sending: nothing listens any more (the server died mid-point). Without it the worker
# sent again at once, and a point of 15 s on the simulator after a crash ended with 359,932
# refused requests, 200 MB and 10 s of CPU. A restart shorter than the pauses is ridden out.
REFUSED_IN_A_ROW_STOP = 3
REFUSED_PAUSE_S = 0.1

__all__ = [
    "LocalPoint",
    "PointJob",
    "RequestFailed",
    "StreamTarget",
    "make_clients",
    "run_local_point",
    "run_requests",
]


def make_clients(
    target: StreamTarget,
    workload: Workload,
    count: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
) -> list[StreamClient]:
    """One client (one connection) per worker, like one user per connection.

    One shared pool was measured sending the first requests of a point late (httpcore scanned
    its whole pool per request: at C=64 on the simulator they reached the server over about
    1 s instead of 10 ms); a connection per worker has nothing to scan.
    """
    if target.address()[2] and ssl_context is None:
        ssl_context = ssl.create_default_context()  # built once: it costs tens of ms
    return [
        StreamClient(
            target,
            stall_timeout_s=workload.stall_timeout_s,
            connect_timeout_s=workload.request_timeout_s,
            ssl_context=ssl_context,
        )
        for _ in range(count)
    ]


async def run_requests(
    clients: Sequence[StreamClient],
    target: StreamTarget,
    workload: Workload,
    *,
    concurrency: int,
    requests: int,
    model: str,
    max_new_tokens: int | None = None,
    min_seconds: float = 0.0,
    first_prompt: int = 0,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> tuple[list[RequestRecord], float]:
    """Closed loop: returns the records and the wall time from first send to last end.

    A worker sends another request while fewer than ``requests`` were sent or fewer than
    ``min_seconds`` have passed since the loop started, so a point is never shorter than
    either; past ``requests``, it stops only after a whole round (a multiple of C).
    A worker stops early when the server refused its connects REFUSED_IN_A_ROW_STOP times in a
    row. Worker i sends through clients[i % len(clients)]. The n-th request sent carries prompt
    ``first_prompt + n`` of the workload's set (a process of several starts at its share's
    offset, so together they send what one process would).
    """
    path = endpoint_path(workload)
    # Built once per prompt, not per request: the hot path only writes bytes.
    wire = [
        target.request_bytes(
            path,
            msgspec.json.encode(
                request_body(workload, model, max_new_tokens=max_new_tokens, index=index)
            ),
        )
        for index in range(len(workload.prompts))
    ]
    completions = workload.endpoint == "completions"
    records: list[RequestRecord] = []
    sent = 0
    started = time.monotonic()

    def more_to_send() -> bool:
        if sent < requests:
            return True
        if min_seconds <= 0:
            return False
        # Stop only on a whole round of C: a cut through a round would leave its last
        # requests running at a lower concurrency, and how many did so would vary point to point.
        return time.monotonic() - started < min_seconds or sent % concurrency != 0

    async def worker(client: StreamClient) -> None:
        nonlocal sent
        while more_to_send():
            request = wire[(first_prompt + sent) % len(wire)]
            sent += 1
            try:
                async with asyncio.timeout(workload.request_timeout_s):
                    record = await client.stream(request, completions)
            except TimeoutError:
                now = time.monotonic()
                record = RequestRecord(ok=False, error="request timeout", start=now, end=now)
                client.close()
            records.append(record)
            if on_request_done is not None:
                on_request_done(record)
            if client.refused_in_a_row >= REFUSED_IN_A_ROW_STOP:
                return
            if client.refused_in_a_row:
                await asyncio.sleep(REFUSED_PAUSE_S)

    workers = min(concurrency, requests) if min_seconds <= 0 else concurrency
    await asyncio.gather(*(worker(clients[i % len(clients)]) for i in range(workers)))
    return records, wall_of(records)


def wall_of(records: Sequence[RequestRecord]) -> float:
    """From the earliest start to the latest end (monotonic time is system-wide on Linux)."""
    if not records:
        return 0.0
    return max(r.end for r in records) - min(r.start for r in records)


class PointJob(msgspec.Struct, frozen=True, kw_only=True):
    """What one process measures of a point: where, what, how many at once and in all, and
    where in the workload's prompt set its share starts."""

    target: StreamTarget
    workload: Workload
    concurrency: int
    requests: int
    model: str
    warmup: bool
    first_prompt: int = 0


class LocalPoint(msgspec.Struct, kw_only=True):
    """What one process measured of a point: its records and how its client fared."""

    records: list[RequestRecord]
    health: ClientHealth


async def run_local_point(
    job: PointJob,
    *,
    wait_for_start: Callable[[], Awaitable[float]] | None = None,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> LocalPoint:
    """Warm-up (optional), then the measured closed loop, in this process.

    The warm-up (short requests, results discarded) opens the connections and lets the server
    compile or capture whatever this batch size needs before the clock starts: on a real GPU
    the first point after boot was seen running well below its steady rate. With
    ``wait_for_start`` (several processes) the loop starts at the monotonic time it returns.
    The measured loop runs at least ``workload.min_point_seconds``; with several processes
    each runs its share that long from the shared start, ending on a whole round of its own
    workers.
    """
    target, workload, concurrency = job.target, job.workload, job.concurrency
    clients = make_clients(target, workload, concurrency)
    try:
        if job.warmup and workload.warmup_requests > 0:
            await run_requests(
                clients,
                target,
                workload,
                concurrency=concurrency,
                requests=max(workload.warmup_requests, concurrency),
                model=job.model,
                max_new_tokens=workload.warmup_max_new_tokens,
            )
        if wait_for_start is not None:
            start_at = await wait_for_start()
            await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        async with ClientMonitor() as monitor:
            records, _wall = await run_requests(
                clients,
                target,
                workload,
                concurrency=concurrency,
                requests=job.requests,
                model=job.model,
                min_seconds=workload.min_point_seconds,
                first_prompt=job.first_prompt,
                on_request_done=on_request_done,
            )
    finally:
        for client in clients:
            client.close()
    assert monitor.health is not None
    return LocalPoint(records=records, health=monitor.health)
