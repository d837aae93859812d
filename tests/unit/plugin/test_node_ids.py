"""plugin/node_ids.py: the depth of a throughput test, read from its node id."""

from __future__ import annotations

from pytest_specperf.plugin.node_ids import throughput_test_depth


def test_the_depth_of_a_throughput_test_is_read_from_its_node_id() -> None:
    floor = "perf_tests/test_throughput.py::test_throughput_floor[steps3-c1]"
    assert throughput_test_depth(floor) == 3
    depth = "perf_tests/test_throughput.py::test_throughput_depth[steps12]"
    assert throughput_test_depth(depth) == 12


def test_any_other_test_has_no_throughput_depth() -> None:
    assert throughput_test_depth("perf_tests/test_capacity.py::test_kv[steps3]") is None
