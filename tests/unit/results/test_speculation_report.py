"""pytest_specperf.results.speculation_report: speedup, per-position acceptance, greedy
output equality and self-test sections."""

from __future__ import annotations

from pytest_specperf.results.schema import OutputComparison
from pytest_specperf.results.speculation_report import (
    acceptance_table,
    lossless_table,
    speculation_blocks,
)
from tests.unit.results.test_report import make_point, make_run


def test_speedup_table_shows_each_depth_over_the_control() -> None:
    """With depth 0 in the run, the report has a speedup table: agg / per-req per C."""
    control = make_run(0, 2000)
    deeper = make_run(3, 1000)
    deeper.points = [make_point(1, 500.0), make_point(4, 1800.0), make_point(16, 3000.0)]
    text = "\n\n".join(speculation_blocks([control, deeper]))
    block = text.split("Speedup over no speculation (steps=0)\n", 1)[1].splitlines()
    assert block[0] == "C | steps=3 agg / per-req"
    assert block[2:5] == ["1 | 2.00x / 2.00x", "4 | 2.00x / 2.00x", "16 | 1.00x / 1.00x"]


def test_no_speedup_table_without_control() -> None:
    """Without depth 0 there is no speedup table."""
    assert speculation_blocks([make_run(1, 1000), make_run(3, 1000)]) == []


def test_acceptance_table_lists_each_position() -> None:
    """Per depth: tokens per verify step, then the rate of each draft position."""
    run = make_run(3, 1000)
    run.accept_histogram = [2, 0, 1, 15]
    run.position_accept_rate = [16 / 18, 16 / 18, 15 / 18]
    table = acceptance_table([run])
    assert table is not None
    assert table.text().splitlines()[-1] == "3 | 3.61 | 0.889 | 0.889 | 0.833"


def test_lossless_table_names_first_divergence() -> None:
    """Each compared pair shows its match rate and every prompt's first differing token."""
    comparison = OutputComparison(
        depth=3, reference_depth=0, prompts=2, identical=1, first_divergence={"a": 16}
    )
    table = lossless_table([comparison])
    assert table is not None
    assert table.text().splitlines()[-1] == "3 vs 0 | 1/2 (50%) | a: 16"
