"""pytest_specperf.measure.lossless: greedy outputs compared across depths."""

from __future__ import annotations

from pytest_specperf.measure.lossless import compare_outputs, record_and_compare, violations
from pytest_specperf.results.schema import DepthRun, RunResults


def make_run(depth: int) -> DepthRun:
    return DepthRun(depth=depth, profile="p", backend="sim", hardware="h", workload={})


def test_identical_outputs_have_no_divergence() -> None:
    """Equal ids for every prompt: all identical, nothing reported."""
    outputs = {"a": [1, 2, 3], "b": [4, 5]}
    comparison = compare_outputs(3, outputs, 0, dict(outputs))
    assert (comparison.identical, comparison.prompts, comparison.first_divergence) == (2, 2, {})
    assert violations([comparison]) == []


def test_first_divergence_is_the_first_differing_token_index() -> None:
    """The prompt and the index of its first differing token are recorded."""
    comparison = compare_outputs(3, {"a": [1, 2, 9, 4]}, 0, {"a": [1, 2, 3, 4]})
    assert comparison.first_divergence == {"a": 2}
    assert comparison.prefix_match["a"] == 0.5
    (line,) = violations([comparison])
    assert "steps=3 vs steps=0" in line and "'a'" in line and "token 2" in line


def test_a_shorter_output_diverges_where_it_ends() -> None:
    """An output that stops early differs at its own length."""
    comparison = compare_outputs(1, {"a": [1, 2]}, 0, {"a": [1, 2, 3]})
    assert comparison.first_divergence == {"a": 2}


def test_minimum_prefix_rule_accepts_late_divergence_only() -> None:
    """With a stated minimum prefix, a late divergence passes and an early one fails."""
    late = compare_outputs(2, {"late": [1, 2, 3, 9]}, 0, {"late": [1, 2, 3, 4]})
    early = compare_outputs(2, {"early": [9, 2, 3, 4]}, 0, {"early": [1, 2, 3, 4]})
    assert violations([late], min_prefix=0.75) == []
    assert len(violations([early], min_prefix=0.75)) == 1


def test_each_pair_is_compared_once_by_the_later_depth() -> None:
    """A depth compares against those stored before it; a pair is never compared twice."""
    results = RunResults(run_id="r", started_at="t", tool_version="v")
    results.runs = [make_run(0), make_run(3), make_run(1)]
    assert record_and_compare(results, results.runs[0], {"a": [1, 2]}) == []
    found = record_and_compare(results, results.runs[1], {"a": [1, 2]})
    assert [(c.depth, c.reference_depth) for c in found] == [(3, 0)]
    found = record_and_compare(results, results.runs[2], {"a": [1, 7]})
    assert [(c.depth, c.reference_depth, c.identical) for c in found] == [(1, 0, 0), (3, 1, 0)]
    assert len(results.lossless) == 3
    assert record_and_compare(results, results.runs[1], {"a": [1, 2]}) == []
