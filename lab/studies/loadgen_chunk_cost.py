"""Client cost per streamed chunk: the load generator's decode vs a plain json.loads.

Run side by side in one process (the machine is shared and noisy, so absolute figures drift;
the ratio is what to read):

    pytest lab/studies/loadgen_chunk_cost.py --benchmark-only -p no:specperf

SGLang streams the cumulative text in every /generate chunk, so a 1000-token request's late
chunks carry several KB the client never needs. The loadgen decodes into a struct that names
only meta_info's counts; msgspec skips the rest without building Python strings.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_specperf.measure.sse import _decode_chunk

TOKENS = 900  # a late chunk of a 1000-token request


def _chunk(tokens: int) -> bytes:
    words = [f"w{i % 997}" for i in range(tokens)]
    body = {
        "text": " " + " ".join(words),
        "output_ids": [i % 997 for i in range(tokens)],
        "meta_info": {
            "id": "e7c3922290e844bbae566c79f3a5b616",
            "finish_reason": None,
            "prompt_tokens": 64,
            "weight_version": "default",
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": tokens,
            "cached_tokens": 0,
            "cached_tokens_details": None,
            "dp_rank": None,
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


CHUNK = _chunk(TOKENS)


def _stdlib_decode(payload: bytes) -> Any:
    return json.loads(payload)["meta_info"]["completion_tokens"]


@pytest.mark.benchmark(group="chunk decode (900-token cumulative chunk)")
def test_loadgen_struct_decode(benchmark: Any) -> None:
    """The loadgen's typed decode reads the server's token count from a late chunk."""
    result = benchmark(_decode_chunk, CHUNK)
    assert result.meta_info is not None and result.meta_info.completion_tokens == TOKENS


@pytest.mark.benchmark(group="chunk decode (900-token cumulative chunk)")
def test_stdlib_json_decode(benchmark: Any) -> None:
    """Reference: the standard library decodes the whole chunk, text and ids included."""
    assert benchmark(_stdlib_decode, CHUNK) == TOKENS
