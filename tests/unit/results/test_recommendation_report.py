"""results.recommendation_report: the goodput table and the recommendation as text."""

from __future__ import annotations

from pytest_specperf.gate.recommend import recommend
from pytest_specperf.results.recommendation_report import (
    goodput_table,
    recommendation_text,
    schedule_text,
)
from pytest_specperf.results.report import full_report
from pytest_specperf.results.schema import Goodput, ScheduleRange, Slo
from tests.unit.gate.test_recommend import DEEP, SHALLOW, point, run


def test_schedule_reads_as_concurrency_ranges() -> None:
    ranges = [
        ScheduleRange(min_concurrency=1, max_concurrency=31, depth=3),
        ScheduleRange(min_concurrency=32, max_concurrency=None, depth=1),
    ]
    assert schedule_text(ranges) == "C 1-31: steps=3; C 32+: steps=1"


def test_recommendation_text_names_schedule_stop_and_kv_cost() -> None:
    rec = recommend([SHALLOW, DEEP])
    assert rec is not None
    text = recommendation_text(rec)
    assert "schedule (by aggregate tok/s): C 1-31: steps=3; C 32+: steps=1" in text
    assert "steps=3 over steps=1: stops paying (aggregate tok/s) from C=64" in text
    assert "KV cost per extra step, steps=1->3: 79,713 tokens, 4.5 running requests" in text
    assert "best depth changes between C 16-64" in text


def test_goodput_table_lists_misses_and_verdict() -> None:
    measured = point(4, 1000.0)
    measured.goodput = Goodput(
        goodput_tok_s=750.0,
        requests_meeting=6,
        requests=8,
        misses={"ttft": 2},
        meets_slo=False,
    )
    table = goodput_table([run(3, [measured])], Slo(ttft_p99_ms=500)).text()
    assert "Goodput under SLOs (ttft_p99_ms=500; " in table
    assert "3 | 4 | 750.0 | 1,000.0 | 6/8 | ttft 2 | no" in table


def test_full_report_adds_recommendation_only_when_given() -> None:
    rec = recommend([SHALLOW, DEEP])
    assert "Recommendation" in full_report([SHALLOW, DEEP], recommendation=rec)
    assert "Recommendation" not in full_report([SHALLOW, DEEP])


def test_schedule_names_the_control_as_no_speculation() -> None:
    ranges = [
        ScheduleRange(min_concurrency=1, max_concurrency=31, depth=3),
        ScheduleRange(min_concurrency=32, max_concurrency=None, depth=0),
    ]
    assert schedule_text(ranges) == "C 1-31: steps=3; C 32+: steps=0 (no speculation)"
