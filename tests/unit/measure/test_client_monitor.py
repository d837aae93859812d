"""measure/client_monitor.py: the load generator's CPU use and event-loop lag during a point
(what its record says is tests/unit/results/test_client_bound.py's)."""

from __future__ import annotations

import asyncio
import time

import pytest

from pytest_specperf.measure.client_monitor import ClientMonitor
from pytest_specperf.results.schema import ClientHealth


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
