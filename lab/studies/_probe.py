"""A small closed-loop /generate client, used to check the simulator against its model.

Not the suite's load generator (that is pytest_specperf.measure.loadgen): this one exists so the
simulator's own tests (tests/sim/) and lab/studies/sim_*.py can drive a booted sim without
depending on other parts of the package; it is not shipped. It reads only
meta_info.completion_tokens from each chunk.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from pytest_specperf.sim.model import PointResult


def _int_after(line: bytes, key: bytes) -> int | None:
    """The integer after `"key":` (searched from the end, where meta_info sits).

    Cheaper than decoding a cumulative chunk of many kilobytes, so the client leaves the
    CPU to the server under test on small machines."""
    i = line.rfind(key)
    if i < 0:
        return None
    i += len(key)
    j = i
    while j < len(line) and 48 <= line[j] <= 57:
        j += 1
    return int(line[i:j]) if j > i else None


@dataclass
class RequestRecord:
    """One request as the client saw it (times: time.monotonic())."""

    start: float
    first: float
    last: float
    first_tokens: int
    tokens: int
    chunks: int
    verify_ct: int | None


async def one_request(
    session: aiohttp.ClientSession,
    url: str,
    max_new_tokens: int,
    prompt: str = "a b c d e f g h i j k l m n o p",
    headers: dict[str, str] | None = None,
) -> RequestRecord:
    """Stream one greedy ignore_eos /generate request."""
    body: dict[str, Any] = {
        "text": prompt,
        "sampling_params": {
            "max_new_tokens": max_new_tokens,
            "temperature": 0.0,
            "ignore_eos": True,
        },
        "stream": True,
    }
    start = time.monotonic()
    first = last = 0.0
    first_tokens = tokens = chunks = 0
    verify: int | None = None
    async with session.post(url + "/generate", json=body, headers=headers) as resp:
        resp.raise_for_status()
        async for line in resp.content:
            if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                continue
            now = time.monotonic()
            count = _int_after(line, b'"completion_tokens":')
            if count is None:
                continue
            chunks += 1
            tokens = count
            ct = _int_after(line[-1500:], b'"spec_verify_ct":')
            if ct is not None:
                verify = ct
            if chunks == 1:
                first, first_tokens = now, tokens
            last = now
    return RequestRecord(start, first, last, first_tokens, tokens, chunks, verify)


async def run_point(
    url: str,
    concurrency: int,
    num_requests: int,
    max_new_tokens: int = 1000,
    headers: dict[str, str] | None = None,
) -> tuple[PointResult, list[RequestRecord]]:
    """Closed loop: `concurrency` workers until `num_requests` are done."""
    remaining = num_requests
    records: list[RequestRecord] = []
    conn = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=600)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                records.append(await one_request(session, url, max_new_tokens, headers=headers))

        t0 = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(min(concurrency, num_requests))))
        wall = time.monotonic() - t0
    streams = [(r.tokens, r.first_tokens, r.first, r.last, r.verify_ct or 0) for r in records]
    return PointResult.of(concurrency, num_requests, wall, streams), records
