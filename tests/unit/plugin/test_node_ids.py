"""plugin/node_ids.py: the depth of a throughput test, read from its node id."""

from __future__ import annotations

from pytest_specperf.plugin.node_ids import throughput_test_depth


def test_the_depth_of_a_throughput_test_is_read_from_its_node_id() -> None:
    floor = "perf_tests/test_throughput.py::test_throughput_floor[steps3-c1]"
    assert throughput_test_depth(floor) == 3
    depth = "perf_tests/test_throughput.py::test_throughput_depth[steps12]"
    assert throughput_test_depth(depth) == 12


def test_an_open_loop_point_test_gates_its_depth_too() -> None:
    trace = "perf_tests/test_open_loop.py::test_open_loop_floor[steps1-trace]"
    assert throughput_test_depth(trace) == 1
    rate = "perf_tests/test_open_loop.py::test_open_loop_floor[steps3-rate4]"
    assert throughput_test_depth(rate) == 3


def test_any_other_test_has_no_throughput_depth() -> None:
    assert throughput_test_depth("perf_tests/test_capacity.py::test_kv[steps3]") is None
    rate_search = "perf_tests/test_open_loop.py::test_slo_rate_not_below_baseline[steps3]"
    assert throughput_test_depth(rate_search) is None
