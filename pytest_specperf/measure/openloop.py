"""Open-loop load: each request sent at its scheduled time, whatever the server does meanwhile.

A closed loop (loadgen.py) sends a request when an earlier one ends, so a slower server gets
fewer requests; an open loop sends on a schedule (a request rate, measure/arrivals.py, or a
trace's timestamps, measure/trace.py), so a slower server gets the same requests and they
queue: latency, not throughput, shows the difference (docs/explanation/open-and-closed-loop.md).

Requests are sent from one process over a pool of connections (one per request in flight,
opened as needed and reused once free). Each record keeps when its request was due
(``scheduled``) beside when it was sent (``start``); the point keeps both for every request
(``send_times``) and how late the sends were (``send_lag_s``): a client that cannot keep the
schedule is a client-bound point, as a lagging closed loop is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import msgspec

from pytest_specperf.measure.client_health import ClientMonitor
from pytest_specperf.measure.goodput import point_goodput
from pytest_specperf.measure.loadgen import make_clients, wall_of
from pytest_specperf.measure.metrics import point_metrics, summarize
from pytest_specperf.measure.server_load import LoadWatch
from pytest_specperf.measure.stream import StreamClient, Target
from pytest_specperf.measure.workload import Workload, endpoint_path, request_body
from pytest_specperf.results.client_health import client_bound_reason
from pytest_specperf.results.schema import PointMetrics, RequestRecord, SendTime, Slo

__all__ = ["LATE_SEND_S", "measure_open_point", "run_schedule"]

# A point whose sends were this late at their p99 was bounded by the client: its requests did
# not arrive as the schedule said (a closed loop's limit on event-loop lag is 50 ms).
LATE_SEND_S = 0.02
# The sender wakes this long before a send and yields until it is due: an event loop busy
# reading streams wakes a timer late by one pass over its ready callbacks.
SPIN_S = 0.002
# Connections opened before the first send; while the schedule runs, new ones are opened in
# the background whenever fewer than SPARE are free, so a send rarely waits for a connect.
PREOPENED = 8
SPARE = 3
# The schedule starts this long after the connections are open.
LEAD_S = 0.02


async def run_schedule(
    target: Target,
    workload: Workload,
    offsets_s: Sequence[float],
    *,
    model: str,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> list[RequestRecord]:
    """Send request i (prompt i of the workload) ``offsets_s[i]`` seconds after the start;
    the records in send order, each with its ``scheduled`` time."""
    path = endpoint_path(workload)
    bodies = len(workload.prompts)
    wire = [
        target.request_bytes(path, msgspec.json.encode(request_body(workload, model, index=index)))
        for index in range(bodies)
    ]
    completions = workload.endpoint == "completions"
    idle: list[StreamClient] = make_clients(target, workload, PREOPENED)
    everyone: list[StreamClient] = list(idle)
    ssl_context = idle[0].ssl_context
    records: list[RequestRecord | None] = [None] * len(offsets_s)
    opening: set[asyncio.Task[None]] = set()

    def new_client() -> StreamClient:
        client = make_clients(target, workload, 1, ssl_context=ssl_context)[0]
        everyone.append(client)
        return client

    async def open_spare() -> None:
        client = new_client()
        if await client.connect():
            idle.append(client)

    def top_up() -> None:
        while len(idle) + len(opening) < SPARE:
            task = asyncio.get_running_loop().create_task(open_spare())
            opening.add(task)
            task.add_done_callback(opening.discard)

    async def send(index: int, due: float) -> None:
        client = idle.pop() if idle else new_client()
        top_up()
        try:
            async with asyncio.timeout(workload.request_timeout_s):
                record = await client.stream(wire[index % bodies], completions)
        except TimeoutError:
            now = time.monotonic()
            record = RequestRecord(ok=False, error="request timeout", start=now, end=now)
            client.close()
        record.scheduled = due
        records[index] = record
        idle.append(client)
        if on_request_done is not None:
            on_request_done(record)

    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(client.connect() for client in idle))
    start = time.monotonic() + LEAD_S
    try:
        for index, offset in enumerate(offsets_s):
            due = start + offset
            delay = due - time.monotonic()
            if delay > SPIN_S:
                await asyncio.sleep(delay - SPIN_S)
            while time.monotonic() < due:
                await asyncio.sleep(0)
            tasks.append(loop.create_task(send(index, due)))
            # Let the task write its request now, not after the next sleep.
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
    finally:
        for task in [*tasks, *opening]:
            task.cancel()
        for client in everyone:
            client.close()
    return [record for record in records if record is not None]


def send_times(records: Sequence[RequestRecord]) -> list[SendTime]:
    """Each request's scheduled and actual send, seconds after the first scheduled send."""
    due = [r.scheduled for r in records if r.scheduled is not None]
    if not due:
        return []
    origin = min(due)
    return [
        SendTime(scheduled=round(r.scheduled - origin, 6), sent=round(r.start - origin, 6))
        for r in records
        if r.scheduled is not None
    ]


def _in_flight_max(records: Sequence[RequestRecord]) -> int:
    events = sorted(
        [(r.start, 1) for r in records] + [(r.end, -1) for r in records],
        key=lambda item: (item[0], item[1]),
    )
    most = current = 0
    for _, step in events:
        current += step
        most = max(most, current)
    return most


async def measure_open_point(
    base_url: str,
    workload: Workload,
    offsets_s: Sequence[float],
    *,
    load: str,
    model: str = "default",
    api_key: str | None = None,
    slo: Slo | None = None,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> PointMetrics:
    """One open-loop point: the schedule sent, the figures as for a closed-loop point, and
    the schedule's own record (send times and lag, the server's running requests)."""
    target = Target(base_url, api_key)
    async with LoadWatch(base_url, api_key) as watch, ClientMonitor() as monitor:
        records = await run_schedule(
            target, workload, offsets_s, model=model, on_request_done=on_request_done
        )
    assert monitor.health is not None
    wall = wall_of(records)
    metrics = point_metrics(_in_flight_max(records), records, wall)
    metrics.load = load
    span = offsets_s[-1] - offsets_s[0] if len(offsets_s) > 1 else 0.0
    metrics.request_rate = (len(offsets_s) - 1) / span if span > 0 else None
    metrics.send_times = send_times(records)
    lags = [max(0.0, r.start - r.scheduled) for r in records if r.scheduled is not None]
    metrics.send_lag_s = summarize(lags)
    metrics.server_load = watch.result
    if slo is not None:
        metrics.goodput = point_goodput(records, wall, slo)
    metrics.client = monitor.health
    bound = client_bound_reason([monitor.health])
    if bound is None and metrics.send_lag_s is not None and metrics.send_lag_s.p99 > LATE_SEND_S:
        bound = (
            f"sends fell behind the schedule (p99 {metrics.send_lag_s.p99 * 1000:.1f} ms late, "
            f"more than {LATE_SEND_S * 1000:.0f} ms)"
        )
    metrics.client_bound = bound
    return metrics
