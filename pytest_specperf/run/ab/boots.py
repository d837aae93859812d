"""A/B mode's boots: one pair, each side a fresh DepthSession measuring every planned point.

Each boot keeps its own results.json under <out>/ab/steps<D>/pair<N>-<side>/ (its server log
beside it); no baseline file is read or written. The cost is counted as server-up seconds
(times each server's GPUs, the GPU-seconds; the simulator has none).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor

from pytest_specperf.config.settings import BaseSide, Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.ab.pairs import Side
from pytest_specperf.run.depth_session import DepthSession


def base_settings(settings: Settings) -> Settings:
    """The base side: head's settings with the base options in their place."""
    base = settings.base or BaseSide()
    return dataclasses.replace(
        settings,
        python=base.python or settings.python,
        server_args=base.server_args,
        server_env=base.server_env,
        profile=base.profile or settings.profile,
        url=base.url,
        inject_slowdown_s=None,
        base=None,
    )


def _session(settings: Settings, depth: int, side: Side, pair: int) -> DepthSession:
    chosen = base_settings(settings) if side == "base" else settings
    out_dir = settings.out_dir / "ab" / f"steps{depth}" / f"pair{pair + 1}-{side}"
    out_dir.mkdir(parents=True, exist_ok=True)
    return DepthSession(dataclasses.replace(chosen, out_dir=out_dir), depth, ResultsStore(out_dir))


def measure_pair(
    settings: Settings, depth: int, pair: int, order: tuple[Side, Side]
) -> tuple[dict[Side, DepthRun], float]:
    """One pair: each side a fresh boot measuring every planned point R times, in ``order``.

    One after the other, the GPU is held for the sum of both servers' up time; booted
    together (--specperf-ab-boot-together), for the pair's wall time, and the second side
    is measured while the first one's server idles.
    """
    sessions = {side: _session(settings, depth, side, pair) for side in order}
    started = time.monotonic()
    runs: dict[Side, DepthRun] = {}
    try:
        if settings.ab_boot_together:
            with ThreadPoolExecutor(max_workers=2) as pool:
                booting = {side: pool.submit(sessions[side].open) for side in order}
                for side in order:
                    booting[side].exception()  # a failed boot is kept in session.failure
            for side in order:
                runs[side] = _sweep(sessions[side])
        else:
            for side in order:
                with contextlib.suppress(SpecperfError):  # kept in session.failure
                    sessions[side].open()
                runs[side] = _sweep(sessions[side])
                sessions.pop(side).close()
    finally:
        for session in sessions.values():
            session.close()
    return runs, time.monotonic() - started


def _sweep(session: DepthSession) -> DepthRun:
    if session.failure is not None:
        return session.run_snapshot()
    return session.measure_all()
