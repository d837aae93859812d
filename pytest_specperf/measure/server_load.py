"""The server's own count of its load while a point runs, from SGLang's ``/metrics``.

SGLang (with ``--enable-metrics``) serves Prometheus gauges ``sglang:num_running_reqs`` and
``sglang:num_queue_reqs`` and the counter ``sglang:num_retracted_requests_total``; the
simulator serves the same names. :class:`LoadWatch` polls them during a point and keeps the
highest running and queued counts and the retractions over the point. A server without
``/metrics`` (404) gives None figures, never a failed point.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

import httpx

from pytest_specperf.results.schema import ServerLoad

RUNNING = "sglang:num_running_reqs"
QUEUED = "sglang:num_queue_reqs"
RETRACTED = "sglang:num_retracted_requests_total"
POLL_INTERVAL_S = 0.1


def parse_metrics(text: str) -> dict[str, float]:
    """Each sample family's value summed over its label sets (several data-parallel ranks)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_part, _, rest = line.partition(" ")
        name = name_part.split("{", 1)[0]
        if "{" in name_part and "}" not in name_part:
            # Label values may hold spaces: the value follows the closing brace.
            labels_end = line.find("}")
            rest = line[labels_end + 1 :]
        try:
            value = float(rest.split()[0])
        except (IndexError, ValueError):
            continue
        found[name] = found.get(name, 0.0) + value
    return found


class LoadWatch:
    """``async with LoadWatch(base_url, api_key) as watch:`` ... ``watch.result``."""

    def __init__(
        self, base_url: str, api_key: str | None = None, interval_s: float = POLL_INTERVAL_S
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=5.0)
        self.interval_s = interval_s
        self.running_max: int | None = None
        self.queued_max: int | None = None
        self.retracted_first: float | None = None
        self.retracted_last: float | None = None
        self.polls = 0
        self.served = True
        self._task: asyncio.Task[None] | None = None
        self.result: ServerLoad | None = None

    async def poll(self) -> None:
        try:
            response = await self.client.get("/metrics")
        except httpx.HTTPError:
            return
        if response.status_code != 200:
            self.served = False
            return
        values = parse_metrics(response.text)
        self.polls += 1
        if RUNNING in values:
            self.running_max = max(self.running_max or 0, int(values[RUNNING]))
        if QUEUED in values:
            self.queued_max = max(self.queued_max or 0, int(values[QUEUED]))
        if RETRACTED in values:
            if self.retracted_first is None:
                self.retracted_first = values[RETRACTED]
            self.retracted_last = values[RETRACTED]

    async def _loop(self) -> None:
        while self.served:
            await self.poll()
            await asyncio.sleep(self.interval_s)

    async def __aenter__(self) -> LoadWatch:
        await self.poll()
        self._task = asyncio.get_running_loop().create_task(self._loop())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                # The watcher's own cancellation ends here; one of the task running the point
                # (Ctrl-C, a timeout) that arrived meanwhile goes on to the caller.
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    await self.client.aclose()
                    raise
        if self.served:
            await self.poll()
        await self.client.aclose()
        retractions = None
        if self.retracted_first is not None and self.retracted_last is not None:
            retractions = int(self.retracted_last - self.retracted_first)
        self.result = (
            ServerLoad(
                running_max=self.running_max,
                queued_max=self.queued_max,
                retractions=retractions,
                polls=self.polls,
            )
            if self.polls
            else None
        )
