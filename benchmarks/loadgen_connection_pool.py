"""One shared httpx pool of C connections vs one single-connection client per worker.

    python benchmarks/loadgen_connection_pool.py --concurrency 64 --speedup 5 --repeats 2

Boots ONE simulator (the default profile at depth 3, through the suite's own launch code)
and, for each repeat, runs the closed-loop point both ways, one after the other, against it.
Each way first runs a warm-up at the same C through the same clients (as `measure_point`
does), so the measured requests go out on keep-alive connections. The sim's ground truth says
when each measured request reached it; the script prints, per way, how long the first C
requests took to arrive, how many separate prefill batches the sim ran, and the throughput
in simulated time.

The loadgen uses one client per worker since this comparison showed the shared pool sending
the first requests of a point late (see the docstring of `loadgen.make_client`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from pytest_specperf.measure.loadgen import make_client, run_requests
from pytest_specperf.measure.workload import Workload
from pytest_specperf.profiles import DEFAULT_PROFILE, builtin_profiles
from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.process import launch

WAYS = ("shared pool", "one client per worker")


def _shared_client(base_url: str, workload: Workload, concurrency: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base_url,
        timeout=httpx.Timeout(workload.request_timeout_s, read=workload.stall_timeout_s),
        limits=httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency),
        trust_env=False,
    )


async def _one_way(way: str, base_url: str, concurrency: int) -> float:
    """Warm-up, reset the sim's ground truth, then the measured point; returns its wall time."""
    workload = Workload()
    warmup = Workload(max_new_tokens=workload.warmup_max_new_tokens)
    requests = workload.requests_for(concurrency)
    async with contextlib.AsyncExitStack() as stack:
        clients: Sequence[httpx.AsyncClient]
        if way == "shared pool":
            clients = [
                await stack.enter_async_context(_shared_client(base_url, workload, concurrency))
            ]
        else:
            context = httpx.create_ssl_context(trust_env=False)
            clients = [
                await stack.enter_async_context(
                    make_client(base_url, workload, ssl_context=context)
                )
                for _ in range(concurrency)
            ]
        await run_requests(
            clients, warmup, concurrency=concurrency, requests=concurrency, model="default"
        )
        await clients[0].post("/sim/reset_ground_truth")
        records, wall = await run_requests(
            clients, workload, concurrency=concurrency, requests=requests, model="default"
        )
    failed = [record.error for record in records if not record.ok]
    if failed:
        raise SystemExit(f"{way}: {len(failed)} requests failed: {failed[:3]}")
    return wall


def _summary(truth: dict[str, Any], concurrency: int, wall: float, speedup: float) -> str:
    arrivals = sorted(request["created"] for request in truth["requests"])
    tokens = sum(request["completion_tokens"] for request in truth["requests"])
    spread_ms = (arrivals[min(concurrency, len(arrivals)) - 1] - arrivals[0]) * 1000
    return (
        f"first {concurrency} arrived within {spread_ms:8.1f} ms | "
        f"prefill batches {truth['steps']['prefill_count']:4d} | "
        f"{tokens / wall / speedup:8.1f} tok/s (sim time)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--speedup", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    profile = builtin_profiles()[DEFAULT_PROFILE]

    def command(port: int) -> LaunchCommand:
        return build_launch(profile, 3, backend="sim", port=port, sim_speedup=args.speedup)

    with tempfile.TemporaryDirectory(prefix="specperf-pool-") as workdir:
        server = launch(
            command,
            host="127.0.0.1",
            log_path=Path(workdir) / "sim.log",
            launch_timeout_s=60,
            api_key=None,
        )
        try:
            print(f"C={args.concurrency}, sim speedup {args.speedup:g}, steps 3, 1000 tokens")
            for repeat in range(1, args.repeats + 1):
                order = WAYS if repeat % 2 else tuple(reversed(WAYS))
                for way in order:
                    wall = asyncio.run(_one_way(way, server.url, args.concurrency))
                    truth = httpx.get(f"{server.url}/sim/ground_truth", trust_env=False).json()
                    summary = _summary(truth, args.concurrency, wall, args.speedup)
                    print(f"repeat {repeat} {way:>22}: {summary}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
