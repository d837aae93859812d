"""The trace reader reads a Mooncake trace as SGLang's own reader does (the shipped trace)."""

from __future__ import annotations

import pytest

from pytest_specperf.measure.trace import read_trace, shipped_trace_path
from tests.support import sglang_contract as contract

pytestmark = pytest.mark.contract
pytest.importorskip(
    "sglang.srt.server_args",
    reason="SGLang is not importable; install it with tools/install-sglang-contract.sh",
)


def test_every_row_reads_as_sglang_reads_it() -> None:
    path = shipped_trace_path()
    theirs = contract.sglang_mooncake_rows(path)
    ours = read_trace(path).requests
    assert len(ours) == len(theirs) == 200
    for mine, row in zip(ours, theirs, strict=True):
        assert mine.timestamp == row["timestamp"]
        assert mine.input_length == row["input_length"]
        assert mine.output_length == row["output_length"]
        assert list(mine.hash_ids) == row["hash_ids"]


def test_replay_sends_in_sglangs_order_at_sglangs_offsets() -> None:
    path = shipped_trace_path()
    trace = read_trace(path)
    theirs = contract.sglang_mooncake_replay(path)
    ours = [
        (offset, trace.requests[index].output_length)
        for offset, index in zip(trace.offsets_s(), trace.replay_order(), strict=True)
    ]
    assert [out for _, out in ours] == [out for _, out in theirs]
    assert [at for at, _ in ours] == pytest.approx([at for at, _ in theirs])


def test_trace_speed_is_the_inverse_of_sglangs_slowdown_factor() -> None:
    trace = read_trace(shipped_trace_path())
    theirs = contract.sglang_mooncake_replay(shipped_trace_path())
    doubled = trace.offsets_s(speed=0.5)
    assert doubled == pytest.approx([2 * offset for offset, _ in theirs])
