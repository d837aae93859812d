"""A/B mode: base and head booted in pairs on this runner, until gate/ab.py has a verdict.

One depth at a time. Boots alternate in a drift-cancelling order (base, head, head, base,
base, head, ...: ABBA), each a fresh server measuring every planned point R times,
interleaved (DepthSession.sweep); after each pair gate.ab.look judges the pairs so far, and
the comparison stops as soon as it is decided (or at --specperf-ab-max-pairs). Each boot
keeps its own results.json under <out>/ab/steps<D>/ (its server log beside it); no baseline
file is read or written. The cost is counted as server-up seconds (GPU-seconds with one GPU
per server).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.ab import (
    AbRun,
    AbSettings,
    BootPoint,
    Pair,
    PairPrior,
    boot_point,
    look,
)
from pytest_specperf.options import Settings
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.suite import DepthSession

Side = str  # "base" | "head"


def base_settings(settings: Settings) -> Settings:
    """The base side: head's settings with the base options in their place."""
    return dataclasses.replace(
        settings,
        python=settings.base_python or settings.python,
        server_args=settings.base_server_args,
        profile=settings.base_profile or settings.profile,
        url=settings.base_url,
        inject_slowdown_s=None,
    )


def boot_order(pair: int) -> tuple[Side, Side]:
    """ABBA: pair 0 boots base then head, pair 1 head then base, and so on, so a linear drift
    of the runner over time favours neither side."""
    return ("base", "head") if pair % 2 == 0 else ("head", "base")


# Boots and sweeps one pair's sides in the given order: each side's run, and the seconds the
# GPU was held for the pair (server-up time; with both booted together, the pair's wall time).
MeasurePair = Callable[[int, tuple[Side, Side]], tuple[dict[Side, DepthRun], float]]


# issue 38: the runner's history as a prior, looked up by the hardware key of the first boot.
PriorLookup = Callable[[str], PairPrior | None]


def run_ab(
    settings: Settings,
    depth: int,
    *,
    measure: MeasurePair | None = None,
    prior: PriorLookup | None = None,
) -> AbRun:
    """Pairs of boots until decided (default ``measure``: fresh DepthSessions, one after the
    other, or booted together with --specperf-ab-boot-together); ``prior``: the pair spread
    the runner's history shows, for the hardware the boots ran on (--specperf-history)."""
    ab_settings = AbSettings(
        alpha=settings.alpha,
        min_effect=settings.min_effect,
        max_pairs=settings.ab_max_pairs,
    )
    result = AbRun(depth=depth, settings=ab_settings)
    boot = measure or (lambda pair, order: measure_pair(settings, depth, pair, order))
    for index in range(ab_settings.max_pairs):
        order = boot_order(index)
        try:
            sides, seconds = boot(index, order)
        except SpecperfError as exc:
            result.failure = f"steps={depth} A/B: pair {index + 1}: {exc}"
            return result
        result.server_seconds += seconds
        result.boots.extend(order)
        for side in order:
            failure = sides[side].failure
            if failure is not None:
                result.failure = (
                    f"steps={depth} A/B: the {side} boot of pair {index + 1} failed: "
                    f"{failure.splitlines()[0]}"
                )
                return result
        result.head_run = sides["head"]
        pair = Pair(base=_sides(sides["base"]), head=_sides(sides["head"]))
        if not pair.concurrencies():
            result.failure = f"steps={depth} A/B: pair {index + 1} measured no point on both sides"
            return result
        result.pairs.append(pair)
        if prior is not None and index == 0:
            result.prior = prior(sides["head"].hardware)
        result.last = look(depth, result.pairs, ab_settings, result.prior)
        if result.last.outcome != "continue":
            break
    return result


def _sides(run: DepthRun) -> dict[int, BootPoint]:
    return {p.concurrency: boot_point(p) for p in run.points if p.ok > 0 and p.agg_tok_s > 0}


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


def ab_head_point(ab: AbRun, concurrency: int) -> PointMetrics | None:
    """The latest head boot's point at this concurrency (what a per-point test shows)."""
    return ab.head_run.point(concurrency) if ab.head_run is not None else None


def run_and_record_ab(session: DepthSession, prior: PriorLookup | None = None) -> AbRun:
    """The depth's comparison; the latest head boot's run becomes the depth's run in this
    run's results.json (so the report and plots show head), and the comparison's failure,
    if any, the depth's failure."""
    found = run_ab(session.settings, session.depth, prior=prior)
    head = found.head_run

    def record(results: RunResults) -> None:
        results.runs = [r for r in results.runs if r.depth != session.depth]
        results.ab = [c for c in results.ab if c.depth != session.depth]
        results.ab.append(found.comparison())
        results.ab.sort(key=lambda c: c.depth)
        if head is not None:
            results.runs.append(head)
            results.runs.sort(key=lambda r: r.depth)

    session.store.update(record)
    if found.failure is not None:
        session.fail_run(found.failure)
    return found
