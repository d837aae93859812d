"""pytest_specperf.plugin.terminal: how a recording test reads in pytest's reports."""

from __future__ import annotations

import pytest

from pytest_specperf.plugin.terminal import RECORDED_PROPERTY, recorded_lines, recorded_status

NODE = "perf_tests/test_throughput.py::test_throughput_floor[steps3-c4]"


def report(outcome: str, when: str = "call", recorded: bool = True) -> pytest.TestReport:
    properties = [(RECORDED_PROPERTY, "steps=3 C=4: agg 1.0 tok/s")] if recorded else []
    return pytest.TestReport(
        NODE, ("f", 1, "t"), {}, outcome, None, when, user_properties=properties
    )


def test_a_passed_test_that_recorded_reads_recorded() -> None:
    assert recorded_status(report("passed")) == ("recorded", "R", ("RECORDED", {"cyan": True}))


@pytest.mark.parametrize(
    ("outcome", "when", "recorded"),
    [("failed", "call", True), ("passed", "setup", True), ("passed", "call", False)],
)
def test_failures_setup_and_plain_passes_keep_pytests_own_status(
    outcome: str, when: str, recorded: bool
) -> None:
    assert recorded_status(report(outcome, when, recorded)) is None


def test_recorded_lines_name_the_test_and_what_it_recorded() -> None:
    assert recorded_lines([report("passed")]) == [f"RECORDED {NODE}: steps=3 C=4: agg 1.0 tok/s"]
