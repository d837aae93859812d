"""One point of the sweep, measured: in this process (measure/loadgen.py), or spread over
several client processes when the load calls for it (measure/procs.py), then summarized."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from pytest_specperf.measure import procs
from pytest_specperf.measure.goodput import point_goodput
from pytest_specperf.measure.loadgen import PointJob, run_local_point, wall_of
from pytest_specperf.measure.metrics import point_metrics
from pytest_specperf.measure.server_load import LoadWatch
from pytest_specperf.measure.stream import StreamTarget
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.client_bound import client_bound_reason
from pytest_specperf.results.schema import PointMetrics, RequestRecord, Slo

__all__ = ["measure_point"]


async def measure_point(
    base_url: str,
    workload: Workload,
    concurrency: int,
    *,
    model: str = "default",
    api_key: str | None = None,
    warmup: bool = False,
    slo: Slo | None = None,
    client_procs: int | None = None,
    on_request_done: Callable[[RequestRecord], None] | None = None,
    watch_load: bool = False,
) -> PointMetrics:
    """One point of the sweep; ``client_procs`` None picks the processes by load (procs.py);
    with ``slo`` the point's goodput under it.

    ``on_request_done`` is called with each measured request's record (not the warm-up's):
    as it finishes in one process; with several, when their records come back at the end.
    ``watch_load``: poll the server's running requests meanwhile (server_load.py).
    """
    target = StreamTarget(base_url, api_key)
    requests = workload.requests_for(concurrency)
    processes = procs.resolve_client_procs(client_procs, concurrency)
    job = PointJob(
        target=target,
        workload=workload,
        concurrency=concurrency,
        requests=requests,
        model=model,
        warmup=warmup,
    )
    async with contextlib.AsyncExitStack() as stack:
        watch = (
            await stack.enter_async_context(LoadWatch(base_url, api_key)) if watch_load else None
        )
        if processes == 1:
            parts = [await run_local_point(job, on_request_done=on_request_done)]
        else:
            parts = await procs.run_in_processes(job, processes=processes)
    records = [record for part in parts for record in part.records]
    if on_request_done is not None and processes > 1:
        for record in records:
            on_request_done(record)
    wall = wall_of(records)
    metrics = point_metrics(concurrency, records, wall)
    if slo is not None:
        metrics.goodput = point_goodput(records, wall, slo)
    healths = [part.health for part in parts]
    metrics.client = procs.merge_health(healths)
    metrics.client_bound = client_bound_reason(healths)
    metrics.server_load = watch.result if watch is not None else None
    return metrics
