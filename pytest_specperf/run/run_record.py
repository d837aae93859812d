"""One depth's record in the run's results.json: its run, points, warm-ups, failure and end.

Every change goes through ``ResultsStore.update`` (locked, rewritten atomically), so another
process of the run (an xdist worker) and an interruption see the file whole.
"""

from __future__ import annotations

from pytest_specperf.config.settings import Settings
from pytest_specperf.gate.recommend import recommend
from pytest_specperf.results.acceptance import merge_histograms, position_accept_rates
from pytest_specperf.results.schema import (
    DepthRun,
    PointMetrics,
    RunResults,
    ServerSummary,
    Testbed,
    Warmup,
)
from pytest_specperf.results.speedup import speedups
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.results.testbed_compare import measured as measured_testbed


def known_backend(settings: Settings, summary: ServerSummary | None) -> str | None:
    """The backend a depth measures: the settings' own; with --specperf-url the simulator
    where the server says it is one (its /server_info), else None: not known. A simulator's
    figures are never judged against a GPU's baseline (gate/floors.py backends_differ)."""
    if not settings.url:
        return settings.backend
    if summary is not None and summary.sim is not None:
        return "sim"
    return None


class RunRecord:
    """The depth's DepthRun in ``store``: created on first write, kept sorted by depth."""

    def __init__(self, settings: Settings, depth: int, store: ResultsStore) -> None:
        self.settings = settings
        self.depth = depth
        self.store = store
        # The machine the depth's server runs on (server/fingerprint.py); None: a server given
        # by URL. Its measured figures are recomputed from the points at each write.
        self.testbed: Testbed | None = None

    def new_run(self, hardware: str) -> DepthRun:
        s = self.settings
        return DepthRun(
            depth=self.depth,
            profile=s.profile.name,
            backend=known_backend(s, None) or "external",
            hardware=hardware,
            workload=s.workload.key(),
            planned_concurrency=list(s.concurrency),
        )

    def run_in(self, results: RunResults, hardware: str) -> DepthRun:
        run = results.depth(self.depth)
        if run is None:
            run = self.new_run(hardware)
            results.runs.append(run)
            results.runs.sort(key=lambda r: r.depth)
        return run

    def snapshot(self, hardware: str) -> DepthRun:
        """The run as recorded now (a new, empty one if nothing was recorded yet)."""
        results = self.store.load()
        run = results.depth(self.depth) if results else None
        return run if run is not None else self.new_run(hardware)

    def server(self, summary: ServerSummary | None, hardware: str) -> None:
        """What the server reported, and the hardware key it gave."""

        def change(results: RunResults) -> None:
            run = self.run_in(results, hardware)
            run.server = summary
            run.hardware = hardware
            run.backend = known_backend(self.settings, summary) or "external"
            if self.testbed is not None:
                run.testbed = measured_testbed(self.testbed, run.points)
            results.slo = self.settings.slo

        self.store.update(change)

    def point(self, point: PointMetrics, hardware: str) -> None:
        """The point (replacing its earlier version), and every figure computed from it."""

        def change(results: RunResults) -> None:
            run = self.run_in(results, hardware)
            put_point(run, point)
            if self.testbed is not None:
                run.testbed = measured_testbed(self.testbed, run.points)
            run.accept_histogram = merge_histograms(p.accept_histogram for p in run.points)
            run.position_accept_rate = position_accept_rates(
                run.accept_histogram, self.depth or None
            )
            results.speedup = speedups(results.runs)
            refresh_recommendation(results)

        self.store.update(change)

    def warmup(self, warmup: Warmup, hardware: str) -> None:
        self.store.update(lambda results: self.run_in(results, hardware).warmups.append(warmup))

    def failed(self, message: str, point: PointMetrics | None, hardware: str) -> None:
        def change(results: RunResults) -> None:
            run = self.run_in(results, hardware)
            run.status = "failed"
            run.failure = message
            if point is not None:
                put_point(run, point)

        self.store.update(change)

    def finished(self, hardware: str) -> None:
        def change(results: RunResults) -> None:
            run = self.run_in(results, hardware)
            if run.status == "running":
                run.status = "complete"
            refresh_recommendation(results)

        self.store.update(change)


def put_point(run: DepthRun, point: PointMetrics) -> None:
    """Add the point to the run, replacing the earlier version of it (fewer samples)."""
    run.points = [p for p in run.points if p.concurrency != point.concurrency] + [point]
    run.points.sort(key=lambda p: p.concurrency)


def refresh_recommendation(results: RunResults) -> None:
    """Recomputed from every point recorded so far (a run cut short still gets one)."""
    results.recommendation = recommend(results.runs)
