"""measure/client_health.py and results/client_health.py: did the load generator keep up
during a point, and what its record says."""

from __future__ import annotations

import asyncio
import time

import pytest

from pytest_specperf.measure.client_health import ClientMonitor
from pytest_specperf.results.client_health import (
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


def monitored(work: float, *, block: bool) -> ClientHealth:
    async def main() -> ClientHealth:
        async with ClientMonitor(interval_s=0.005) as monitor:
            await asyncio.sleep(0.05)  # let the sampler take a few samples first
            if block:
                time.sleep(work)  # the loop can run nothing else meanwhile
            else:
                await asyncio.sleep(work)
        assert monitor.health is not None
        return monitor.health

    return asyncio.run(main())


def test_blocked_loop_shows_as_lag() -> None:
    """A loop blocked for 0.3 s wakes the sampler at least about that late."""
    result = monitored(0.3, block=True)
    assert result.loop_lag_max_s >= 0.25
    assert result.wall_s >= 0.35
    assert result.cpu_s < result.wall_s - 0.25  # blocked in sleep: no CPU spent meanwhile


def test_idle_loop_takes_samples_at_its_interval() -> None:
    """Waiting without blocking, the sampler runs many times over the wall time."""
    result = monitored(0.3, block=False)
    assert result.samples >= 10
    assert result.wall_s >= 0.35


def busy_from_the_start(spin_s: float) -> tuple[ClientHealth, float]:
    """A point that keeps the loop busy from its first instant; also the CPU it measured."""

    async def main() -> tuple[ClientHealth, float]:
        async with ClientMonitor() as monitor:
            cpu_start = time.process_time()
            deadline = time.monotonic() + spin_s
            while time.monotonic() < deadline:
                pass
            spent = time.process_time() - cpu_start
        assert monitor.health is not None
        return monitor.health, spent

    return asyncio.run(main())


def test_busy_client_counts_the_cpu_time_spent_inside_the_point() -> None:
    """The monitor's CPU figure covers all the CPU the point's own work used."""
    result, spent = busy_from_the_start(0.1)
    assert spent > 0.0
    assert result.cpu_s >= spent


def test_loop_busy_before_the_first_sample_reports_a_lag_within_the_point() -> None:
    """A sampler that never ran still reports a lag measured from the point's start."""
    result, _ = busy_from_the_start(0.1)
    assert result.samples == 1
    assert 0.0 < result.loop_lag_max_s <= result.wall_s


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


def test_a_point_cancelled_while_leaving_the_monitor_stays_cancelled() -> None:
    """A Ctrl-C that cancels the point while the monitor stops its sampler is not swallowed
    (it was: the point returned normally and the interrupted run measured on)."""

    async def point() -> str:
        async with ClientMonitor():
            pass
        return "finished"

    async def main() -> None:
        task = asyncio.ensure_future(point())
        await asyncio.sleep(0)  # the point now waits for its sampler to stop
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
