"""Reading traces, and the prompts and schedule made from them."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.trace import (
    MAX_REQUEST_TOKENS,
    MOONCAKE_BLOCK_TOKENS,
    TraceRequest,
    read_trace,
    resolve_trace_path,
    shipped_trace_path,
    trace_prompt,
    trace_prompts,
)


def _jsonl(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_shipped_trace_is_200_bursty_requests_with_mooncake_blocks() -> None:
    trace = read_trace(shipped_trace_path())
    assert len(trace.requests) == 200
    assert all(
        len(r.hash_ids) == -(-r.input_length // MOONCAKE_BLOCK_TOKENS) for r in trace.requests
    )
    offsets = trace.offsets_s()
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    mean = sum(gaps) / len(gaps)
    cv = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5 / mean
    assert cv > 1  # burstier than Poisson arrivals (CV 1)


def test_replay_sorts_by_timestamp_and_scales_by_speed(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        [
            {"timestamp": 3000, "input_length": 4, "output_length": 2},
            {"timestamp": 1000, "input_length": 5, "output_length": 3},
            {"timestamp": 1000, "input_length": 6, "output_length": 4},
        ],
    )
    trace = read_trace(path)
    assert trace.replay_order() == [1, 2, 0]
    assert trace.offsets_s() == [0.0, 0.0, 2.0]
    assert trace.offsets_s(speed=2.0) == [0.0, 0.0, 1.0]
    prompts, outputs = trace_prompts(trace)
    assert [len(p.split()) for p in prompts] == [5, 6, 4]
    assert outputs == (3, 4, 2)


def test_a_csv_trace_reads_like_its_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_length,output_length,hash_ids\n0,600,8,1 2\n5,10,9,\n")
    trace = read_trace(path)
    assert trace.requests == (TraceRequest(0, 600, 8, (1, 2)), TraceRequest(5, 10, 9, ()))


def test_shared_hash_ids_share_the_prompt_prefix_word_for_word() -> None:
    one = trace_prompt(TraceRequest(0, 1000, 1, (7, 8)), 0).split()
    two = trace_prompt(TraceRequest(0, 700, 1, (7, 9)), 1).split()
    assert one[:MOONCAKE_BLOCK_TOKENS] == two[:MOONCAKE_BLOCK_TOKENS]
    assert one[MOONCAKE_BLOCK_TOKENS] != two[MOONCAKE_BLOCK_TOKENS]
    assert (len(one), len(two)) == (1000, 700)


def test_a_prompt_without_blocks_is_its_own() -> None:
    assert trace_prompt(TraceRequest(0, 50, 1), 0) != trace_prompt(TraceRequest(0, 50, 1), 1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no requests"),
        ("not json\n", "line 1: not JSON"),
        ('{"timestamp": 0, "input_length": 3}\n', "line 1: no output_length"),
        ('{"timestamp": 0, "input_length": 0, "output_length": 1}\n', ">= 1"),
        ('{"timestamp": "x", "input_length": 1, "output_length": 1}\n', "must be numbers"),
    ],
)
def test_a_bad_trace_is_one_line_naming_file_and_line(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(UsageError, match=message) as caught:
        read_trace(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_synthetic_names_the_shipped_trace_and_paths_are_from_the_root(tmp_path: Path) -> None:
    assert resolve_trace_path("synthetic") == shipped_trace_path()
    assert resolve_trace_path("a/t.jsonl", tmp_path) == tmp_path / "a/t.jsonl"


def test_a_request_past_the_suites_limit_is_refused_naming_file_line_and_limit(
    tmp_path: Path,
) -> None:
    """input_length 50,000,000 is refused as the trace is read, before a prompt of it is
    built (which takes minutes and gigabytes) or a server boots: the file, the line and the
    limit in one line."""
    path = tmp_path / "long.jsonl"
    path.write_text(
        '{"timestamp": 0, "input_length": 10, "output_length": 5}\n'
        "\n"
        '{"timestamp": 1, "input_length": 50000000, "output_length": 5}\n'
    )
    with pytest.raises(UsageError) as caught:
        read_trace(path)
    message = str(caught.value)
    assert message.startswith(f"trace {path} line 3: input_length 50,000,000")
    assert f"{MAX_REQUEST_TOKENS:,}" in message and "\n" not in message


def test_a_trace_names_the_line_of_its_longest_request(tmp_path: Path) -> None:
    """Blank lines count: the longest request is reported on the line it is written."""
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"timestamp": 0, "input_length": 10, "output_length": 5}\n'
        "\n"
        '{"timestamp": 1, "input_length": 900, "output_length": 100}\n'
        '{"timestamp": 2, "input_length": 20, "output_length": 5}\n'
    )
    assert read_trace(path).longest_request() == (1000, 3)
