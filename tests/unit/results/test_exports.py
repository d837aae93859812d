"""pytest_specperf.results.exports: github-action-benchmark's customBigger/SmallerIsBetter files."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_specperf.results.exports import (
    BIGGER_IS_BETTER_FILE,
    SMALLER_IS_BETTER_FILE,
    bigger_is_better,
    smaller_is_better,
    write_benchmark_action_files,
)
from pytest_specperf.results.schema import Goodput
from tests.unit.results_samples import sample_run


def test_bigger_is_better_has_speed_per_point_and_capacity_per_depth() -> None:
    """Per point agg and per-req tok/s; per depth KV tokens, max running, accept length."""
    names = {entry.name: entry.unit for entry in bigger_is_better([sample_run(3)])}
    assert names["steps=3 C=16 agg tok/s"] == "tok/s"
    assert names["steps=3 C=16 per-req tok/s"] == "tok/s"
    assert names["steps=3 KV tokens"] == "tokens"
    assert names["steps=3 max running requests"] == "requests"
    assert names["steps=3 accept length"] == "tokens/step"


def test_with_the_control_each_depth_has_its_speedup_history() -> None:
    """Depth 0 in the run: each other depth's speedup per point, agg and per-req, in x."""
    control = sample_run(1)  # sample_run scales tok/s by the depth: depth 1's figures
    control.depth = 0
    entries = {e.name: e for e in bigger_is_better([control, sample_run(3)])}
    assert entries["steps=3 C=16 agg speedup over steps=0"].unit == "x"
    assert entries["steps=3 C=16 agg speedup over steps=0"].value > 1.0
    assert "steps=0 C=16 agg speedup over steps=0" not in entries


def test_no_speedup_without_the_control() -> None:
    assert not [e for e in bigger_is_better([sample_run(3)]) if "speedup" in e.name]


def test_acceptance_per_draft_position_and_goodput_are_charted() -> None:
    run = sample_run(3)
    run.position_accept_rate = [0.9, 0.7]
    run.points[0].goodput = Goodput(
        goodput_tok_s=600.0, requests_meeting=3, requests=4, misses={"ttft": 1}, meets_slo=False
    )
    entries = {e.name: e for e in bigger_is_better([run])}
    assert entries["steps=3 acceptance of draft position 2"].value == 0.7
    assert entries["steps=3 C=1 goodput tok/s"].value == 600.0


def test_an_interval_becomes_the_range() -> None:
    """A point's interval is shown as the entry's range; without one there is no range."""
    entries = {e.name: e for e in bigger_is_better([sample_run(3, interval=True)])}
    assert entries["steps=3 C=1 agg tok/s"].range == "740 .. 762 (95% t)"
    assert entries["steps=3 C=1 per-req tok/s"].range is None


def test_latencies_are_smaller_is_better_in_ms() -> None:
    """TTFT percentiles go to the smaller-is-better list, in milliseconds."""
    entries = {e.name: e for e in smaller_is_better([sample_run(3)])}
    assert entries["steps=3 C=4 TTFT p50"].unit == "ms"
    assert entries["steps=3 C=4 TTFT p99"].value == 40.0


def test_files_are_lists_in_the_action_format(tmp_path: Path) -> None:
    """Both files are JSON lists of {name, unit, value[, range][, extra]}."""
    paths = write_benchmark_action_files([sample_run(1), sample_run(3)], tmp_path)
    assert [p.name for p in paths] == [BIGGER_IS_BETTER_FILE, SMALLER_IS_BETTER_FILE]
    for path in paths:
        entries = json.loads(path.read_text(encoding="utf-8"))
        assert entries and isinstance(entries, list)
        for entry in entries:
            assert (
                {"name", "unit", "value"}
                <= entry.keys()
                <= {
                    "name",
                    "unit",
                    "value",
                    "range",
                    "extra",
                }
            )
            assert isinstance(entry["value"], float)
