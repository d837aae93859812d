"""How closely does a trace replay keep its schedule? Send lateness of the 200-request trace.

    python lab/studies/trace_send_timing.py                       # steps 1 and 3, 3 replays each
    python lab/studies/trace_send_timing.py --hogs 2 --repeats 1  # two busy-loop processes beside

Boots the simulator (the default profile, through the suite's own launch code, at
--speedup as the e2e tests run it, with --enable-metrics as a trace run starts it) at each
depth, warms it up with the trace's first requests, and replays the shipped synthetic trace
(200 requests over 14.8 s) at speed 1 with the suite's own open-loop sender
(measure/openloop.py's run_schedule, with the server's /metrics polled and the client's loop
lag sampled beside it, as measure_open_point runs it). Per replay it prints the lateness of
every send
against its scheduled time -- ``record.start - record.scheduled``, taken by the client as the
request's bytes are written to the socket -- as p50, p90, p99 and max, and how many sends were
later than 5 ms; beside it the client's event-loop lag (p99 of a 10 ms sampling timer) and the
garbage collections that ran in the client during the replay; and the lateness again without
each send's recorded run-queue wait (``send_held``: how long the OS kept the sender's thread
waiting for a CPU just before the send).

Server receipt: the simulator stamps each request when its handler has read and parsed it
(``created`` in /sim/ground_truth, on the same system-wide monotonic clock). Its lateness
against the schedule is printed too (the i-th request received matched with the i-th
scheduled): it adds the simulator's own event-loop delay, which is the server's business,
not the sender's.

--hogs N starts N processes that spin ``while True: pass`` for the replay (a loaded 2-core
machine), and stops them after it.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import httpx
from _sim import boot_sim

from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.client_monitor import ClientMonitor
from pytest_specperf.measure.openloop import run_schedule
from pytest_specperf.measure.server_load import LoadWatch
from pytest_specperf.measure.stream import StreamTarget
from pytest_specperf.measure.trace import resolve_trace_path
from pytest_specperf.measure.workload import Workload, trace_workload
from pytest_specperf.results.schema import ClientHealth, RequestRecord

LATE_S = 0.005


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(values: list[float]) -> str:
    return (
        f"p50 {_quantile(values, 0.5) * 1e3:5.2f}  p90 {_quantile(values, 0.9) * 1e3:5.2f}  "
        f"p99 {_quantile(values, 0.99) * 1e3:5.2f}  max {max(values) * 1e3:5.2f} ms"
    )


class GcWatch:
    """The collections that ran while it was installed: each one's pause and generation."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, int]] = []
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append((time.perf_counter() - self._began, info["generation"]))

    def summary(self) -> str:
        if not self.pauses:
            return "no GC"
        pause, generation = max(self.pauses)
        return f"{len(self.pauses)} GCs, longest {pause * 1e3:.2f} ms (generation {generation})"

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


class Replay(NamedTuple):
    records: list[RequestRecord]
    client: ClientHealth


async def _replay_async(url: str, offsets: list[float], workload: Workload) -> Replay:
    # What measure_open_point runs around the sender: the server's /metrics polled and the
    # client's own loop lag sampled, in the same event loop.
    async with LoadWatch(url, None), ClientMonitor() as monitor:
        records = await run_schedule(StreamTarget(url), workload, offsets, model="default")
    assert monitor.health is not None
    return Replay(records, monitor.health)


def _replay(url: str, offsets: list[float], workload: Workload) -> Replay:
    return event_loop.run(_replay_async(url, offsets, workload))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="1,3", help="speculative depths, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="replays per depth")
    parser.add_argument("--speedup", type=float, default=10.0, help="simulator speedup")
    parser.add_argument("--trace", default="synthetic", help="trace file (default: shipped)")
    parser.add_argument("--speed", type=float, default=1.0, help="trace speed")
    parser.add_argument("--hogs", type=int, default=0, help="busy-loop processes beside")
    args = parser.parse_args()

    workload = trace_workload(resolve_trace_path(args.trace), args.speed)
    offsets = list(workload.trace_offsets_s)
    print(
        f"trace {workload.trace}: {len(offsets)} requests over {offsets[-1]:.1f} s at speed "
        f"{args.speed:g}; simulator speedup {args.speedup:g}; event loop {event_loop.loop_name()}; "
        f"{args.hogs} busy-loop processes beside"
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for steps in (int(s) for s in args.steps.split(",")):
            server = boot_sim(
                steps, args.speedup, Path(tmp) / f"sim-{steps}.log", ["--enable-metrics"]
            )
            try:
                _replay(server.url, offsets[:8], workload)  # warm-up, not counted
                for repeat in range(args.repeats):
                    httpx.post(f"{server.url}/sim/reset_ground_truth", timeout=10)
                    hogs = [
                        subprocess.Popen([sys.executable, "-c", "while True: pass"])
                        for _ in range(args.hogs)
                    ]
                    try:
                        with GcWatch() as collections:
                            replay = _replay(server.url, offsets, workload)
                    finally:
                        for hog in hogs:
                            hog.kill()
                            hog.wait()
                    truth = httpx.get(f"{server.url}/sim/ground_truth", timeout=10).json()
                    records = replay.records
                    lags = [r.start - r.scheduled for r in records if r.scheduled is not None]
                    worst = max(worst, max(lags))
                    late = sum(lag > LATE_S for lag in lags)
                    client = replay.client
                    ok = sum(r.ok for r in records)
                    own = [lag - (r.send_held or 0.0) for lag, r in zip(lags, records, strict=True)]
                    print(
                        f"steps={steps} replay {repeat + 1}: {ok}/{len(records)} ok; "
                        f"send lateness {_ms(lags)}; {late} later than 5 ms; loop lag p99 "
                        f"{client.loop_lag_p99_s * 1e3:.1f} ms (max "
                        f"{client.loop_lag_max_s * 1e3:.1f}); {collections.summary()}"
                    )
                    print(
                        f"    not counting the sender's run-queue wait: {_ms(own)}; "
                        f"{sum(lag > LATE_S for lag in own)} later than 5 ms"
                    )
                    received = sorted(r["created"] for r in truth["requests"])
                    due = sorted(r.scheduled for r in records if r.scheduled is not None)
                    if len(received) == len(due):
                        receipt = [got - when for got, when in zip(received, due, strict=True)]
                        print(f"    server receipt lateness (simulator's stamp) {_ms(receipt)}")
            finally:
                server.stop()
    print(f"worst send lateness over all replays: {worst * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
