"""The open-loop, SLO-rate and running-request tables."""

from __future__ import annotations

from pytest_specperf.results.open_loop_report import (
    batch_held_by,
    best_rate_depth,
    open_loop_table,
    rate_search_table,
    running_table,
)
from pytest_specperf.results.report import depth_table
from pytest_specperf.results.schema import (
    DepthRun,
    RateProbe,
    RateSearch,
    ServerLoad,
    ServerSummary,
    Slo,
)
from tests.support.points import make_point, make_run


def _search(rate: float | None) -> RateSearch:
    probe = RateProbe(
        rate=2.0, meets_slo=True, attainment=1.0, goodput_tok_s=1, agg_tok_s=1, achieved_rate=2
    )
    return RateSearch(max_rate=rate, low=rate, high=None, probes=[probe], stopped_by="probes")


def _run(depth: int, rate: float | None = None) -> DepthRun:
    point = make_point(
        3,
        500.0,
        load="rate=4",
        request_rate=4.0,
        server_load=ServerLoad(running_max=9, queued_max=2, retractions=1, polls=5),
    )
    server = ServerSummary(url="u", max_running_requests=17, max_total_num_tokens=295_931)
    return make_run(
        depth,
        [make_point(1, 100.0)],
        rate_points=[point],
        server=server,
        rate_search=_search(rate) if rate is not None else None,
    )


def test_an_open_loop_point_is_a_row_of_its_depths_table_named_by_its_load() -> None:
    text = depth_table(_run(3)).text()
    assert "\nrate=4 | 500.0 |" in text and "\n1 | 100.0 |" in text


def test_open_loop_table_shows_running_against_the_cap() -> None:
    table = open_loop_table([_run(3)])
    assert table is not None
    assert table.rows[0][:2] == ["3", "rate=4"] and table.rows[0][-2:] == ["9/17", "1"]


def test_no_open_loop_point_no_table() -> None:
    assert open_loop_table([make_run(3, [make_point(1, 1.0)])]) is None


def test_the_depth_serving_the_most_rate_is_named() -> None:
    runs = [_run(1, 8.0), _run(3, 11.0)]
    assert best_rate_depth(runs) == (3, 11.0)
    table = rate_search_table(runs, Slo(ttft_p99_ms=100))
    assert table is not None
    assert "steps=3 serves the most request rate within the SLOs: 11/s" in table.text()
    assert "(ttft_p99_ms=100, attainment 99%)" in table.title


def test_running_table_lists_every_point_that_watched_the_server() -> None:
    table = running_table([_run(3)])
    assert table is not None
    assert table.rows == [["3", "rate=4", "9", "17", "295,931", "2", "1", "below the cap"]]


def test_a_batch_one_below_the_cap_with_a_queue_was_held_by_the_cap() -> None:
    """SGLang's running gauge, set at a prefill before the new request joins, read 63 of 64
    with 100 queued on a lent H100 (its log: ``#running-req: 63, #new-seq: 1``)."""
    assert batch_held_by(63, 64, 100) == "request cap"
    assert batch_held_by(64, 64, 1) == "request cap"


def test_a_batch_further_below_the_cap_with_a_queue_was_held_by_something_else() -> None:
    assert batch_held_by(17, 64, 30) == "below the cap"


def test_no_queue_or_no_gauges_name_no_bound() -> None:
    assert batch_held_by(63, 64, 0) == "no queue"
    assert batch_held_by(None, 64, None) == "-"
