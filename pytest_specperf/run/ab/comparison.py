"""A/B mode for one depth of a run: its comparison, recorded into the run's results.json."""

from __future__ import annotations

from functools import partial

from pytest_specperf.results.schema import PointMetrics, RunResults
from pytest_specperf.run.ab.boots import measure_pair
from pytest_specperf.run.ab.pairs import AbRun, PriorLookup, run_ab
from pytest_specperf.run.depth_session import DepthSession


def ab_head_point(ab: AbRun, concurrency: int) -> PointMetrics | None:
    """The latest head boot's point at this concurrency (what a per-point test shows)."""
    return ab.head_run.point(concurrency) if ab.head_run is not None else None


def run_and_record_ab(session: DepthSession, prior: PriorLookup | None = None) -> AbRun:
    """The depth's comparison, recorded into this run's results.json after every pair; the
    latest head boot's run becomes the depth's run (so the report and plots show head), and
    the comparison's failure (or, when no head boot measured anything, that) the depth's
    failure. Interrupted, the pairs measured so far stay recorded. ``prior``: the runner's
    pair spread by hardware key (--specperf-history)."""
    settings, depth = session.settings, session.depth
    latest: list[AbRun] = []

    def record(found: AbRun) -> None:
        latest[:] = [found]
        _record(session, found)

    measure = partial(measure_pair, settings, depth)
    try:
        found = run_ab(settings, depth, measure=measure, record=record, prior=prior)
    except KeyboardInterrupt:
        if latest and latest[0].interrupted is not None:
            session.fail_run(latest[0].interrupted)
        raise
    _record(session, found)
    failure = found.failure
    if failure is None and found.head_run is None:
        failure = f"steps={depth} A/B: nothing was measured"
    if failure is not None:
        session.fail_run(failure)
    return found


def _record(session: DepthSession, found: AbRun) -> None:
    """The comparison as it stands into this run's results.json (and report.md)."""
    comparison = found.comparison()
    head = found.head_run

    def record(results: RunResults) -> None:
        results.runs = [r for r in results.runs if r.depth != session.depth]
        results.ab = [c for c in results.ab if c.depth != session.depth]
        results.ab.append(comparison)
        results.ab.sort(key=lambda c: c.depth)
        if head is not None:
            results.runs.append(head)
            results.runs.sort(key=lambda r: r.depth)

    session.store.update(record)
