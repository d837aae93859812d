"""pytest_specperf.results.schema: the helpers of the shared data types."""

from __future__ import annotations

from tests.support.points import make_point


def test_a_point_without_repeats_is_its_own_only_sample() -> None:
    point = make_point(4, 100.0)
    assert point.all_samples() == [point]


def test_a_repeated_point_gives_its_samples_not_itself() -> None:
    samples = [make_point(4, agg) for agg in (90.0, 100.0, 110.0)]
    point = make_point(4, 100.0, samples=samples)
    assert point.all_samples() == samples


def test_boots_are_those_of_the_samples() -> None:
    samples = [make_point(4, 100.0, boot=boot) for boot in (0, 1, 1)]
    assert make_point(4, 100.0, samples=samples, boot=0).boots() == {0, 1}
    assert make_point(4, 100.0, boot=2).boots() == {2}
