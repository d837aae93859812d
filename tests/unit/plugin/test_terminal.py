"""pytest_specperf.plugin.terminal: how a recording test reads in pytest's reports."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_specperf.config.settings import build_settings
from pytest_specperf.plugin.terminal import (
    NOT_RECORDED_CATEGORY,
    RECORDED_CATEGORY,
    RECORDED_PROPERTY,
    header_lines,
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


def _header(tmp_path: Path, **fields: Any) -> list[str]:
    """The header of a simulator run whose Settings carry ``fields``."""
    values = {"backend": "sim"}
    settings = dataclasses.replace(build_settings(lambda key: values.get(key), tmp_path), **fields)
    run = SimpleNamespace(settings=settings, estimate=None, history=None)
    config = SimpleNamespace(option=SimpleNamespace(dist="no", tx=None))
    return header_lines(run, config)  # type: ignore[arg-type]


def test_the_header_names_the_py_spy_that_reads_the_server_stacks(tmp_path: Path) -> None:
    lines = _header(tmp_path, py_spy="/opt/bin/py-spy")
    assert "specperf: server stacks read by /opt/bin/py-spy" in lines


def test_the_header_says_why_auto_reads_no_server_stack(tmp_path: Path) -> None:
    why = "kernel.yama.ptrace_scope is 1: ..."
    assert f"specperf: server stacks not read: {why}" in _header(tmp_path, server_stacks_off=why)
    assert not any("server stacks" in line for line in _header(tmp_path))  # sim: not asked


def test_the_header_says_the_run_chose_the_server_cpu_placement(tmp_path: Path) -> None:
    lines = _header(tmp_path, server_cpu="rotate", server_cpu_by_default=True)
    assert any(
        line.startswith("specperf: server CPU placement rotate, the A/B default with SGLang")
        and "--specperf-server-cpu=none" in line
        for line in lines
    )
    given = _header(tmp_path, server_cpu="rotate")
    assert not any("server CPU placement" in line for line in given)
