"""One depth's open-loop points (--specperf-request-rate, a trace workload) and its SLO rate
search: each request sent at its scheduled time (measure/openloop.py), on the depth's server.

``OpenLoopPoints`` is a collaborator of ``DepthSession`` (``session.open_loop``): it measures
on the session's current boot through the session's public ``sampling`` and ``check_alive``,
as the session's own closed-loop samples do, and records into the session's results.json.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.arrivals import (
    TRACE_LOAD,
    rate_key,
    rate_of,
    rate_offsets,
    rate_requests,
)
from pytest_specperf.measure.openloop import measure_open_point
from pytest_specperf.measure.ratesearch import next_rate, search_result
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.acceptance import position_accept_rates
from pytest_specperf.results.schema import DepthRun, PointMetrics, RateProbe, RateSearch
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.run_record import RunRecord
from pytest_specperf.run.sampling import ServerGone, Target, settle_after


def send_schedule(settings: Settings, load: str) -> list[float]:
    """The send schedule of the open-loop point ``load`` (a key of ``settings.open_loads``),
    seconds after its first send: the trace's, or the rate point's seeded one."""
    if load == TRACE_LOAD:
        return list(settings.workload.trace_offsets_s)
    rate = rate_of(load)
    if rate is None:
        raise SpecperfError(f"{load!r} is not an open-loop point of this run")
    count = rate_requests(rate, settings.rate_seconds, settings.workload.fixed_requests)
    return rate_offsets(rate, count, settings.burstiness)


class MeasuringSession(Protocol):
    """The public side of DepthSession (run/depth_session.py) that its open-loop points use,
    named here because the session module imports this one."""

    settings: Settings
    depth: int
    failure: str | None
    boot: int
    hardware: str
    store: ResultsStore
    record: RunRecord

    def sampling(self, label: str, *, warm_up_at: int) -> AbstractContextManager[Target]: ...

    def check_alive(
        self, doing: str, settle_s: float, point: PointMetrics | None = None
    ) -> None: ...


class OpenLoopPoints:
    """The open-loop points of one depth by load, those measured in full, the rate search."""

    def __init__(self, session: MeasuringSession, repeats: int) -> None:
        self.session = session
        self.repeats = repeats
        self.points: dict[str, PointMetrics] = {}
        self.complete: set[str] = set()
        self.rate_search: RateSearch | None = None

    def offsets(self, load: str) -> list[float]:
        """The send schedule of an open-loop point, seconds after its first send."""
        return send_schedule(self.session.settings, load)

    def measure(self, load: str) -> PointMetrics:
        """The open-loop point ``load`` (R samples in a row), measuring it on first use."""
        if load in self.complete:
            return self.points[load]
        session = self.session
        if session.failure is not None:
            raise ServerGone(session.failure)
        repeats = self.repeats
        for index in range(repeats):
            label = f"measuring {load}"
            if repeats > 1:
                label += f" (sample {index + 1}/{repeats})"
            point = self._sample(load, self.offsets(load), label=label)
            with interrupts.deferred():
                self.points[load] = point
                self._record(point)
        self.complete.add(load)
        return self.points[load]

    def _record(self, point: PointMetrics) -> None:
        session = self.session
        session.store.update(
            lambda results: put_rate_point(session.record.run_in(results, session.hardware), point)
        )

    def _sample(self, load: str, offsets: list[float], *, label: str) -> PointMetrics:
        """One sample of an open-loop schedule, merged into the point's earlier ones."""
        session = self.session
        s = session.settings
        with session.sampling(label, warm_up_at=min(s.concurrency)) as target:
            sample = event_loop.run(
                measure_open_point(
                    target.base_url,
                    s.workload,
                    offsets,
                    load=load,
                    model=target.model,
                    api_key=s.api_key,
                    slo=s.slo,
                )
            )
        sample.boot = session.boot
        sample.position_accept_rate = position_accept_rates(
            sample.accept_histogram, session.depth or None
        )
        earlier = self.points.get(load)
        point = merge_samples([earlier, sample]) if earlier is not None else sample
        succeeded = f"; {sample.ok}/{sample.requests} requests had succeeded"
        session.check_alive(label + succeeded, settle_after(sample))
        return point

    def search_rate(self) -> RateSearch | None:
        """The highest request rate meeting the SLOs (measure/ratesearch.py): from the rate
        points, then probes (recorded in the search, not as points); None without SLOs."""
        session = self.session
        s = session.settings
        if s.slo is None or not s.request_rates:
            return None
        if self.rate_search is not None:
            return self.rate_search
        probes = [
            _probe(self.measure(rate_key(rate, s.burstiness)), rate) for rate in s.request_rates
        ]
        searched = 0
        while True:
            rate, why = next_rate(probes, searched=searched)
            if rate is None:
                break
            rate = float(f"{rate:.3g}")
            count = rate_requests(rate, s.rate_seconds, s.workload.fixed_requests)
            label = f"searching the SLO rate: rate={rate:g} (probe {searched + 1})"
            sample = self._sample(
                f"probe:{rate_key(rate, s.burstiness)}",
                rate_offsets(rate, count, s.burstiness),
                label=label,
            )
            probes.append(_probe(sample, rate))
            searched += 1
        found = search_result(probes, why)
        self.rate_search = found
        session.store.update(
            lambda results: setattr(
                session.record.run_in(results, session.hardware), "rate_search", found
            )
        )
        return found


def with_metrics(settings: Settings) -> tuple[str, ...]:
    """The server arguments, with ``--enable-metrics`` when the run watches the server's
    running requests (SGLang serves /metrics only then; so does the simulator)."""
    args = settings.server_args
    if settings.watch_server_load and "--enable-metrics" not in args:
        return (*args, "--enable-metrics")
    return args


def _probe(point: PointMetrics, rate: float) -> RateProbe:
    """What the rate search keeps of one measured rate."""
    goodput = point.goodput
    return RateProbe(
        rate=rate,
        meets_slo=goodput is not None and goodput.meets_slo,
        attainment=goodput.attainment if goodput is not None else 0.0,
        goodput_tok_s=goodput.goodput_tok_s if goodput is not None else 0.0,
        agg_tok_s=point.agg_tok_s,
        achieved_rate=point.ok / point.wall_s if point.wall_s > 0 else 0.0,
    )


def put_rate_point(run: DepthRun, point: PointMetrics) -> None:
    """Add the open-loop point to the run, replacing its earlier version (fewer samples)."""
    run.rate_points = [p for p in run.rate_points if p.load != point.load] + [point]
    run.rate_points.sort(key=lambda p: (p.request_rate is None, rate_of(p.load or "") or 0.0))
