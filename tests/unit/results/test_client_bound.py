"""results/client_bound.py: what a point's client record says: did the load generator fall
behind, did it bound the point."""

from __future__ import annotations

import pytest

from pytest_specperf.results.client_bound import (
    CPU_SHARE_LIMIT,
    LOOP_LAG_P99_LIMIT_S,
    client_bound_reason,
    fell_behind,
)
from pytest_specperf.results.schema import ClientHealth


def health(*, lag_p99_s: float = 0.001, cpu_s: float = 1.0, wall_s: float = 10.0) -> ClientHealth:
    return ClientHealth(
        cpu_s=cpu_s,
        wall_s=wall_s,
        loop_lag_p50_s=0.0005,
        loop_lag_p99_s=lag_p99_s,
        loop_lag_max_s=max(lag_p99_s, 0.002),
        samples=1000,
    )


def test_healthy_client_gives_no_note() -> None:
    assert fell_behind(health()) is None
    assert fell_behind(None) is None


def test_lagging_loop_gives_a_note_with_its_lag() -> None:
    note = fell_behind(health(lag_p99_s=LOOP_LAG_P99_LIMIT_S * 2))
    assert note is not None and "fell behind" in note and "lag p99 100 ms" in note


def test_client_at_one_core_gives_a_note_with_its_cpu_share() -> None:
    note = fell_behind(health(cpu_s=CPU_SHARE_LIMIT * 10, wall_s=10.0))
    assert note is not None and "CPU 90% of one core" in note


@pytest.mark.parametrize("wall_s", [0.0, -1.0])
def test_cpu_share_of_no_wall_time_is_zero(wall_s: float) -> None:
    assert health(wall_s=wall_s).cpu_share == 0.0


def test_busiest_of_several_processes_decides_the_note() -> None:
    """With several client processes, one saturated process is enough for the note."""
    merged = ClientHealth(
        cpu_s=2.0, wall_s=2.0, loop_lag_p50_s=0.0, loop_lag_p99_s=0.001, loop_lag_max_s=0.002,
        samples=400, processes=4, busiest_cpu_share=0.95,
    )  # fmt: skip
    note = fell_behind(merged)
    assert note is not None and "busiest of 4 processes" in note


def test_unsaturated_processes_are_not_client_bound() -> None:
    assert client_bound_reason([health(), health(cpu_s=5.0)]) is None


def test_one_saturated_process_makes_the_point_client_bound() -> None:
    """The reason names how many processes saturated (the gate adds what to do)."""
    reason = client_bound_reason([health(), health(cpu_s=9.5)])
    assert reason is not None
    assert reason.startswith("load generator saturated in 1 of 2 client processes")


def test_lagging_single_process_is_client_bound() -> None:
    reason = client_bound_reason([health(lag_p99_s=LOOP_LAG_P99_LIMIT_S)])
    assert reason is not None and "lag p99 50 ms" in reason
