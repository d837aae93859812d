"""measure.loadgen: the closed-loop streaming client, fed crafted SSE via MockTransport."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_specperf.measure.loadgen import make_client, run_requests
from pytest_specperf.measure.metrics import point_metrics
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import RequestRecord

SSE = {"content-type": "text/event-stream; charset=utf-8"}
Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


async def pieces(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def streamed(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None, size: int = 7
) -> httpx.Response:
    """A response whose body arrives in small pieces that cut across SSE events."""
    return httpx.Response(status, headers=headers or SSE, content=pieces(body, size))


def sse(*payloads: object, done: bool = True) -> bytes:
    events = [p if isinstance(p, str) else json.dumps(p) for p in payloads]
    if done:
        events.append("[DONE]")
    return b"".join(f"data: {event}\n\n".encode() for event in events)


def gen_chunk(tokens: int, finish: object = None, **meta: Any) -> dict[str, Any]:
    return {
        "text": "w" * tokens,
        "meta_info": {
            "id": "r",
            "prompt_tokens": 4,
            "completion_tokens": tokens,
            "finish_reason": finish,
            **meta,
        },
    }


def replay(path: Path) -> bytes:
    lines = [json.loads(line)["line"] for line in path.read_text(encoding="utf-8").splitlines()]
    return "".join(f"{line}\n\n" for line in lines).encode()


def run(
    handler: Handler,
    *,
    workload: Workload | None = None,
    concurrency: int = 1,
    requests: int = 1,
) -> tuple[list[RequestRecord], float]:
    async def main() -> tuple[list[RequestRecord], float]:
        transport = httpx.MockTransport(handler)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await run_requests(
                client,
                workload or Workload(),
                concurrency=concurrency,
                requests=requests,
                model="m",
            )

    return asyncio.run(main())


def one(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> RequestRecord:
    records, _ = run(lambda request: streamed(body, status, headers))
    assert len(records) == 1
    return records[0]


def test_generate_counts_server_tokens_not_chunks() -> None:
    """Chunks carrying several tokens count by meta_info.completion_tokens."""
    body = sse(gen_chunk(3), gen_chunk(7), gen_chunk(10, finish={"type": "length"}))
    record = one(body)
    assert record.ok and record.error is None
    assert record.completion_tokens == 10
    assert record.chunk_tokens == [3, 4, 3]


def test_generate_records_verify_count_and_server_latency_of_final_chunk() -> None:
    """The final chunk's spec_verify_ct and e2e_latency are recorded."""
    final = gen_chunk(8, finish={"type": "length"}, spec_verify_ct=3, e2e_latency=0.5)
    record = one(sse(gen_chunk(2), final))
    assert (record.spec_verify_ct, record.server_e2e_s) == (3, 0.5)


def test_real_generate_sample_parses_to_64_tokens_and_63_verify_steps(sim_data: Path) -> None:
    """The recorded SGLang /generate stream gives 64 tokens over 63 verify steps."""
    record = one(replay(sim_data / "generate_stream.steps3.jsonl"))
    assert record.ok
    assert record.completion_tokens == 64 and sum(record.chunk_tokens) == 64
    assert record.spec_verify_ct == 63
    assert point_metrics(1, [record], 1.0).accept_length == pytest.approx(64 / 63)


def test_real_completions_sample_takes_tokens_from_usage_chunk(sim_data: Path) -> None:
    """The recorded /v1/completions stream's usage chunk gives the completion tokens."""
    seen: list[httpx.Request] = []
    body = replay(sim_data / "v1_completions_stream.steps3.jsonl")

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return streamed(body)

    records, _ = run(handler, workload=Workload(endpoint="completions"))
    record = records[0]
    assert record.ok and record.completion_tokens == 32 and record.prompt_tokens == 2
    assert sum(record.chunk_tokens) == 32
    assert seen[0].url.path == "/v1/completions"
    assert json.loads(seen[0].content)["stream_options"] == {"include_usage": True}


def test_completions_without_usage_chunk_is_truncated() -> None:
    """A completions stream that ends without its usage chunk fails as truncated."""
    chunk = {"choices": [{"text": " a", "finish_reason": "length"}], "usage": None}
    records, _ = run(
        lambda request: streamed(sse(chunk)),
        workload=Workload(endpoint="completions"),
    )
    assert records[0].error == "truncated stream"


def test_generate_request_streams_to_generate_endpoint() -> None:
    """The native request posts a streaming body with the workload's token budget."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return streamed(sse(gen_chunk(1, finish="stop")))

    run(handler, workload=Workload(max_new_tokens=17))
    body = json.loads(seen[0].content)
    assert seen[0].url.path == "/generate" and body["stream"] is True
    assert body["sampling_params"]["max_new_tokens"] == 17


@pytest.mark.parametrize("status", [500, 429])
def test_http_error_status_is_failure_with_status_reason(status: int) -> None:
    """A non-200 answer fails the request with reason 'HTTP <status>'."""
    record = one(b'{"error": "busy"}', status=status, headers={"content-type": "application/json"})
    assert not record.ok and record.error == f"HTTP {status}"


def test_malformed_json_chunk_is_failure() -> None:
    """A data line that is not JSON fails the request as a malformed chunk."""
    record = one(sse(gen_chunk(1), '{"meta_info": {"completion_tokens": 2'))
    assert not record.ok and record.error == "malformed chunk"


def test_chunk_with_wrong_field_type_is_malformed() -> None:
    """A chunk whose token count is not a number is a malformed chunk."""
    record = one(sse({"meta_info": {"completion_tokens": "two"}}))
    assert record.error == "malformed chunk"


def test_error_chunk_is_failure() -> None:
    """A chunk carrying an error object fails the request."""
    record = one(sse(gen_chunk(1), {"error": {"message": "out of memory"}}))
    assert not record.ok and record.error == "error chunk"


def test_stream_without_final_chunk_is_truncated() -> None:
    """A stream that ends before a chunk with finish_reason fails as truncated."""
    record = one(sse(gen_chunk(1), gen_chunk(2)))
    assert not record.ok and record.error == "truncated stream"


def test_generate_chunk_without_meta_info_is_failure() -> None:
    """A /generate chunk without meta_info cannot be counted and fails the request."""
    record = one(sse({"text": "x"}))
    assert record.error == "chunk without meta_info"


def test_wrong_content_type_is_failure() -> None:
    """A 200 answer that is not an event stream fails with its content type named."""
    record = one(b"{}", headers={"content-type": "application/json"})
    assert record.error is not None and record.error.startswith("wrong content type")
    assert "application/json" in record.error


def test_sse_comments_are_ignored() -> None:
    """SSE comment lines between events carry nothing and do not fail the stream."""
    body = b": keep-alive\n\n" + sse(gen_chunk(2, finish="stop"))
    assert one(body).ok


def test_failed_request_does_not_stop_the_point() -> None:
    """After a failure the loop goes on and later requests succeed."""
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return streamed(b"boom", 500)
        return streamed(sse(gen_chunk(4, finish="stop")))

    records, _ = run(handler, requests=3)
    assert sorted(str(record.error) for record in records) == ["HTTP 500", "None", "None"]


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 4), (4, 8), (8, 5)])
def test_closed_loop_sends_n_requests_with_at_most_c_in_flight(
    concurrency: int, requests: int
) -> None:
    """The loop sends exactly N requests and never has more than C open at once."""
    calls = 0
    in_flight = 0
    peak = 0
    full = asyncio.Event()
    target = min(concurrency, requests)

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls, in_flight, peak
        calls += 1
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == target:
            full.set()
        await asyncio.wait_for(full.wait(), timeout=10)
        await asyncio.sleep(0)
        in_flight -= 1
        return streamed(sse(gen_chunk(2, finish="stop")))

    started = time.monotonic()
    records, wall = run(handler, concurrency=concurrency, requests=requests)
    outside = time.monotonic() - started
    assert calls == requests and len(records) == requests
    assert peak == target
    assert all(record.ok for record in records)
    assert 0.0 < wall <= outside


def test_each_worker_sends_through_its_own_client() -> None:
    """With one client per worker, every client serves the requests of exactly one worker."""
    body = sse(gen_chunk(5, finish={"type": "length"}))
    served: dict[str, int] = {}

    def handler_for(name: str) -> Handler:
        async def handler(request: httpx.Request) -> httpx.Response:
            served[name] = served.get(name, 0) + 1
            await asyncio.sleep(0.01)  # in flight for a while, like a real request
            return streamed(body)

        return handler

    async def main() -> list[RequestRecord]:
        clients = [
            httpx.AsyncClient(transport=httpx.MockTransport(handler_for(name)), base_url="http://t")
            for name in ("a", "b", "c")
        ]
        try:
            records, _ = await run_requests(
                clients, Workload(), concurrency=3, requests=6, model="m"
            )
        finally:
            for client in clients:
                await client.aclose()
        return records

    records = asyncio.run(main())
    assert all(record.ok for record in records) and len(records) == 6
    assert served == {"a": 2, "b": 2, "c": 2}


def test_loadgen_client_holds_a_single_connection() -> None:
    """A worker's client never opens a second connection: concurrent requests take turns."""

    async def main() -> tuple[int, list[int]]:
        connections = 0

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                while await reader.readuntil(b"\r\n\r\n"):
                    await asyncio.sleep(0.02)  # in flight while the others are asked for
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = make_client(f"http://127.0.0.1:{port}", Workload())
        async with server, client:
            responses = await asyncio.gather(*(client.get("/") for _ in range(3)))
        return connections, [response.status_code for response in responses]

    connections, codes = asyncio.run(main())
    assert codes == [200, 200, 200]
    assert connections == 1
