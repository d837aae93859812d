"""measure.openloop + StreamClient.send_now: the open-loop sender against a raw local server.

Timing figures (how late sends go on a loaded machine) are lab/studies/trace_send_timing.py's;
these tests hold the behaviours that keep a send on time: it is written at once, never before
it is due, over a connection opened ahead of it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

import msgspec
import pytest

from pytest_specperf.measure import connection
from pytest_specperf.measure.openloop import RunQueueClock, run_schedule, send_times
from pytest_specperf.measure.stream import StreamClient, StreamTarget
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import RequestRecord, SendTime
from tests.support.local_http import Answer, LocalServer, response


def _answer() -> list[bytes]:
    chunk = {"text": "ww", "meta_info": {"completion_tokens": 2, "finish_reason": "stop"}}
    return response(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())


def _client(url: str) -> StreamClient:
    return StreamClient(StreamTarget(url), stall_timeout_s=5.0, connect_timeout_s=5.0)


def _request(url: str) -> bytes:
    return StreamTarget(url).request_bytes("/generate", b'{"text": "hi"}')


def test_a_connection_opened_ahead_carries_the_first_request() -> None:
    """connect() before a request is the request's connection: no second connect (before,
    an opened connection counted as not reusable until it had carried a request)."""

    async def main() -> tuple[RequestRecord, int]:
        async with LocalServer(lambda seen: Answer(_answer())) as server:
            client = _client(server.url)
            assert await client.connect() and client.ready
            record = await client.stream(_request(server.url), completions=False)
            client.close()
            return record, server.connections

    record, connections = asyncio.run(main())
    assert record.ok, record.error
    assert connections == 1


def test_send_now_writes_the_request_before_the_caller_yields() -> None:
    """The request's clock starts inside send_now, not when its coroutine first runs."""

    async def main() -> tuple[RequestRecord, float]:
        async with LocalServer(lambda seen: Answer(_answer())) as server:
            client = _client(server.url)
            await client.connect()
            streaming = client.send_now(_request(server.url), completions=False)
            returned = time.monotonic()
            await asyncio.sleep(0.05)
            record = await streaming
            client.close()
            return record, returned

    record, returned = asyncio.run(main())
    assert record.ok, record.error
    assert 0 < record.start <= returned


def test_send_now_refuses_a_client_without_an_open_connection() -> None:
    async def main() -> None:
        client = _client("http://127.0.0.1:9")
        assert not client.ready
        with pytest.raises(RuntimeError, match="open, idle connection"):
            client.send_now(b"", completions=False)

    asyncio.run(main())


def _schedule(
    offsets: list[float], idle_timeout_s: float | None = None, **kwargs: Any
) -> tuple[list[RequestRecord], LocalServer]:
    async def main() -> tuple[list[RequestRecord], LocalServer]:
        async with LocalServer(lambda seen: Answer(_answer()), idle_timeout_s) as server:
            records = await run_schedule(
                StreamTarget(server.url), Workload(), offsets, model="m", **kwargs
            )
            return records, server

    return asyncio.run(main())


# Bursts: six requests due together, then six more 0.1 s later, then a lone one.
BURSTY = [0.0] * 6 + [0.1] * 6 + [0.3]


def test_each_request_is_scheduled_at_its_offset_and_never_sent_before_it() -> None:
    records, server = _schedule(BURSTY)
    assert len(records) == len(server.seen) == len(BURSTY)
    assert all(record.ok for record in records)
    origin = records[0].scheduled
    assert origin is not None
    for record, offset in zip(records, BURSTY, strict=True):
        assert record.scheduled == pytest.approx(origin + offset, abs=1e-9)
        assert record.start >= record.scheduled


def test_connections_the_server_closed_while_idle_are_not_used_and_no_request_fails() -> None:
    """SGLang's server closes a keep-alive connection idle for 5 s: connections opened ahead
    (and those left open after a burst) that it closed before a later burst are replaced."""
    offsets = [0.0] * 6 + [0.6] * 6 + [1.2]
    records, server = _schedule(offsets, idle_timeout_s=0.25)
    assert server.idle_closed > 0  # the case arose
    assert all(record.ok for record in records), [r.error for r in records if not r.ok]
    assert len(server.seen) == len(offsets)


def test_no_send_waits_for_a_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request goes on a connection opened ahead of it (send_now), bursts included;
    the connect-first path (stream) is never taken."""
    connecting_sends: list[int] = []
    real_stream = StreamClient.stream

    async def spy(self: StreamClient, request: bytes, completions: bool) -> RequestRecord:
        connecting_sends.append(1)
        return await real_stream(self, request, completions)

    monkeypatch.setattr(StreamClient, "stream", spy)
    records, _ = _schedule(BURSTY)
    assert all(record.ok for record in records)
    assert connecting_sends == []


def test_garbage_collection_is_frozen_while_the_schedule_runs_and_restored_after() -> None:
    """Objects older than the schedule are not scanned by a collection during it (a full
    collection of the client's heap paused a replay for 80-200 ms)."""
    during: list[int] = []
    before = gc.get_freeze_count()
    _schedule([0.0, 0.01], on_request_done=lambda record: during.append(gc.get_freeze_count()))
    assert during and all(count > before for count in during)
    assert gc.get_freeze_count() == before


def test_a_send_that_cannot_be_written_ends_the_schedule_with_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(self: connection.Connection, request: bytes, response: object) -> None:
        raise OSError("socket gone")

    monkeypatch.setattr(connection.Connection, "begin", broken)
    with pytest.raises(OSError, match="socket gone"):
        _schedule([0.0, 0.01])


@pytest.mark.skipif(not RunQueueClock().read(), reason="no /proc/thread-self/schedstat here")
def test_each_send_records_its_wait_for_a_cpu_never_more_than_its_lateness() -> None:
    records, _ = _schedule(BURSTY)
    for record in records:
        assert record.scheduled is not None and record.send_held is not None
        assert 0.0 <= record.send_held <= record.start - record.scheduled
    times = send_times(records)
    assert [t.held for t in times] == [round(r.send_held or 0.0, 6) for r in records]


def test_send_times_say_null_where_the_wait_is_not_measured_and_read_older_pairs() -> None:
    record = RequestRecord(ok=True, start=1.0015, end=2.0, scheduled=1.0)
    assert msgspec.json.encode(send_times([record])) == b"[[0.0,0.0015,null]]"
    assert msgspec.json.decode(b"[0.0,0.0015]", type=SendTime) == SendTime(0.0, 0.0015)
