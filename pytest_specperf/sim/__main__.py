"""`python -m pytest_specperf.sim`: boot the simulated SGLang server."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Sequence

from aiohttp import web

from pytest_specperf.sim.args import PROG, UsageError, parse_args
from pytest_specperf.sim.config import SimConfig
from pytest_specperf.sim.routes import build_app
from pytest_specperf.sim.scheduler import Scheduler
from pytest_specperf.sim.state import SimState

# Seconds a stop waits for requests in flight before it cuts them: none can finish once the
# scheduler has stopped, and aiohttp's default (60 s) held the exit until the suite's SIGKILL.
# Not 0: aiohttp reads a timeout of 0 as none.
SHUTDOWN_GRACE_S = 0.1


def _log(msg: str) -> None:
    print(f"[sim] {msg}", file=sys.stderr, flush=True)


async def serve(config: SimConfig) -> None:
    """Run until SIGTERM/SIGINT."""
    scheduler = Scheduler(config)
    state = SimState(config=config, scheduler=scheduler, started_wall=time.time())
    app = build_app(state)
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_GRACE_S
    )
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port, backlog=2048, reuse_address=True)
    await site.start()
    scheduler.start()
    _log(
        f"listening on http://{config.host}:{config.port} profile={config.profile.name} "
        f"algorithm={config.algorithm} chain={config.chain} "
        f"max_running_requests={config.max_running_requests} "
        f"max_total_num_tokens={config.max_total_num_tokens} speedup={config.speedup}"
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if config.hang_at_boot:
        _log("--sim-hang-at-boot: never becoming healthy")
    else:
        if config.boot_delay > 0:
            await asyncio.wait(
                [loop.create_task(stop.wait())], timeout=config.boot_delay / config.speedup
            )
        state.ready = True
        _log("The server is fired up and ready to roll!")
    await stop.wait()
    in_flight = len(scheduler.running) + len(scheduler.waiting)
    # One line for every request the stop cuts, however many: each ends quietly (routes.py).
    _log(f"shutting down: {in_flight} requests in flight cut" if in_flight else "shutting down")
    await scheduler.stop()
    await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr, flush=True)
        return 2
    for w in config.warnings:
        _log(f"WARNING: {w}")
    try:
        asyncio.run(serve(config))
    except OSError as e:
        print(
            f"{PROG}: error: cannot listen on {config.host}:{config.port}: {e}",
            file=sys.stderr,
            flush=True,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
