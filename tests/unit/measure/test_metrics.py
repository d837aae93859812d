"""pytest_specperf.measure.metrics: the one definition of every point figure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.measure.metrics import decode_rate, percentile, point_metrics
from pytest_specperf.results.schema import RequestRecord


def ok_record(
    times: list[float],
    tokens: list[int],
    *,
    start: float = 0.0,
    end: float | None = None,
    verify: int | None = None,
) -> RequestRecord:
    return RequestRecord(
        ok=True,
        start=start,
        end=times[-1] if end is None else end,
        first_chunk=times[0],
        chunk_times=list(times),
        chunk_tokens=list(tokens),
        completion_tokens=sum(tokens),
        spec_verify_ct=verify,
    )


def failed_record(error: str | None, tokens: int = 0) -> RequestRecord:
    return RequestRecord(ok=False, error=error, start=0.0, end=1.0, completion_tokens=tokens)


def test_agg_tok_s_is_server_tokens_over_wall() -> None:
    """Aggregate throughput is the sum of completion tokens divided by the point's wall time."""
    records = [ok_record([1.0, 2.0], [4, 6]), ok_record([1.0, 3.0], [10, 20])]
    metrics = point_metrics(2, records, wall_s=4.0)
    assert metrics.tokens == 40
    assert metrics.agg_tok_s == pytest.approx(10.0)


def test_per_req_tok_s_is_mean_decode_rate_excluding_first_chunk() -> None:
    """Per-request rate averages (tokens after the first chunk) / (last - first chunk time)."""
    first = ok_record([1.0, 2.0, 3.0], [5, 2, 2])  # 4 tokens over 2 s -> 2 tok/s
    second = ok_record([0.5, 1.5], [3, 6])  # 6 tokens over 1 s -> 6 tok/s
    metrics = point_metrics(2, [first, second], wall_s=3.0)
    assert metrics.per_req_tok_s == pytest.approx(4.0)


def test_decode_rate_is_none_for_a_single_chunk() -> None:
    """A request that arrived in one chunk has no decode rate."""
    assert decode_rate(ok_record([1.0], [10])) is None


def test_per_req_tok_s_is_none_when_no_request_has_a_decode_rate() -> None:
    """With only single-chunk requests the per-request figure is absent, not zero."""
    metrics = point_metrics(1, [ok_record([1.0], [10])], wall_s=1.0)
    assert metrics.per_req_tok_s is None


def test_itl_spreads_a_chunks_gap_over_its_tokens() -> None:
    """A chunk of k tokens after a gap g contributes k inter-token latencies of g / k."""
    record = ok_record([0.0, 1.0, 2.0], [1, 1, 4])
    metrics = point_metrics(1, [record], wall_s=2.0)
    assert metrics.itl_s is not None
    # gaps: [1.0] + [0.25] * 4
    assert metrics.itl_s.mean == pytest.approx(2.0 / 5)
    assert metrics.itl_s.p50 == pytest.approx(0.25)


def test_ttft_is_first_chunk_minus_request_start() -> None:
    """Time to first token is measured from the request's start to its first chunk."""
    record = ok_record([1.5, 2.0], [1, 1], start=1.0)
    metrics = point_metrics(1, [record], wall_s=1.0)
    assert metrics.ttft_s is not None
    assert metrics.ttft_s.p50 == pytest.approx(0.5)


def test_accept_length_is_sum_tokens_over_sum_verify_steps() -> None:
    """Accept length pools requests: sum(completion tokens) / sum(spec_verify_ct)."""
    records = [
        ok_record([0.0, 1.0], [1, 63], verify=63),
        ok_record([0.0, 1.0], [6, 30], verify=12),
    ]
    metrics = point_metrics(2, records, wall_s=1.0)
    assert metrics.spec_verify_ct == 75
    assert metrics.accept_length == pytest.approx(100 / 75)


def test_accept_length_is_none_without_verify_counts() -> None:
    """A server that does not speculate yields no accept length."""
    metrics = point_metrics(1, [ok_record([0.0, 1.0], [1, 9])], wall_s=1.0)
    assert metrics.accept_length is None


def test_failed_requests_are_counted_by_reason() -> None:
    """Failures are tallied per reason; a failure without a reason is an unknown error."""
    records = [
        ok_record([0.0, 1.0], [1, 1]),
        failed_record("HTTP 500"),
        failed_record("HTTP 500"),
        failed_record(None),
    ]
    metrics = point_metrics(4, records, wall_s=1.0)
    assert (metrics.requests, metrics.ok, metrics.failed) == (4, 1, 3)
    assert metrics.errors == {"HTTP 500": 2, "unknown error": 1}


def test_failed_request_tokens_are_not_in_aggregate() -> None:
    """Tokens a failed request received do not count towards throughput."""
    records = [ok_record([0.0, 1.0], [5, 5]), failed_record("truncated stream", tokens=1000)]
    metrics = point_metrics(2, records, wall_s=2.0)
    assert metrics.tokens == 10
    assert metrics.agg_tok_s == pytest.approx(5.0)


def test_zero_wall_time_gives_zero_aggregate() -> None:
    """A point without wall time reports 0 tok/s instead of dividing by zero."""
    metrics = point_metrics(1, [failed_record("HTTP 500")], wall_s=0.0)
    assert metrics.agg_tok_s == 0.0


def test_success_rate_is_ok_over_requests() -> None:
    """The success rate is the fraction of requests that succeeded."""
    records = [ok_record([0.0, 1.0], [1, 1]), failed_record("timeout")]
    assert point_metrics(2, records, wall_s=1.0).success_rate == pytest.approx(0.5)


def test_percentile_interpolates_linearly_between_ranks() -> None:
    """p50 of four values is midway between the middle two; p90 sits 70% of the way 30 -> 40."""
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 0.5) == pytest.approx(25.0)
    assert percentile(values, 0.9) == pytest.approx(37.0)


def test_percentile_at_zero_and_one_are_min_and_max() -> None:
    """The 0th and 100th percentiles are the extreme values."""
    values = [1.0, 2.0, 9.0]
    assert (percentile(values, 0.0), percentile(values, 1.0)) == (1.0, 9.0)


def test_percentile_of_no_values_raises_value_error() -> None:
    """An empty sample has no percentile."""
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)


@given(
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_percentile_is_monotone_and_bounded(values: list[float], low: float, high: float) -> None:
    """A percentile lies within the sample's range and never decreases with the fraction."""
    ordered = sorted(values)
    low, high = sorted((low, high))
    a, b = percentile(ordered, low), percentile(ordered, high)
    tolerance = 1e-9 * max(1.0, abs(ordered[0]), abs(ordered[-1]))
    assert ordered[0] - tolerance <= a <= b + tolerance
    assert b <= ordered[-1] + tolerance


def test_consistent_records_have_no_truth_problem() -> None:
    """Requests whose figures agree with each other and with the server raise nothing."""
    record = ok_record([0.1, 0.2, 0.3], [1, 2, 2], end=0.31)
    record.server_e2e_s = 0.29
    assert point_metrics(1, [record], 1.0).truth_problems == []


def test_chunk_counts_not_adding_up_to_the_final_count_are_flagged() -> None:
    """Chunk counts that sum to more than the server's final count are named with their share."""
    record = ok_record([0.1, 0.2], [3, 3])
    record.completion_tokens = 4
    problems = point_metrics(1, [record, ok_record([0.1], [2])], 1.0).truth_problems
    assert problems == [
        "1/2 requests: chunk token counts do not add up to the server's final count"
    ]


def test_request_without_server_count_is_flagged() -> None:
    """A successful request with no token count from the server is flagged."""
    record = RequestRecord(ok=True, start=0.0, end=1.0)
    assert point_metrics(1, [record], 1.0).truth_problems == [
        "1/1 requests: no token count from the server"
    ]


def test_end_before_first_token_is_flagged() -> None:
    """An e2e shorter than the TTFT is impossible and flagged."""
    record = ok_record([0.5], [2], end=0.4)
    assert "1/1 requests: e2e shorter than TTFT" in point_metrics(1, [record], 1.0).truth_problems


def test_last_token_sooner_than_server_e2e_is_flagged() -> None:
    """Seeing the last token 0.2 s after sending when the server took 0.3 s cannot be true."""
    record = ok_record([0.1, 0.2], [1, 1])
    record.server_e2e_s = 0.3
    problems = point_metrics(1, [record], 1.0).truth_problems
    assert problems == ["1/1 requests: last token seen sooner than the server's own e2e_latency"]


def test_failed_requests_are_not_truth_checked() -> None:
    """A failed request's partial figures are not held to the truth checks."""
    assert point_metrics(1, [failed_record("HTTP 500")], 1.0).truth_problems == []
