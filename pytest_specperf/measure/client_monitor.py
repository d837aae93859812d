"""Did the load generator keep up? Its CPU use and event-loop lag while a point is measured.

A closed-loop client that is short of CPU sends its next request late and reads its streams
late, so the server looks slower than it is. Streaming C=64 from the simulator at speedup 5,
the client alone used 0.6-0.7 of a core on a 2-core machine
(docs/runs/2026-11-30-bench-vs-sglang/README.md): other work on the machine can push it
over. Every point records how its client fared; a point whose client fell behind says so
beside its figures and in its floor failure, so a red build on a noisy runner is not taken
for a server regression. What a point's record says (fell behind, bounded the point) is
results/client_bound.py's to judge.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType

from pytest_specperf.measure.metrics import percentile
from pytest_specperf.results.schema import ClientHealth

SAMPLE_INTERVAL_S = 0.01


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
