"""pytest_specperf.plugin.terminal: how a recording test reads in pytest's reports."""

from __future__ import annotations

import pytest

from pytest_specperf.plugin.terminal import (
    NOT_RECORDED_CATEGORY,
    RECORDED_CATEGORY,
    RECORDED_PROPERTY,
    recorded_status,
    settle_recorded,
)

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


def test_a_written_baseline_reads_recorded_naming_the_test_and_what_it_recorded() -> None:
    stats = {RECORDED_CATEGORY: [report("passed")]}
    lines = settle_recorded(stats, ["steps=3: wrote /bl/steps-3.json"], interrupted=False)
    assert lines == [f"RECORDED {NODE}: steps=3 C=4: agg 1.0 tok/s"]
    assert len(stats[RECORDED_CATEGORY]) == 1


@pytest.mark.parametrize(
    ("written", "interrupted", "why"),
    [
        (["steps=3: wrote /bl/steps-3.json"], True, "the run was interrupted"),
        (
            ["steps=3: NOT written: refusing to replace x"],
            False,
            "steps=3's baseline was not written",
        ),
        (["steps=1: wrote /bl/steps-1.json"], False, "steps=3's baseline was not written"),
    ],
)
def test_a_baseline_not_written_reads_unrecorded_in_the_lines_and_the_summary_count(
    written: list[str], interrupted: bool, why: str
) -> None:
    """An interrupted or refused recording is not summed up as RECORDED."""
    stats = {RECORDED_CATEGORY: [report("passed")]}
    lines = settle_recorded(stats, written, interrupted=interrupted)
    assert lines == [f"NOT RECORDED ({why}) {NODE}: steps=3 C=4: agg 1.0 tok/s"]
    assert stats[RECORDED_CATEGORY] == [] and len(stats[NOT_RECORDED_CATEGORY]) == 1
