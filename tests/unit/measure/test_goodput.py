"""measure.goodput: the SLO option, which requests meet the SLOs, goodput per point."""

from __future__ import annotations

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.goodput import (
    merge_goodput,
    parse_slo,
    point_goodput,
    request_misses,
)
from pytest_specperf.results.schema import Goodput, RequestRecord, Slo


def record(
    *, ttft: float = 0.1, gap: float = 0.01, chunks: int = 10, ok: bool = True
) -> RequestRecord:
    """A request starting at 0 with `chunks` chunks of 2 tokens, `gap` s apart."""
    times = [ttft + gap * i for i in range(chunks)]
    return RequestRecord(
        ok=ok,
        error=None if ok else "http 500",
        start=0.0,
        end=times[-1],
        first_chunk=times[0],
        chunk_times=times,
        chunk_tokens=[2] * chunks,
        completion_tokens=2 * chunks,
    )


def test_parse_slo_reads_every_limit() -> None:
    slo = parse_slo("ttft_p99_ms=500, itl_p99_ms=20,e2e_p99_ms=9000,attainment=0.9")
    assert slo == Slo(ttft_p99_ms=500, itl_p99_ms=20, e2e_p99_ms=9000, attainment=0.9)


def test_parse_slo_empty_is_none() -> None:
    assert parse_slo("") is None and parse_slo(None) is None


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("ttft=5", "is not name=value with a name of"),
        ("ttft_p99_ms=fast", "is not a number"),
        ("itl_p99_ms=-1", "must be a positive number"),
        ("attainment=0.9", "set at least one of"),
        ("ttft_p99_ms=5,attainment=2", "attainment is a fraction"),
    ],
)
def test_parse_slo_rejects_bad_values_in_one_line(raw: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_slo(raw)


def test_request_within_every_limit_meets_them() -> None:
    slo = Slo(ttft_p99_ms=200, itl_p99_ms=10, e2e_p99_ms=1000)
    assert request_misses(record(), slo) == []


def test_request_misses_name_each_limit_exceeded() -> None:
    """TTFT 0.3 s, 2-token chunks 0.05 s apart (ITL 25 ms), e2e 0.75 s: all three missed."""
    slo = Slo(ttft_p99_ms=200, itl_p99_ms=20, e2e_p99_ms=500)
    assert request_misses(record(ttft=0.3, gap=0.05), slo) == ["ttft", "itl", "e2e"]


def test_failed_request_is_a_miss() -> None:
    assert request_misses(record(ok=False), Slo(ttft_p99_ms=1e9)) == ["failed"]


def test_goodput_counts_only_tokens_of_requests_meeting_the_slos() -> None:
    """Two of four requests meet the SLOs: goodput is their tokens over the wall time."""
    records = [record(), record(), record(ttft=0.5), record(ok=False)]
    good = point_goodput(records, wall_s=2.0, slo=Slo(ttft_p99_ms=200, attainment=0.5))
    assert good.requests_meeting == 2 and good.requests == 4
    assert good.goodput_tok_s == pytest.approx(2 * 20 / 2.0)
    assert good.misses == {"ttft": 1, "failed": 1}
    assert good.meets_slo


def test_point_misses_the_slos_below_the_attainment() -> None:
    """With the default 99% attainment, one miss in eight fails the point."""
    records = [record()] * 7 + [record(ttft=0.5)]
    assert not point_goodput(records, wall_s=1.0, slo=Slo(ttft_p99_ms=200)).meets_slo
    assert point_goodput(records[:7], wall_s=1.0, slo=Slo(ttft_p99_ms=200)).meets_slo


def test_repeats_give_the_median_goodput_and_pool_their_requests() -> None:
    """Three samples: goodput is their median; the point meets the SLOs only if the pooled
    requests do (one miss in 24 fails a 99% attainment)."""

    def part(tok_s: float, meeting: int) -> Goodput:
        return Goodput(
            goodput_tok_s=tok_s,
            requests_meeting=meeting,
            requests=8,
            misses={"ttft": 8 - meeting} if meeting < 8 else {},
            meets_slo=meeting == 8,
        )

    merged = merge_goodput([part(100.0, 8), part(90.0, 7), part(120.0, 8)])
    assert merged.goodput_tok_s == 100.0
    assert (merged.requests_meeting, merged.requests, merged.misses) == (23, 24, {"ttft": 1})
    assert not merged.meets_slo
    assert merge_goodput([part(100.0, 8), part(110.0, 8)]).meets_slo
