"""A point's streams spread over several client processes, started together, merged exactly.

One asyncio process reads its streams on one core; past that the client, not the server, sets
the pace. Each worker process runs its share of the workers and requests (the same closed loop
as in one process), warms up, says it is ready, and starts its measured loop at one shared
monotonic time (system-wide on Linux). Its RequestRecords come back whole (msgpack, in a
file of a temporary folder the parent removes), so the point's metrics are computed from the
same records as in one process: wall from the earliest start to the latest end over all
processes.

Workers are started as ``python -m pytest_specperf.measure.procs`` (a fresh interpreter, like
multiprocessing's spawn), given their share on stdin and the start time once all said
"ready" on stdout: multiprocessing's spawn would re-run
the parent's __main__ (pytest, a user's script), and its blocking pipes would need a thread
in the parent's event loop; a subprocess's pipes are awaited directly.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from pytest_specperf.errors import SpecperfError
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.loadgen import LocalPoint, PointJob, run_local_point
from pytest_specperf.results.schema import ClientHealth

# Streams one client process takes before the next is started when --specperf-client-procs is
# not given (docs/explanation/load-generator.md: one process read C=64 from the reference server at
# under half a core; the ceiling per process is what limits, so more processes start early).
STREAMS_PER_PROCESS = 64
# Processes start this long after the last one is ready, so all sleep to the same instant.
START_MARGIN_S = 0.05
READY_TIMEOUT_S = 120.0


class WorkerError(SpecperfError):
    """A client process failed or died; the point cannot be counted."""


class _Spec(msgspec.Struct, frozen=True, kw_only=True):
    job: PointJob
    result_path: str  # where the worker writes its LocalPoint (msgpack)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_client_procs(requested: int | None, concurrency: int) -> int:
    """The processes a point runs on: as asked (at most one per stream), or by load.

    By load: one process per STREAMS_PER_PROCESS streams, at most half the cores (the rest is
    left to the server's own CPU work: its tokenizer, scheduler and HTTP front end).
    """
    if requested is not None:
        return max(1, min(requested, concurrency))
    wanted = math.ceil(concurrency / STREAMS_PER_PROCESS)
    return max(1, min(wanted, usable_cores() // 2))


def split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` near-equal integers that sum to it exactly."""
    share, extra = divmod(total, parts)
    return [share + (1 if index < extra else 0) for index in range(parts)]


def spread(concurrency: int, requests: int, processes: int) -> list[tuple[int, int]]:
    """(workers, requests) per process: requests in proportion to workers, summing exactly."""
    workers = split(concurrency, processes)
    counts = [requests * w // concurrency for w in workers]
    # The requests the floors left over go to the processes with the largest remainders.
    order = sorted(range(processes), key=lambda i: -(requests * workers[i] % concurrency))
    for index in order[: requests - sum(counts)]:
        counts[index] += 1
    return list(zip(workers, counts, strict=True))


def merge_health(healths: Sequence[ClientHealth]) -> ClientHealth:
    """One point's client health over its processes: CPU summed, the worst loop lag."""
    if len(healths) == 1:
        return healths[0]
    return ClientHealth(
        cpu_s=sum(h.cpu_s for h in healths),
        wall_s=max(h.wall_s for h in healths),
        loop_lag_p50_s=max(h.loop_lag_p50_s for h in healths),
        loop_lag_p99_s=max(h.loop_lag_p99_s for h in healths),
        loop_lag_max_s=max(h.loop_lag_max_s for h in healths),
        samples=sum(h.samples for h in healths),
        processes=sum(h.processes for h in healths),
        busiest_cpu_share=max(h.cpu_share_of_busiest for h in healths),
    )


def _child_env() -> dict[str, str]:
    """The parent's environment, with this package importable even from a source tree."""
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


async def run_in_processes(point: PointJob, *, processes: int) -> list[LocalPoint]:
    """The point over ``processes`` worker processes; every request comes back or it raises."""
    # A process with no requests of its own still runs when a minimum duration is set: its
    # workers keep the concurrency up for that long.
    keeps_time = point.workload.min_point_seconds > 0
    shares = spread(point.concurrency, point.requests, processes)
    shares = [share for share in shares if share[1] > 0 or keeps_time]
    children: list[asyncio.subprocess.Process] = []
    results_dir = tempfile.TemporaryDirectory(prefix="specperf-client-")
    result_paths: list[Path] = []
    first_prompt = 0
    try:
        for workers, count in shares:
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "pytest_specperf.measure.procs",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_child_env(),
            )
            spec = _Spec(
                job=msgspec.structs.replace(
                    point, concurrency=workers, requests=count, first_prompt=first_prompt
                ),
                result_path=str(Path(results_dir.name) / f"part-{len(children)}.msgpack"),
            )
            first_prompt += count
            result_paths.append(Path(spec.result_path))
            assert child.stdin is not None
            child.stdin.write(msgspec.json.encode(spec) + b"\n")
            children.append(child)
        for index, child in enumerate(children):
            assert child.stdout is not None
            try:
                async with asyncio.timeout(READY_TIMEOUT_S):
                    line = await child.stdout.readline()
            except TimeoutError:
                line = b""
            if line != b"ready\n":
                raise WorkerError(await _why_failed(index, child, "did not get ready"))
        start_at = time.monotonic() + START_MARGIN_S
        results = await asyncio.gather(
            *(child.communicate(f"{start_at!r}\n".encode()) for child in children)
        )
        parts: list[LocalPoint] = []
        for index, (child, (_out, err)) in enumerate(zip(children, results, strict=True)):
            path = result_paths[index]
            if child.returncode != 0 or not path.exists():
                tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise WorkerError(
                    f"client process {index + 1} of {len(children)} failed "
                    f"(exit {child.returncode}): {tail[0]}"
                )
            parts.append(msgspec.msgpack.decode(path.read_bytes(), type=LocalPoint))
        return parts
    finally:
        for child in children:
            if child.returncode is None:
                child.kill()
                await child.wait()
        results_dir.cleanup()


async def _why_failed(index: int, child: asyncio.subprocess.Process, what: str) -> str:
    child.kill()
    _out, err = await child.communicate()
    tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
    return f"client process {index + 1} {what} (exit {child.returncode}): {tail[0]}"


async def _child_main(spec: _Spec) -> LocalPoint:
    loop = asyncio.get_running_loop()

    async def wait_for_start() -> float:
        sys.stdout.buffer.write(b"ready\n")
        sys.stdout.buffer.flush()
        line = await loop.run_in_executor(None, sys.stdin.buffer.readline)
        if not line:
            raise SystemExit("parent went away before the start")
        return float(line)

    return await run_local_point(spec.job, wait_for_start=wait_for_start)


def _child() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    spec = msgspec.json.decode(sys.stdin.buffer.readline(), type=_Spec)
    part = event_loop.run(_child_main(spec))
    # A file, not stdout: a point's records are megabytes, and once (1 run in about 40 at
    # C=256, not reproduced since) the parent read a worker's stdout cut short with exit 0.
    written = Path(spec.result_path).with_suffix(".partial")
    written.write_bytes(msgspec.msgpack.encode(part))
    written.rename(spec.result_path)


if __name__ == "__main__":
    _child()
