"""Golden samples: what a real SGLang 0.5.12 server answered on an H200 (tests/data/...).

The suite must parse every real answer correctly, and the simulator must answer in the same
shape, for both smoke configurations: MTP (EAGLE/NEXTN, one token per chunk with random
weights) and NGRAM (several tokens per chunk).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_specperf.measure.fields import META_INFO_FIELDS
from pytest_specperf.measure.loadgen import StreamTarget, make_clients, run_requests
from pytest_specperf.measure.metrics import point_metrics
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import RequestRecord
from pytest_specperf.server.info import SERVER_INFO_FIELDS
from pytest_specperf.server.process import depth_of, summarize_server_info
from tests.support.data import SGLANG_SAMPLES, sse_payloads
from tests.support.local_http import Answer, LocalServer, response
from tests.support.sim import SPEC_DEPTH3_ARGS, SimServer

DATA = SGLANG_SAMPLES
GENERATE_SAMPLES = sorted(p.name for p in DATA.glob("generate_stream.*.jsonl"))
COMPLETIONS_SAMPLES = sorted(p.name for p in DATA.glob("v1_completions_stream.*.jsonl"))
SERVER_INFO_SAMPLES = sorted(p.name for p in DATA.glob("server_info.*.json"))


def sample_lines(name: str) -> list[str]:
    return [json.loads(line)["line"] for line in (DATA / name).read_text().splitlines()]


def sample_chunks(name: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in sample_lines(name)[:-1]]


def replay(name: str, endpoint: str) -> RequestRecord:
    """Serve the sample's lines back from a local server, one HTTP chunk per SSE event."""
    body = b"".join(f"{line}\n\n".encode() for line in sample_lines(name))
    pieces = response(body, piece=1 << 20)
    workload = Workload(endpoint="completions" if endpoint == "completions" else "generate")

    async def run() -> list[RequestRecord]:
        async with LocalServer(lambda seen: Answer(pieces)) as server:
            target = StreamTarget(server.url)
            clients = make_clients(target, workload, 1)
            records, _ = await run_requests(
                clients, target, workload, concurrency=1, requests=1, model="m"
            )
            clients[0].close()
        return records

    (record,) = asyncio.run(run())
    return record


@pytest.mark.parametrize("name", GENERATE_SAMPLES)
def test_generate_sample_tokens_come_from_the_server_counts(name: str) -> None:
    """Every real /generate stream parses: tokens, per-chunk counts and verify steps as sent."""
    chunks = sample_chunks(name)
    final = chunks[-1]["meta_info"]
    record = replay(name, "generate")
    assert record.ok, record.error
    assert record.completion_tokens == final["completion_tokens"]
    assert sum(record.chunk_tokens) == final["completion_tokens"]
    cumulative = [c["meta_info"]["completion_tokens"] for c in chunks]
    increments = [b - a for a, b in zip([0, *cumulative], cumulative, strict=False) if b > a]
    assert record.chunk_tokens == increments
    assert record.spec_verify_ct == final["spec_verify_ct"]


@pytest.mark.parametrize("name", GENERATE_SAMPLES)
def test_generate_sample_final_meta_info_has_every_field_the_loadgen_reads(name: str) -> None:
    """The real final /generate chunk carries every meta_info field the decoder reads."""
    final = sample_chunks(name)[-1]["meta_info"]
    assert set(META_INFO_FIELDS) <= set(final)


@pytest.mark.parametrize("name", GENERATE_SAMPLES)
def test_generate_sample_accept_length_matches_the_servers(name: str) -> None:
    """The suite's accept length (tokens / verify steps) equals SGLang's own for one request."""
    final = sample_chunks(name)[-1]["meta_info"]
    record = replay(name, "generate")
    point = point_metrics(1, [record], wall_s=1.0)
    assert point.accept_length == pytest.approx(final["spec_accept_length"])


@pytest.mark.parametrize("name", GENERATE_SAMPLES)
def test_generate_sample_acceptance_histogram_is_read_from_the_final_chunk(name: str) -> None:
    """The per-request acceptance histogram is the final chunk's, and the point sums it."""
    final = sample_chunks(name)[-1]["meta_info"]
    record = replay(name, "generate")
    assert record.accept_histogram == final.get("spec_correct_drafts_histogram")
    point = point_metrics(1, [record], wall_s=1.0)
    assert point.accept_histogram == (final.get("spec_correct_drafts_histogram") or [])


def test_ngram_sample_carries_several_tokens_per_chunk() -> None:
    """The NGRAM sample is the multi-token shape: 64 tokens in 19 chunks, mostly 4 each."""
    record = replay("generate_stream.ngram-draft4.qwen3.jsonl", "generate")
    assert sum(record.chunk_tokens) == 64
    assert len(record.chunk_tokens) == 19
    assert max(record.chunk_tokens) == 4


@pytest.mark.parametrize("name", COMPLETIONS_SAMPLES)
def test_completions_sample_tokens_come_from_the_usage_chunk(name: str) -> None:
    """/v1/completions with include_usage: the usage chunk (choices: []) gives the tokens."""
    chunks = sample_chunks(name)
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == []
    record = replay(name, "completions")
    assert record.ok, record.error
    assert record.completion_tokens == usage_chunk["usage"]["completion_tokens"]
    assert sum(record.chunk_tokens) == record.completion_tokens


@pytest.mark.parametrize("name", SERVER_INFO_SAMPLES)
def test_server_info_sample_has_every_field_the_suite_reads(name: str) -> None:
    """Every /server_info field the suite reads is in each real answer."""
    info = json.loads((DATA / name).read_text())
    assert set(SERVER_INFO_FIELDS) <= set(info)


@pytest.mark.parametrize(
    ("name", "depth", "tokens"),
    [
        ("server_info.steps1.bf16-kv.json", 1, 28_989_779),
        ("server_info.steps2.bf16-kv.json", 2, 28_970_483),
        ("server_info.steps3.bf16-kv.json", 3, 28_951_187),
        ("server_info.steps3.fp8-kv.json", 3, 57_857_318),
        ("server_info.ngram-draft4.qwen3.json", 3, None),
    ],
)
def test_server_info_sample_summarizes_to_its_depth_and_kv(
    name: str, depth: int, tokens: int | None
) -> None:
    """Depth (NGRAM: draft tokens - 1), KV capacity and version read as the server meant."""
    info = json.loads((DATA / name).read_text())
    summary = summarize_server_info("http://sample", info)
    assert depth_of(info) == depth
    assert summary.version == "0.5.12"
    assert summary.max_running_requests == 48
    if tokens is not None:
        assert summary.max_total_num_tokens == tokens


NGRAM_ARGS = ["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "4"]
EAGLE_ARGS = SPEC_DEPTH3_ARGS


@pytest.mark.parametrize(
    ("args", "info_sample", "stream_sample"),
    [
        (EAGLE_ARGS, "server_info.steps3.bf16-kv.json", "generate_stream.steps3.jsonl"),
        (
            NGRAM_ARGS,
            "server_info.ngram-draft4.qwen3.json",
            "generate_stream.ngram-draft4.qwen3.jsonl",
        ),
    ],
    ids=["mtp", "ngram"],
)
def test_simulator_answers_in_the_real_servers_shape(
    sim: Callable[..., SimServer], args: list[str], info_sample: str, stream_sample: str
) -> None:
    """Same /server_info keys (plus 'sim'), internal_states keys and per-chunk meta_info keys."""
    server = sim([*args, "--sim-speedup", "20"])
    real_info = json.loads((DATA / info_sample).read_text())
    info = server.get("/server_info").json()
    assert set(info) == set(real_info) | {"sim"}
    state_keys = set(info["internal_states"][0]) - {"avg_spec_accept_length"}
    assert state_keys == set(real_info["internal_states"][0]) - {"avg_spec_accept_length"}
    body = {
        "text": "w1 w2 w3 w4",
        "sampling_params": {"temperature": 0, "max_new_tokens": 64, "ignore_eos": True},
        "stream": True,
    }
    payloads = sse_payloads(server.post("/generate", json=body).text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    real = sample_chunks(stream_sample)
    assert set(chunks[0]) == set(real[0])
    assert set(chunks[1]["meta_info"]) == set(real[1]["meta_info"])
    final_keys = set(chunks[-1]["meta_info"]) - {"response_sent_to_client_ts"}
    assert final_keys == set(real[-1]["meta_info"]) - {"response_sent_to_client_ts"}
