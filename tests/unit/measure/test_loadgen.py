"""measure.loadgen + measure.stream: the closed-loop streaming client against a raw local server.

The server (tests/local_http.py) writes crafted bytes in small pieces, so HTTP chunks and SSE
events arrive cut anywhere, as they can on a real network.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_specperf.measure.loadgen import (
    REFUSED_IN_A_ROW_STOP,
    StreamTarget,
    make_clients,
    run_requests,
)
from pytest_specperf.measure.metrics import point_metrics
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import RequestRecord
from tests.support.local_http import Answer, Handler, LocalServer, Seen, response


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
) -> tuple[list[RequestRecord], float, LocalServer]:
    async def main() -> tuple[list[RequestRecord], float, LocalServer]:
        async with LocalServer(handler) as server:
            target = StreamTarget(server.url)
            clients = make_clients(target, workload or Workload(), concurrency)
            try:
                records, wall = await run_requests(
                    clients,
                    target,
                    workload or Workload(),
                    concurrency=concurrency,
                    requests=requests,
                    model="m",
                )
            finally:
                for client in clients:
                    client.close()
            return records, wall, server

    return asyncio.run(main())


def one(
    body: bytes,
    status: int = 200,
    content_type: str = "text/event-stream; charset=utf-8",
    **shape: Any,
) -> RequestRecord:
    pieces = response(body, status=status, content_type=content_type, **shape)
    then: Literal["keep", "close"] = "close" if shape.get("framing") == "close" else "keep"
    records, _, _ = run(lambda seen: Answer(pieces, then=then))
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
    pieces = response(replay(sim_data / "v1_completions_stream.steps3.jsonl"))
    records, _, server = run(lambda seen: Answer(pieces), workload=Workload(endpoint="completions"))
    record = records[0]
    assert record.ok and record.completion_tokens == 32 and record.prompt_tokens == 2
    assert sum(record.chunk_tokens) == 32
    assert server.seen[0].path == "/v1/completions"
    assert server.seen[0].json()["stream_options"] == {"include_usage": True}


def test_completions_without_usage_chunk_is_truncated() -> None:
    """A completions stream that ends without its usage chunk fails as truncated."""
    chunk = {"choices": [{"text": " a", "finish_reason": "length"}], "usage": None}
    pieces = response(sse(chunk))
    records, _, _ = run(lambda seen: Answer(pieces), workload=Workload(endpoint="completions"))
    assert records[0].error == "truncated stream"


def test_generate_request_streams_to_generate_endpoint() -> None:
    """The native request posts a streaming body with the workload's token budget."""
    pieces = response(sse(gen_chunk(1, finish="stop")))
    _, _, server = run(lambda seen: Answer(pieces), workload=Workload(max_new_tokens=17))
    body = server.seen[0].json()
    assert server.seen[0].path == "/generate" and body["stream"] is True
    assert body["sampling_params"] == {"temperature": 0.0, "max_new_tokens": 17, "ignore_eos": True}


def test_api_key_is_sent_as_bearer_token() -> None:
    """With an API key every request carries 'Authorization: Bearer <key>'."""
    pieces = response(sse(gen_chunk(1, finish="stop")))

    async def main() -> LocalServer:
        async with LocalServer(lambda seen: Answer(pieces)) as server:
            target = StreamTarget(server.url, api_key="sekret")
            clients = make_clients(target, Workload(), 1)
            await run_requests(clients, target, Workload(), concurrency=1, requests=1, model="m")
            clients[0].close()
            return server

    assert asyncio.run(main()).seen[0].headers["authorization"] == "Bearer sekret"


@pytest.mark.parametrize("piece", [1, 3, 64, 100_000])
@pytest.mark.parametrize("http_chunk", [0, 5, 1000])
def test_stream_cut_anywhere_gives_the_same_record(piece: int, http_chunk: int) -> None:
    """Wherever the network cuts the bytes and the server cuts its HTTP chunks, same counts."""
    first = sse(gen_chunk(3), done=False) + b": comment\n\n"
    body = first + sse(gen_chunk(7), gen_chunk(10, finish={"type": "length"}))
    record = one(body, piece=piece, http_chunk=http_chunk)
    assert record.ok, record.error
    assert record.chunk_tokens == [3, 4, 3] and record.completion_tokens == 10


@pytest.mark.parametrize("framing", ["length", "close"])
def test_body_without_chunked_framing_is_read_whole(framing: Literal["length", "close"]) -> None:
    """A Content-Length or close-delimited event stream is read like a chunked one."""
    record = one(sse(gen_chunk(2), gen_chunk(5, finish="stop")), framing=framing)
    assert record.ok, record.error
    assert record.chunk_tokens == [2, 3]


def test_chunk_with_spaces_and_other_key_order_is_counted_by_the_fast_path() -> None:
    """Token counts are read whatever the spacing and key order of meta_info."""
    event = 'data: {"meta_info": {"completion_tokens": 6 , "finish_reason": null}, "text": "x"}'
    final = gen_chunk(9, finish="stop")
    record = one(f"{event}\n\n".encode() + sse(final))
    assert record.ok and record.chunk_tokens == [6, 3]


def test_text_that_quotes_the_key_does_not_fool_the_count() -> None:
    """Generated text containing '"completion_tokens": 99' (escaped in JSON) is not a count."""
    tricky = gen_chunk(2)
    tricky["text"] = 'say "completion_tokens": 99, "finish_reason": null}'
    record = one(sse(tricky, gen_chunk(4, finish="stop")))
    assert record.ok and record.chunk_tokens == [2, 2]


def test_keep_alive_connection_is_reused_by_its_worker() -> None:
    """One worker's successive requests go over one connection."""
    pieces = response(sse(gen_chunk(2, finish="stop")))
    records, _, server = run(lambda seen: Answer(pieces), requests=3)
    assert all(record.ok for record in records)
    assert server.connections == 1 and len(server.seen) == 3


def test_server_closing_an_idle_connection_is_retried_on_a_new_one() -> None:
    """A keep-alive connection the server closed between requests is replaced, not a failure."""
    pieces = response(sse(gen_chunk(2, finish="stop")))
    records, _, server = run(lambda seen: Answer(pieces, then="close"), requests=3)
    assert [record.error for record in records] == [None, None, None]
    assert server.connections == 3


def test_next_connection_is_opened_while_a_stream_the_server_will_close_runs() -> None:
    """Against Connection: close, the worker's next connection is open before its stream ends,
    so the next request does not wait for a connect."""
    chunks = [gen_chunk(n) for n in (1, 2, 3)] + [gen_chunk(4, finish="stop")]
    wire = b"".join(response(sse(*chunks), extra_headers="Connection: close\r\n"))
    # one piece per HTTP chunk (each one SSE event) so that the pauses fall between events
    events = [part + b"\n\n\r\n" for part in wire.split(b"\n\n\r\n")]
    events[-1] = events[-1][: -len(b"\n\n\r\n")]
    mid_stream: list[int] = []

    async def handler(seen: Seen) -> Answer:
        if seen.connection == 1:

            async def look() -> None:
                await asyncio.sleep(0.25)  # after the second chunk, before the stream ends
                mid_stream.append(server_connections())

            asyncio.get_running_loop().create_task(look())
        return Answer(events, pause_s=0.1, then="close")

    holder: list[LocalServer] = []

    def server_connections() -> int:
        return holder[0].connections

    async def main() -> list[RequestRecord]:
        async with LocalServer(handler) as server:
            holder.append(server)
            target = StreamTarget(server.url)
            clients = make_clients(target, Workload(), 1)
            records, _ = await run_requests(
                clients, target, Workload(), concurrency=1, requests=2, model="m"
            )
            for client in clients:
                client.close()
            return records

    records = asyncio.run(main())
    assert [record.ok for record in records] == [True, True]
    assert mid_stream == [2]


def test_request_clock_starts_when_the_request_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow connect is not part of the request's TTFT or e2e: start is the send."""
    from pytest_specperf.measure import stream

    connect = stream.StreamClient._connect

    async def slow_connect(self: stream.StreamClient) -> Any:
        await asyncio.sleep(0.3)
        return await connect(self)

    monkeypatch.setattr(stream.StreamClient, "_connect", slow_connect)
    before = time.monotonic()
    record = one(sse(gen_chunk(2, finish="stop")))
    assert record.ok and record.first_chunk is not None
    assert record.start - before >= 0.3 and record.first_chunk - record.start < 0.3


def test_connection_reset_mid_stream_is_a_broken_connection() -> None:
    """A reset after part of the stream fails the request as a broken connection."""
    pieces = response(sse(gen_chunk(2), done=False))[:-1]  # no last-chunk: the body goes on
    records, _, _ = run(lambda seen: Answer(pieces, pause_s=0.01, then="reset"))
    error = records[0].error
    assert error is not None and error.startswith("connection broken ")


def test_connection_closed_mid_body_is_a_broken_connection() -> None:
    """A FIN before the chunked body's end fails the request as a broken connection."""
    pieces = response(sse(gen_chunk(2), done=False), piece=100_000)
    body_cut = [pieces[0][:-5]]  # cut inside the last-chunk marker
    records, _, _ = run(lambda seen: Answer(body_cut, then="close"))
    assert records[0].error == "connection broken (closed mid-response)"


def test_silent_stream_is_cut_by_the_stall_timeout() -> None:
    """A stream that stops sending fails as stalled after stall_timeout_s, not at the end."""
    pieces = response(sse(gen_chunk(2), done=False))[:-1]
    workload = Workload(stall_timeout_s=0.2)
    records, _, _ = run(lambda seen: Answer(pieces, then="hang"), workload=workload)
    record = records[0]
    assert record.error == "stalled stream (read timeout)"
    assert 0.15 < record.end - record.start < 5


def test_request_timeout_ends_a_stream_that_keeps_trickling() -> None:
    """A stream that keeps sending but never ends is cut at request_timeout_s."""
    pieces = response(sse(*[gen_chunk(n) for n in range(1, 200)], done=False), piece=50)
    workload = Workload(request_timeout_s=0.3, stall_timeout_s=5)
    records, _, _ = run(lambda seen: Answer(pieces, pause_s=0.02), workload=workload)
    assert records[0].error == "request timeout"


def test_refused_connection_is_named() -> None:
    """No server at the address: every request fails as 'connection refused'."""

    async def main() -> list[RequestRecord]:
        target = StreamTarget("http://127.0.0.1:9")
        clients = make_clients(target, Workload(), 1)
        records, _ = await run_requests(
            clients, target, Workload(), concurrency=1, requests=2, model="m"
        )
        return records

    assert [r.error for r in asyncio.run(main())] == ["connection refused"] * 2


def test_a_server_gone_mid_point_ends_the_point_after_a_few_refused_connects() -> None:
    """Nothing listening while a point has seconds left: each worker stops after
    REFUSED_IN_A_ROW_STOP refused connects, not at the point's end after thousands."""

    async def main() -> tuple[list[RequestRecord], float]:
        target = StreamTarget("http://127.0.0.1:9")
        clients = make_clients(target, Workload(), 4)
        begun = time.monotonic()
        records, _ = await run_requests(
            clients, target, Workload(), concurrency=4, requests=4, model="m", min_seconds=30
        )
        return records, time.monotonic() - begun

    records, took_s = asyncio.run(main())
    assert [r.error for r in records] == ["connection refused"] * (4 * REFUSED_IN_A_ROW_STOP)
    assert took_s < 30


@pytest.mark.parametrize("status", [500, 429])
def test_http_error_status_is_failure_with_status_reason(status: int) -> None:
    """A non-200 answer fails the request with reason 'HTTP <status>'."""
    record = one(b'{"error": "busy"}', status=status, content_type="application/json")
    assert not record.ok and record.error == f"HTTP {status}"


def test_malformed_json_chunk_is_failure() -> None:
    """A data line that is not JSON fails the request as a malformed chunk."""
    record = one(sse(gen_chunk(1), '{"meta_info": {"completion_tokens": 2'))
    assert not record.ok and record.error == "malformed chunk"


def test_final_chunk_is_decoded_in_full() -> None:
    """A final chunk whose count reads fine but whose JSON is broken fails as malformed."""
    broken = '{"text": "a, "meta_info": {"completion_tokens": 2, "finish_reason": "stop"}}'
    record = one(sse(gen_chunk(1), broken))
    assert record.error == "malformed chunk"


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
    record = one(b"{}", content_type="application/json")
    assert record.error is not None and record.error.startswith("wrong content type")
    assert "application/json" in record.error


def test_sse_comments_are_ignored() -> None:
    """SSE comment lines between events carry nothing and do not fail the stream."""
    body = b": keep-alive\n\n" + sse(gen_chunk(2, finish="stop"))
    assert one(body).ok


def test_failed_request_does_not_stop_the_point() -> None:
    """After a failure the loop goes on and later requests succeed."""
    calls = 0
    good = response(sse(gen_chunk(4, finish="stop")))
    bad = response(b"boom", status=500, content_type="text/plain")

    def handler(seen: Seen) -> Answer:
        nonlocal calls
        calls += 1
        return Answer(bad if calls == 1 else good)

    records, _, _ = run(handler, requests=3)
    assert sorted(str(record.error) for record in records) == ["HTTP 500", "None", "None"]


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 4), (4, 8), (8, 5)])
def test_closed_loop_sends_n_requests_with_at_most_c_in_flight(
    concurrency: int, requests: int
) -> None:
    """The loop sends exactly N requests and never has more than C open at once."""
    in_flight = 0
    peak = 0
    full = asyncio.Event()
    target = min(concurrency, requests)
    pieces = response(sse(gen_chunk(2, finish="stop")))

    async def handler(seen: Seen) -> Answer:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == target:
            full.set()
        await asyncio.wait_for(full.wait(), timeout=10)
        await asyncio.sleep(0)
        in_flight -= 1
        return Answer(pieces)

    started = time.monotonic()
    records, wall, server = run(handler, concurrency=concurrency, requests=requests)
    outside = time.monotonic() - started
    assert len(server.seen) == requests and len(records) == requests
    assert peak == target
    assert all(record.ok for record in records)
    assert 0.0 < wall <= outside


class _StepClock:
    """Stands in for loadgen's ``time``: each served request moves the clock by ``step`` s."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step
        self.pieces = response(sse(gen_chunk(2, finish="stop")))

    def monotonic(self) -> float:
        return self.now

    def handler(self, seen: Seen) -> Answer:
        self.now += self.step
        return Answer(self.pieces)


def _run_with_min_seconds(
    monkeypatch: pytest.MonkeyPatch,
    step: float,
    requests: int,
    min_seconds: float,
    concurrency: int = 1,
) -> list[RequestRecord]:
    clock = _StepClock(step)
    monkeypatch.setattr("pytest_specperf.measure.loadgen.time", clock)

    async def main() -> list[RequestRecord]:
        async with LocalServer(clock.handler) as server:
            target = StreamTarget(server.url)
            clients = make_clients(target, Workload(), concurrency)
            records, _ = await run_requests(
                clients,
                target,
                Workload(),
                concurrency=concurrency,
                requests=requests,
                model="m",
                min_seconds=min_seconds,
            )
            for client in clients:
                client.close()
        return records

    return asyncio.run(main())


def test_min_seconds_keeps_the_loop_sending_past_n_until_the_time_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """N = 2 requests of 1 s each, but at least 5 s: the loop sends 5."""
    records = _run_with_min_seconds(monkeypatch, step=1.0, requests=2, min_seconds=5.0)
    assert len(records) == 5 and all(record.ok for record in records)


def test_min_seconds_already_passed_still_sends_all_n_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Requests of 10 s each pass a 5 s minimum at once; the loop still sends its N = 3."""
    records = _run_with_min_seconds(monkeypatch, step=10.0, requests=3, min_seconds=5.0)
    assert len(records) == 3


def test_min_seconds_ends_the_loop_on_a_whole_round_of_c(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """N = 3 at C = 2 with a minimum duration: the loop rounds up to 4, a whole round of 2."""
    records = _run_with_min_seconds(
        monkeypatch, step=1.0, requests=3, min_seconds=0.5, concurrency=2
    )
    assert len(records) == 4


def test_each_worker_keeps_its_own_connection() -> None:
    """C workers open C connections and each serves its own worker's requests."""
    pieces = response(sse(gen_chunk(5, finish={"type": "length"})))

    async def handler(seen: Seen) -> Answer:
        await asyncio.sleep(0.01)  # in flight for a while, like a real request
        return Answer(pieces)

    records, _, server = run(handler, concurrency=3, requests=6)
    assert all(record.ok for record in records) and len(records) == 6
    per_connection = [sum(s.connection == c for s in server.seen) for c in (1, 2, 3)]
    assert server.connections == 3 and per_connection == [2, 2, 2]
