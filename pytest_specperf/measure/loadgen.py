"""Closed-loop streaming load generator (httpx, asyncio).

One point: C workers, each sending its next request as soon as its last one ends, until N
requests have been sent. Every request streams; token counts come from the server
(meta_info.completion_tokens or the usage chunk), never from counting chunks. A request that
fails is recorded with its reason and the point goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import msgspec

from pytest_specperf.measure.client_health import ClientMonitor
from pytest_specperf.measure.fields import StreamChunk as _Chunk
from pytest_specperf.measure.metrics import point_metrics
from pytest_specperf.measure.workload import Workload, endpoint_path, request_body
from pytest_specperf.results.schema import PointMetrics, RequestRecord

_EVENT_END = b"\n\n"
_DATA_PREFIX = b"data:"
_DONE = b"[DONE]"
_ERROR_SNIPPET = 200


_decode_chunk = msgspec.json.Decoder(_Chunk).decode


class RequestFailed(Exception):
    """One request's failure, with a short reason that becomes its error category."""


class _StreamState:
    __slots__ = ("done", "finished", "last_tokens", "record", "usage_seen")

    def __init__(self, record: RequestRecord) -> None:
        self.record = record
        self.last_tokens = 0
        self.finished = False
        self.done = False
        self.usage_seen = False


def _handle_generate_chunk(state: _StreamState, chunk: _Chunk, now: float) -> None:
    meta = chunk.meta_info
    if meta is None:
        raise RequestFailed("chunk without meta_info")
    record = state.record
    new_tokens = meta.completion_tokens - state.last_tokens
    if new_tokens > 0:
        if record.first_chunk is None:
            record.first_chunk = now
        record.chunk_times.append(now)
        record.chunk_tokens.append(new_tokens)
        state.last_tokens = meta.completion_tokens
    record.completion_tokens = meta.completion_tokens
    record.prompt_tokens = meta.prompt_tokens
    if meta.finish_reason is not None:
        state.finished = True
        record.spec_verify_ct = meta.spec_verify_ct
        record.server_e2e_s = meta.e2e_latency


def _handle_completions_chunk(state: _StreamState, chunk: _Chunk, now: float) -> None:
    record = state.record
    if chunk.usage is not None:
        record.completion_tokens = chunk.usage.completion_tokens
        record.prompt_tokens = chunk.usage.prompt_tokens
        state.usage_seen = True
    for choice in chunk.choices or ():
        if choice.text:
            if record.first_chunk is None:
                record.first_chunk = now
            record.chunk_times.append(now)
            # OpenAI chunks carry no per-chunk count; spread after the usage chunk arrives.
            record.chunk_tokens.append(0)
        if choice.finish_reason is not None:
            state.finished = True


def _spread_usage_over_chunks(record: RequestRecord) -> None:
    chunks = len(record.chunk_tokens)
    if chunks == 0:
        return
    share, extra = divmod(record.completion_tokens, chunks)
    record.chunk_tokens = [share + (1 if i < extra else 0) for i in range(chunks)]


def _handle_event(state: _StreamState, event: bytes, completions: bool) -> None:
    if not event.startswith(_DATA_PREFIX):
        return  # comments and other SSE fields carry nothing the suite reads
    payload = event[len(_DATA_PREFIX) :].strip()
    if payload == _DONE:
        state.done = True
        return
    now = time.monotonic()
    try:
        chunk = _decode_chunk(payload)
    except msgspec.DecodeError as exc:
        raise RequestFailed("malformed chunk") from exc
    if chunk.error is not None:
        raise RequestFailed("error chunk")
    if completions:
        _handle_completions_chunk(state, chunk, now)
    else:
        _handle_generate_chunk(state, chunk, now)


async def _stream_request(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], completions: bool
) -> RequestRecord:
    record = RequestRecord(ok=False, start=time.monotonic(), end=0.0)
    state = _StreamState(record)
    try:
        async with client.stream("POST", url, json=body) as response:
            if response.status_code != httpx.codes.OK:
                await response.aread()
                raise RequestFailed(f"HTTP {response.status_code}")
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                raise RequestFailed(f"wrong content type {content_type.split(';')[0] or 'none'}")
            buffer = b""
            async for data in response.aiter_raw():
                buffer += data
                while (cut := buffer.find(_EVENT_END)) >= 0:
                    _handle_event(state, buffer[:cut], completions)
                    buffer = buffer[cut + len(_EVENT_END) :]
            if buffer.strip():
                _handle_event(state, buffer.strip(), completions)
        if completions and state.usage_seen:
            _spread_usage_over_chunks(record)
        if not state.finished or (completions and not state.usage_seen):
            raise RequestFailed("truncated stream")
        record.ok = True
    except RequestFailed as exc:
        record.error = str(exc)
    except httpx.ReadTimeout:
        record.error = "stalled stream (read timeout)"
    except httpx.TimeoutException:
        record.error = "timeout"
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        record.error = f"connection broken ({type(exc).__name__})"
    except httpx.ConnectError:
        record.error = "connection refused"
    except httpx.HTTPError as exc:
        record.error = f"HTTP client error ({type(exc).__name__})"
    except Exception as exc:  # anything else odd about one request must not end the point
        record.error = f"client error ({type(exc).__name__})"
    record.end = time.monotonic()
    return record


def make_client(
    base_url: str,
    workload: Workload,
    api_key: str | None = None,
    *,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.AsyncClient:
    """A client with one connection: the load generator gives every worker its own.

    One shared pool of C keep-alive connections was measured sending the first requests of a
    point late (at C=64 on the simulator they reached the server over about 1 s instead of
    10 ms, and throughput read 6-11 % low): httpcore scans its whole pool for every request.
    A pool of one per worker keeps the scan trivial, like one user per connection.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(
        base_url=base_url,
        headers=headers,
        # A stall is a read that waits longer than stall_timeout_s.
        timeout=httpx.Timeout(workload.request_timeout_s, read=workload.stall_timeout_s),
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        # Building a TLS context costs tens of ms; the workers of a point share one.
        verify=ssl_context if ssl_context is not None else True,
        trust_env=False,  # a proxy from the environment must never sit between us and the server
    )


async def run_requests(
    clients: httpx.AsyncClient | Sequence[httpx.AsyncClient],
    workload: Workload,
    *,
    concurrency: int,
    requests: int,
    model: str,
    max_new_tokens: int | None = None,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> tuple[list[RequestRecord], float]:
    """Closed loop: returns the records and the wall time from first send to last end.

    Worker i sends through clients[i % len(clients)]; one client may serve every worker.
    """
    pool = [clients] if isinstance(clients, httpx.AsyncClient) else list(clients)
    path = endpoint_path(workload)
    completions = workload.endpoint == "completions"
    body = request_body(workload, model, max_new_tokens=max_new_tokens)
    records: list[RequestRecord] = []
    sent = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal sent
        while sent < requests:
            sent += 1
            try:
                async with asyncio.timeout(workload.request_timeout_s):
                    record = await _stream_request(client, path, body, completions)
            except TimeoutError:
                now = time.monotonic()
                record = RequestRecord(ok=False, error="request timeout", start=now, end=now)
            records.append(record)
            if on_request_done is not None:
                on_request_done(record)

    started = time.monotonic()
    workers = min(concurrency, requests)
    await asyncio.gather(*(worker(pool[i % len(pool)]) for i in range(workers)))
    wall = max((r.end for r in records), default=started) - min(
        (r.start for r in records), default=started
    )
    return records, wall


async def measure_point(
    base_url: str,
    workload: Workload,
    concurrency: int,
    *,
    model: str = "default",
    api_key: str | None = None,
    warmup: bool = False,
    on_request_done: Callable[[RequestRecord], None] | None = None,
) -> PointMetrics:
    """One point of the sweep, preceded by a short warm-up at the same concurrency.

    The warm-up (short requests, results discarded) opens the connections and lets the server
    compile or capture whatever this batch size needs before the clock starts: on a real GPU
    the first point after boot was seen running well below its steady rate.
    ``on_request_done`` is called with each measured request's record as it finishes (not
    for the warm-up's).
    """
    requests = workload.requests_for(concurrency)
    ssl_context = httpx.create_ssl_context(trust_env=False)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                make_client(base_url, workload, api_key, ssl_context=ssl_context)
            )
            for _ in range(concurrency)
        ]
        if warmup and workload.warmup_requests > 0:
            await run_requests(
                clients,
                workload,
                concurrency=concurrency,
                requests=max(workload.warmup_requests, concurrency),
                model=model,
                max_new_tokens=workload.warmup_max_new_tokens,
            )
        async with ClientMonitor() as monitor:
            records, wall = await run_requests(
                clients,
                workload,
                concurrency=concurrency,
                requests=requests,
                model=model,
                on_request_done=on_request_done,
            )
    metrics = point_metrics(concurrency, records, wall)
    metrics.client = monitor.health
    return metrics
