"""pytest_specperf.plugin.benchmark: a measured point as a pytest-benchmark record."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_benchmark.stats import Metadata

from pytest_specperf.plugin.benchmark import (
    ROUND_MEANING,
    add_gate_figures,
    record_point,
    wants_benchmark_output,
    without_benchmark_banner,
)
from tests.support.points import make_point


class FakeNode:
    name = "test_throughput_floor[steps3-c4]"
    nodeid = "perf_tests/test_throughput.py::test_throughput_floor[steps3-c4]"


def make_fixture(*, disabled: bool = False) -> Any:
    """pytest-benchmark's own fixture class, built as its plugin builds it."""
    from pytest_benchmark.fixture import BenchmarkFixture
    from pytest_benchmark.timers import default_timer
    from pytest_benchmark.utils import NameWrapper

    added: list[Metadata] = []
    fixture = BenchmarkFixture(
        FakeNode(), disable_gc=False, timer=NameWrapper(default_timer), min_rounds=5,
        min_time=0.000005, max_time=1.0, precision=None, confidence=None, warmup=False,
        warmup_iterations=0, calibration_precision=10, add_stats=added.append, logger=None,
        warner=None, disabled=disabled, cprofile=False, cprofile_loops=None, cprofile_dump=None,
    )  # fmt: skip
    fixture.added = added
    return fixture


POINT = make_point(4, 350.0, 120.0, requests=8, failed=1, tokens=700, wall_s=2.0, accept_length=3.5)


def test_each_successful_request_is_one_round_of_its_end_to_end_time() -> None:
    fixture = make_fixture()
    assert record_point(fixture, POINT, [0.5, 1.0, 1.5], depth=3)
    stats = fixture.added[0].stats
    assert (stats.rounds, stats.min, stats.max, stats.mean) == (3, 0.5, 1.5, 1.0)


def test_every_figure_of_the_point_is_in_extra_info() -> None:
    fixture = make_fixture()
    record_point(fixture, POINT, [1.0], depth=3, context={"hardware": "sim-x5"})
    info = fixture.added[0].extra_info
    assert info["agg_tok_s"] == 350.0 and info["per_req_tok_s"] == 120.0
    assert (info["depth"], info["concurrency"], info["ok"], info["failed"]) == (3, 4, 7, 1)
    assert info["accept_length"] == 3.5 and info["hardware"] == "sim-x5"
    assert info["specperf_round"] == ROUND_MEANING


def test_records_are_grouped_by_depth() -> None:
    fixture = make_fixture()
    record_point(fixture, POINT, [1.0], depth=2)
    assert fixture.added[0].group == "specperf steps=2"


@pytest.mark.parametrize(("disabled", "rounds"), [(True, [1.0]), (False, [])])
def test_nothing_is_recorded_when_disabled_or_no_request_succeeded(
    disabled: bool, rounds: list[float]
) -> None:
    fixture = make_fixture(disabled=disabled)
    assert not record_point(fixture, POINT, rounds, depth=3)
    assert fixture.added == []


def test_gate_figures_join_extra_info_after_the_test() -> None:
    fixture = make_fixture()
    record_point(fixture, POINT, [1.0], depth=3)
    add_gate_figures(fixture, [("specperf.agg_tok_s.floor", 300.0), ("other", 1)])
    assert fixture.added[0].extra_info["gate"] == {"specperf.agg_tok_s.floor": 300.0}


def options(**values: object) -> Any:
    return lambda name: values.get(name)


def test_no_benchmark_option_asks_for_no_benchmark_output() -> None:
    args = ["perf_tests", "--spec-steps=3", "--benchmark-disable", "--benchmark-skip"]
    assert not wants_benchmark_output(args, options(benchmark_compare_fail=[]))


def test_a_benchmark_output_option_asks_for_it_even_from_the_ini_file() -> None:
    """--benchmark-json set through addopts is not in the arguments, but in the options."""
    assert wants_benchmark_output(["perf_tests"], options(benchmark_json="b.json"))


def test_any_other_benchmark_flag_on_the_command_line_asks_for_output() -> None:
    assert wants_benchmark_output(["perf_tests", "--benchmark-columns=min,max"], options())


def test_the_banner_is_left_out_of_the_header_and_nothing_else() -> None:
    header = ["benchmark: 5.3.1 (defaults: timer=...)", ["specperf: profile=p"], "rootdir: x"]
    assert without_benchmark_banner(header) == [["specperf: profile=p"], "rootdir: x"]
