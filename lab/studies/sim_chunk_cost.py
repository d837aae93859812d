"""Cost per streamed SSE chunk: aiohttp (web.StreamResponse) vs uvicorn+starlette.

    python lab/studies/sim_chunk_cost.py                 # every stack importable here
    python lab/studies/sim_chunk_cost.py --stacks aiohttp --chunk-bytes 4000

Each stack serves GET /stream?n=N, streaming N chunks of --chunk-bytes as fast as it can;
one aiohttp client process reads C concurrent streams. Reported: chunks/s (wall) and the
server process's CPU microseconds per chunk (psutil), which is what limits the simulator
on a small CI machine.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import aiohttp
import psutil


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_aiohttp(port: int, size: int) -> None:
    from aiohttp import web

    payload = b"data: " + b"x" * size + b"\n\n"

    async def stream(request: web.Request) -> web.StreamResponse:
        n = int(request.query["n"])
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for _ in range(n):
            await resp.write(payload)
        await resp.write_eof()
        return resp

    async def ok(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/stream", stream)
    app.router.add_get("/ok", ok)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def serve_starlette(port: int, size: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, StreamingResponse
    from starlette.routing import Route

    payload = b"data: " + b"x" * size + b"\n\n"

    async def stream(request: Request) -> StreamingResponse:
        n = int(request.query_params["n"])

        async def gen() -> AsyncIterator[bytes]:
            for _ in range(n):
                yield payload

        return StreamingResponse(gen(), media_type="text/event-stream")

    async def ok(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/stream", stream), Route("/ok", ok)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


async def client(port: int, concurrency: int, per_stream: int) -> float:
    url = f"http://127.0.0.1:{port}/stream?n={per_stream}"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one() -> int:
            got = 0
            async with session.get(url) as resp:
                async for line in resp.content:
                    got += line.startswith(b"data: ")
            return got

        t0 = time.monotonic()
        counts = await asyncio.gather(*(one() for _ in range(concurrency)))
        wall = time.monotonic() - t0
    assert sum(counts) == concurrency * per_stream
    return wall


def measure(stack: str, size: int, concurrency: int, per_stream: int) -> tuple[float, float]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            stack,
            "--port",
            str(port),
            "--chunk-bytes",
            str(size),
        ]
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        ps = psutil.Process(proc.pid)
        asyncio.run(client(port, concurrency, 50))  # warm-up
        cpu0 = sum(ps.cpu_times()[:2])
        wall = asyncio.run(client(port, concurrency, per_stream))
        cpu = sum(ps.cpu_times()[:2]) - cpu0
    finally:
        proc.terminate()
        proc.wait()
    chunks = concurrency * per_stream
    return chunks / wall, cpu / chunks * 1e6


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stacks", nargs="*", default=["aiohttp", "starlette"])
    p.add_argument("--chunk-bytes", type=int, default=4000)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--per-stream", type=int, default=2000)
    p.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.serve == "aiohttp":
        serve_aiohttp(a.port, a.chunk_bytes)
        return 0
    if a.serve == "starlette":
        serve_starlette(a.port, a.chunk_bytes)
        return 0
    print(f"chunk {a.chunk_bytes} B, {a.concurrency} streams x {a.per_stream} chunks")
    for stack in a.stacks:
        if stack == "starlette":
            try:
                import starlette  # noqa: F401
                import uvicorn  # noqa: F401
            except ImportError:
                print(f"{stack:>10}: skipped (uvicorn/starlette not installed)")
                continue
        rate, cpu_us = measure(stack, a.chunk_bytes, a.concurrency, a.per_stream)
        print(f"{stack:>10}: {rate:10.0f} chunks/s   server CPU {cpu_us:6.1f} us/chunk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
