"""pytest_specperf.run.self_test: a known /slow_down, judged by the gate's own floors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_specperf.results.schema import PointMetrics, SelfTest
from pytest_specperf.run import self_test
from tests.support.points import make_point, make_run


def point(per_req: float, agg: float | None = None, accept: float | None = 4.0) -> PointMetrics:
    return make_point(
        1, per_req if agg is None else agg, per_req, requests=2, tokens=200, accept_length=accept
    )


def test_slowdown_is_a_few_verify_steps() -> None:
    """One step is tokens per step / stream rate: at 4 tokens per step and 200 tok/s, 20 ms."""
    steps = self_test.SLOWDOWN_STEPS
    assert self_test.slowdown_for(point(200.0)) == pytest.approx(0.02 * steps)
    assert self_test.slowdown_for(point(100.0, accept=None)) == pytest.approx(0.01 * steps)


def test_slowdown_ignores_an_inflated_per_request_rate() -> None:
    """Bunched chunks can inflate per-req tok/s; the step comes from the wall-time rate."""
    steps = self_test.SLOWDOWN_STEPS
    assert self_test.slowdown_for(point(100_000.0, agg=200.0)) == pytest.approx(0.02 * steps)


def test_slowdown_is_given_in_simulated_seconds_on_the_simulator() -> None:
    """The simulator divides /slow_down by its speedup: the sleep is scaled back up."""
    scaled = self_test.slowdown_for(point(200.0), time_scale=5.0)
    assert scaled == pytest.approx(5 * self_test.slowdown_for(point(200.0)))


def self_test_of(measured: PointMetrics, measure: Callable[[int], PointMetrics]) -> SelfTest:
    """The self-test of ``measured`` (depth 3, no baseline, 10% tolerance); ``measure``
    gives the figures of the slowed server, then of the reset one."""
    return self_test.run_self_test(
        base_url="http://x",
        api_key=None,
        run=make_run(3, [measured]),
        point=measured,
        baseline=None,
        tolerance=0.10,
        measure=measure,
    )


def test_a_halved_rate_is_caught_and_a_restored_rate_is_reset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Slowed figures fail the floors (caught); figures back to speed after the reset pass."""
    sleeps: list[float | None] = []
    monkeypatch.setattr(self_test, "inject_slowdown", lambda url, s, key: sleeps.append(s))
    measured = point(200.0)
    answers = iter([point(100.0), point(199.0)])
    result = self_test_of(measured, lambda requests: next(answers))
    assert sleeps == [pytest.approx(self_test.slowdown_for(measured)), None]
    assert result.caught and result.reset and result.problem is None
    assert any("per-req tok/s 100.0 < floor 180.0" in m for m in result.gate_messages)


def test_an_unnoticed_slowdown_is_not_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the slowed figures stay within the tolerance, the self-test says it missed."""
    monkeypatch.setattr(self_test, "inject_slowdown", lambda url, s, key: None)
    measured = point(200.0)
    result = self_test_of(measured, lambda requests: point(195.0))
    assert not result.caught and result.gate_messages == []
    assert result.reference.startswith("this run's own C=1 point")


@pytest.mark.parametrize(("after", "expected"), [(190.0, True), (80.0, False), (None, False)])
def test_reset_is_confirmed_when_the_rate_is_nearer_the_run_than_the_slowed_rate(
    after: float | None, expected: bool
) -> None:
    """Before 200, slowed 50: back at 190 is recovered, 80 or nothing is not."""
    assert self_test.recovered(200.0, 50.0, after) is expected
