"""Open-loop load: each request sent at its scheduled time, whatever the server does meanwhile.

A closed loop (loadgen.py) sends a request when an earlier one ends, so a slower server gets
fewer requests; an open loop sends on a schedule (a request rate, measure/arrivals.py, or a
trace's timestamps, measure/trace.py), so a slower server gets the same requests and they
queue: latency, not throughput, shows the difference (docs/explanation/open-and-closed-loop.md).

Requests are sent from one process over a pool of connections (one per request in flight,
opened ahead of the schedule and reused once free). Each record keeps when its request was due
(``scheduled``) beside when it was sent (``start``); the point keeps both for every request
(``send_times``) and how late the sends were (``send_lag_s``): a client that cannot keep the
schedule is a client-bound point, as a lagging closed loop is.
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import os
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from pytest_specperf.measure.client_monitor import ClientMonitor
from pytest_specperf.measure.goodput import point_goodput
from pytest_specperf.measure.loadgen import make_clients, wall_of
from pytest_specperf.measure.metrics import point_metrics, summarize
from pytest_specperf.measure.server_load import LoadWatch
from pytest_specperf.measure.stream import StreamClient, StreamTarget
from pytest_specperf.measure.workload import Workload, endpoint_path, request_body
from pytest_specperf.results.client_bound import client_bound_reason
from pytest_specperf.results.schema import PointMetrics, RequestRecord, SendTime, Slo

__all__ = ["LATE_SEND_S", "measure_open_point", "run_schedule"]

# A point whose sends were this late at their p99 was bounded by the client: its requests did
# not arrive as the schedule said (a closed loop's limit on event-loop lag is 50 ms).
LATE_SEND_S = 0.02
# The sender's timer is set this long before a send is due, and the rest is waited out in the
# timer's callback without yielding: the event loop's timers fire to the millisecond (uvloop's
# also up to a millisecond early), and a callback that yielded instead would run after the
# loop's next pass over the other streams' reads. Not longer: a thread that spins through its
# scheduler slice is preempted for a whole tick (docs/reference/workloads.md has the
# measurement).
EARLY_S = 0.001
# The run-queue clock (RunQueueClock) is read this long before each send's timer, so that a
# send's recorded wait for a CPU is the wait just before it, not since the last send.
CHECKPOINT_S = 0.002
# Connections kept open and idle ahead of the schedule: one for every request due within
# LOOKAHEAD_S, plus SPARE, opened in the background, so that a send never waits for a connect.
LOOKAHEAD_S = 0.5
SPARE = 4
# The schedule starts this long after the first connections are open.
LEAD_S = 0.02


class RunQueueClock:
    """How long the calling thread has waited for a CPU while runnable, in seconds: the
    second field of Linux's /proc/thread-self/schedstat (None where there is none).

    A send that goes late because the machine's other processes held the sender's thread
    off the CPU is the machine's lateness, not the sender's; each send records how much of
    its lateness that was (``SendTime.held``).
    """

    def __init__(self) -> None:
        try:
            self._fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None

    def read(self) -> float | None:
        if self._fd is None:
            return None
        try:
            return int(os.pread(self._fd, 128, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


async def run_schedule(
    target: StreamTarget,
    workload: Workload,
    offsets_s: Sequence[float],
    *,
    model: str,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> list[RequestRecord]:
    """Send request i (prompt i of the workload) ``offsets_s[i]`` seconds after the start;
    the records in send order, each with its ``scheduled`` time.

    The sends are written from one timer callback, each at once on an open idle connection
    (StreamClient.send_now): the time a request is written is its due time, not that plus a
    task switch and the loop's pass over the reads of the streams in flight, and requests
    due together go in one pass. Each answer is then streamed by a task of its own.

    Garbage collection is frozen while the schedule runs (gc.freeze): the objects older than
    the schedule are not scanned, so a full collection does not stop the sends (one over the
    client's heap paused a replay for 80-200 ms). Each record keeps ``send_held``: how much of
    its send's lateness the thread spent waiting for a CPU from CHECKPOINT_S before the send's
    timer to its write (RunQueueClock).
    """
    loop = asyncio.get_running_loop()
    path = endpoint_path(workload)
    bodies = len(workload.prompts)
    wire = [
        target.request_bytes(path, msgspec.json.encode(request_body(workload, model, index=index)))
        for index in range(bodies)
    ]
    completions = workload.endpoint == "completions"
    count = len(offsets_s)
    records: list[RequestRecord | None] = [None] * count
    idle: list[StreamClient] = make_clients(target, workload, SPARE)  # the last freed goes first
    everyone: list[StreamClient] = list(idle)
    ssl_context = idle[0].ssl_context
    opening: set[asyncio.Task[None]] = set()
    streams: list[asyncio.Task[None]] = []
    all_sent: asyncio.Future[None] = loop.create_future()
    timer: asyncio.TimerHandle | None = None
    run_queue = RunQueueClock()
    waited_before: float | None = None  # the run-queue clock at the next send's checkpoint
    start = 0.0
    next_index = 0

    def new_client() -> StreamClient:
        client = make_clients(target, workload, 1, ssl_context=ssl_context)[0]
        everyone.append(client)
        return client

    async def open_one() -> None:
        client = new_client()
        if await client.connect():
            idle.append(client)

    def top_up(now: float) -> None:
        """Keep a connection open for every send due within LOOKAHEAD_S, plus SPARE."""
        if not all(client.ready for client in idle):
            for client in idle:
                if not client.ready:
                    client.close()  # the server closed it while it was idle
            idle[:] = [client for client in idle if client.ready]
        due_soon = bisect.bisect_right(offsets_s, now - start + LOOKAHEAD_S, lo=next_index)
        while len(idle) + len(opening) < due_soon - next_index + SPARE:
            task = loop.create_task(open_one())
            opening.add(task)
            task.add_done_callback(opening.discard)

    def take_ready() -> StreamClient | None:
        while idle:
            client = idle.pop()
            if client.ready:
                return client
            client.close()  # the server closed it while it was idle
        return None

    async def finish(
        index: int,
        due: float,
        held: float | None,
        client: StreamClient,
        streaming: Awaitable[RequestRecord],
    ) -> None:
        try:
            async with asyncio.timeout(workload.request_timeout_s):
                record = await streaming
        except TimeoutError:
            now = time.monotonic()
            record = RequestRecord(ok=False, error="request timeout", start=now, end=now)
            client.close()
        record.scheduled = due
        if held is not None:
            record.send_held = min(held, max(0.0, record.start - due))
        records[index] = record
        idle.append(client)
        if on_request_done is not None:
            on_request_done(record)

    def send(index: int, due: float, held: float | None) -> None:
        request = wire[index % bodies]
        client = take_ready()
        if client is not None:
            streaming: Awaitable[RequestRecord] = client.send_now(request, completions)
        else:  # none open: this one connects first, and its record shows how late it went
            client = new_client()
            streaming = client.stream(request, completions)
        streams.append(loop.create_task(finish(index, due, held, client, streaming)))

    def fire() -> None:
        """Send every request due by now (waiting out up to EARLY_S in place), then set the
        timer for the next one."""
        nonlocal next_index
        try:
            now = time.monotonic()
            while next_index < count:
                due = start + offsets_s[next_index]
                if due - now > EARLY_S:
                    break
                while now < due:
                    now = time.monotonic()
                waited = run_queue.read()
                held = (
                    waited - waited_before
                    if waited is not None and waited_before is not None
                    else None
                )
                send(next_index, due, held)
                next_index += 1
                now = time.monotonic()
            if next_index == count:
                all_sent.set_result(None)
                return
            top_up(now)
            arm(start + offsets_s[next_index])
        except BaseException as exc:  # the schedule cannot go on: say why, do not hang
            all_sent.set_exception(exc)

    def arm(due: float) -> None:
        """Set the timers for the send due at ``due``: the checkpoint, then the send."""
        nonlocal timer
        delay = due - EARLY_S - CHECKPOINT_S - time.monotonic()
        if delay > 0:
            timer = loop.call_later(delay, checkpoint, due)
        else:
            checkpoint(due)

    def checkpoint(due: float) -> None:
        nonlocal timer, waited_before
        waited_before = run_queue.read()
        timer = loop.call_later(due - EARLY_S - time.monotonic(), fire)

    freeze = gc.get_freeze_count() == 0  # another freeze is its owner's to undo, not ours
    try:
        top_up(start)  # start is 0 until the connections are open: the first LOOKAHEAD_S
        await asyncio.gather(*(client.connect() for client in idle), *opening)
        if freeze:
            gc.freeze()
        if count:
            start = time.monotonic() + LEAD_S
            arm(start + offsets_s[0])
            await all_sent
        await asyncio.gather(*streams)
    finally:
        if freeze:
            gc.unfreeze()
        run_queue.close()
        if timer is not None:
            timer.cancel()
        for task in [*streams, *opening]:
            task.cancel()
        for client in everyone:
            client.close()
    return [record for record in records if record is not None]


def send_times(records: Sequence[RequestRecord]) -> list[SendTime]:
    """Each request's scheduled and actual send, seconds after the first scheduled send, and
    how much of its lateness the OS kept the sender off the CPU."""
    due = [r.scheduled for r in records if r.scheduled is not None]
    if not due:
        return []
    origin = min(due)
    return [
        SendTime(
            scheduled=round(r.scheduled - origin, 6),
            sent=round(r.start - origin, 6),
            held=None if r.send_held is None else round(r.send_held, 6),
        )
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
    target = StreamTarget(base_url, api_key)
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
