"""Did the load generator keep up? Its CPU use and event-loop lag while a point is measured.

A closed-loop client that is short of CPU sends its next request late and reads its streams
late, so the server looks slower than it is. Streaming C=64 from the simulator at speedup 5,
the client alone used 0.6-0.7 of a core on a 2-core machine
(docs/runs/2026-11-30-bench-vs-sglang/README.md): other work on the machine can push it
over. Every point records how its client fared; a point whose client fell behind says so
beside its figures and in its floor failure, so a red build on a noisy runner is not taken
for a server regression.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from types import TracebackType

from pytest_specperf.measure.metrics import percentile
from pytest_specperf.results.schema import ClientHealth

SAMPLE_INTERVAL_S = 0.01
# An event loop that wakes 50 ms late at the 99th percentile is reading its streams late.
LOOP_LAG_P99_LIMIT_S = 0.05
# One asyncio thread cannot use more than one core; near it, the client is the bottleneck.
CPU_SHARE_LIMIT = 0.9


class ClientMonitor:
    """Async context manager: samples the event loop's lateness and the process CPU time.

    A background task sleeps SAMPLE_INTERVAL_S at a time and records how much later than asked
    it woke up; the lateness is the time the loop spent on other work before it could run it.
    """

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.health: ClientHealth | None = None
        self._lags: list[float] = []
        self._task: asyncio.Task[None] | None = None
        self._cpu_start = 0.0
        self._wall_start = 0.0
        self._asked = 0.0

    async def _sample(self) -> None:
        while True:
            self._asked = time.monotonic()
            await asyncio.sleep(self.interval_s)
            self._lags.append(max(0.0, time.monotonic() - self._asked - self.interval_s))

    async def __aenter__(self) -> ClientMonitor:
        self._cpu_start = time.process_time()
        self._wall_start = time.monotonic()
        # The sampler's first wake-up is due one interval from now; until it runs, lateness is
        # measured from here (not from 0, which would report the monotonic clock as lag).
        self._asked = self._wall_start
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._task is not None
        # A wake-up already overdue when the point ends was delayed by the point's own work.
        overdue = time.monotonic() - self._asked - self.interval_s
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            # The sampler's own cancellation ends here; the point's, if it was cancelled
            # meanwhile (Ctrl-C), goes on: swallowing it let an interrupted run measure on.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
        if overdue > 0:
            self._lags.append(overdue)
        lags = sorted(self._lags)
        self.health = ClientHealth(
            cpu_s=time.process_time() - self._cpu_start,
            wall_s=time.monotonic() - self._wall_start,
            loop_lag_p50_s=percentile(lags, 0.5) if lags else 0.0,
            loop_lag_p99_s=percentile(lags, 0.99) if lags else 0.0,
            loop_lag_max_s=lags[-1] if lags else 0.0,
            samples=len(lags),
        )


def _saturated(health: ClientHealth) -> bool:
    return (
        health.loop_lag_p99_s >= LOOP_LAG_P99_LIMIT_S
        or health.cpu_share_of_busiest >= CPU_SHARE_LIMIT
    )


def _describe(health: ClientHealth) -> str:
    lag_ms = health.loop_lag_p99_s * 1000
    cpu = f"CPU {health.cpu_share_of_busiest:.0%} of one core"
    if health.processes > 1:
        cpu += f" in its busiest of {health.processes} processes"
    return f"event-loop lag p99 {lag_ms:.0f} ms, {cpu}"


def fell_behind(health: ClientHealth | None) -> str | None:
    """One line when the client was short of CPU during the point, else None."""
    if health is None or not _saturated(health):
        return None
    return (
        f"the load generator fell behind ({_describe(health)}): the server may be faster than "
        "these figures; give the client more CPU or lower the concurrency"
    )


def client_bound_reason(healths: Sequence[ClientHealth]) -> str | None:
    """Why the client, not the server, bounded a point (any of its processes saturated).

    Limits: event-loop lag p99 >= LOOP_LAG_P99_LIMIT_S or CPU >= CPU_SHARE_LIMIT of a core in
    one process. The answer is what was seen; the gate, which will not judge such a point,
    says what to do (gate/decision.py).
    """
    saturated = [h for h in healths if _saturated(h)]
    if not saturated:
        return None
    worst = max(saturated, key=lambda h: (h.cpu_share_of_busiest, h.loop_lag_p99_s))
    if len(healths) > 1:
        where = f"{len(saturated)} of {len(healths)} client processes"
    else:
        where = "its one client process"
    return (
        f"load generator saturated in {where} ({_describe(worst)}; "
        f"limits {LOOP_LAG_P99_LIMIT_S * 1000:.0f} ms, {CPU_SHARE_LIMIT:.0%})"
    )
