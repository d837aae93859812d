"""Repeated measurements of one point: the order of a repeated sweep, and R samples -> one point.

With ``--specperf-repeats R`` every point is measured R times, the concurrencies interleaved
(1, 4, 16, 1, 4, 16, ...) so that a slow drift of the server (warming caches, a neighbour on
the host) spreads over every point instead of landing on one. The point then reports the
median of its samples, with a confidence interval from ``stats.summarize``, and keeps
every sample (``PointMetrics.samples``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import msgspec

from pytest_specperf.measure.goodput import merge_goodput
from pytest_specperf.results.acceptance import merge_histograms
from pytest_specperf.results.schema import (
    Bound,
    DepthRun,
    Interval,
    Percentiles,
    PointMetrics,
    ServerLoad,
)

# (samples) -> (median, interval or None): stats.summarize's signature.
Summarize = Callable[[Sequence[float]], tuple[float, Interval | None]]
# The figures a point reports as a median of its samples, with an interval.
SUMMARIZED_METRICS = ("agg_tok_s", "per_req_tok_s")


def interleaved(concurrency: Sequence[int], rounds: int) -> Iterator[tuple[int, int]]:
    """(round, concurrency) in sweep order: every level once per round, rounds one after another."""
    for round_index in range(rounds):
        for level in concurrency:
            yield round_index, level


def _default_summarize() -> Summarize:
    from pytest_specperf.results.stats import summarize

    return summarize


def _median_percentiles(items: Sequence[Percentiles | None]) -> Percentiles | None:
    present = [item for item in items if item is not None]
    if not present:
        return None
    return Percentiles(
        p50=statistics.median(p.p50 for p in present),
        p90=statistics.median(p.p90 for p in present),
        p99=statistics.median(p.p99 for p in present),
        mean=statistics.median(p.mean for p in present),
    )


def _pooled_accept_length(samples: Sequence[PointMetrics]) -> float | None:
    """Verified tokens over verify steps across the samples (each sample: its own ratio)."""
    verify = sum(s.spec_verify_ct for s in samples if s.accept_length is not None)
    if verify == 0:
        return None
    verified = sum(s.accept_length * s.spec_verify_ct for s in samples if s.accept_length)
    return verified / verify


def _median_position_rates(samples: Sequence[PointMetrics]) -> list[float]:
    """Position by position, the median acceptance rate of the samples that measured it."""
    measured = [s.position_accept_rate for s in samples if s.position_accept_rate]
    width = max((len(rates) for rates in measured), default=0)
    return [
        statistics.median(rates[i] for rates in measured if i < len(rates)) for i in range(width)
    ]


def _flatten(points: Sequence[PointMetrics]) -> list[PointMetrics]:
    """The single samples behind points that may themselves be merged."""
    flat: list[PointMetrics] = []
    for point in points:
        flat.extend(point.all_samples())
    return flat


def _client_bound(samples: Sequence[PointMetrics]) -> str | None:
    """The first client-bound sample's reason, saying which sample it was."""
    for index, sample in enumerate(samples):
        if sample.client_bound:
            return f"sample {index + 1} of {len(samples)}: {sample.client_bound}"
    return None


def merge_samples(
    points: Sequence[PointMetrics], summarize: Summarize | None = None
) -> PointMetrics:
    """One point from its samples (or from earlier merged points and new samples).

    Throughput figures and latency percentiles are the medians of the samples; request,
    token and verify counts (and the acceptance histograms) are summed, so the success rate
    and the accept length cover every request sent; each draft position's acceptance rate is
    the median of the samples' rates. The client health shown is the sample whose event loop
    lagged most (a client that fell behind once must not be hidden by the median); a point
    is ``client_bound`` when any sample was.
    """
    samples = _flatten(points)
    if not samples:
        raise ValueError("merge_samples needs at least one sample")
    loads = {sample.load for sample in samples}
    if len(loads) != 1:
        raise ValueError(f"samples of different loads cannot merge: {sorted(map(str, loads))}")
    # An open-loop point's concurrency is what its client saw in flight: it varies by sample.
    concurrency = {sample.concurrency for sample in samples if sample.load is None}
    if len(concurrency) > 1:
        raise ValueError(f"samples of different concurrencies cannot merge: {sorted(concurrency)}")
    if len(samples) == 1:
        return samples[0]
    summarize = summarize or _default_summarize()
    errors: Counter[str] = Counter()
    for sample in samples:
        errors.update(sample.errors)
    intervals: dict[str, Interval] = {}
    medians: dict[str, float | None] = {}
    for metric in SUMMARIZED_METRICS:
        values = [float(v) for s in samples if (v := getattr(s, metric)) is not None]
        if not values:
            medians[metric] = None
            continue
        median, interval = summarize(values)
        medians[metric] = median
        if interval is not None:
            intervals[metric] = interval
    clients = [sample.client for sample in samples if sample.client is not None]
    truth = list(dict.fromkeys(p for sample in samples for p in sample.truth_problems))
    agg = medians["agg_tok_s"]
    goodput = [sample.goodput for sample in samples if sample.goodput is not None]
    cpus = [sample.server_cpu for sample in samples if sample.server_cpu is not None]
    retractions = [s.retractions for s in samples if s.retractions is not None]
    cached = [s.cached_tokens for s in samples if s.cached_tokens is not None]
    loads_seen = [s.server_load for s in samples if s.server_load is not None]
    gpus = [sample.gpu for sample in samples if sample.gpu is not None]
    return PointMetrics(
        concurrency=max(sample.concurrency for sample in samples),
        requests=sum(sample.requests for sample in samples),
        ok=sum(sample.ok for sample in samples),
        failed=sum(sample.failed for sample in samples),
        errors=dict(sorted(errors.items())),
        tokens=sum(sample.tokens for sample in samples),
        wall_s=sum(sample.wall_s for sample in samples),
        agg_tok_s=agg if agg is not None else 0.0,
        per_req_tok_s=medians["per_req_tok_s"],
        ttft_s=_median_percentiles([sample.ttft_s for sample in samples]),
        itl_s=_median_percentiles([sample.itl_s for sample in samples]),
        tpot_s=_median_percentiles([sample.tpot_s for sample in samples]),
        e2e_s=_median_percentiles([sample.e2e_s for sample in samples]),
        accept_length=_pooled_accept_length(samples),
        spec_verify_ct=sum(sample.spec_verify_ct for sample in samples),
        chunks=sum(sample.chunks for sample in samples),
        client=max(clients, key=lambda health: health.loop_lag_p99_s) if clients else None,
        intervals=intervals,
        samples=samples,
        client_bound=_client_bound(samples),
        truth_problems=truth,
        accept_histogram=merge_histograms(sample.accept_histogram for sample in samples),
        position_accept_rate=_median_position_rates(samples),
        goodput=merge_goodput(goodput) if goodput else None,
        refined=any(sample.refined for sample in samples),
        server_cpu=min(cpus, key=lambda cpu: cpu.work_share) if cpus else None,
        load=samples[0].load,
        request_rate=samples[0].request_rate,
        send_lag_s=_median_percentiles([sample.send_lag_s for sample in samples]),
        retractions=sum(retractions) if retractions else None,
        cached_tokens=sum(cached) if cached else None,
        server_load=_busiest_load(loads_seen),
        gpu=min(gpus, key=lambda gpu: gpu.busy) if gpus else None,
        bound=_merged_bound(samples),
    )


def _busiest_load(loads: Sequence[ServerLoad]) -> ServerLoad | None:
    """Over samples: the most running and queued requests seen, the retractions summed."""
    if not loads:
        return None
    running = [load.running_max for load in loads if load.running_max is not None]
    queued = [load.queued_max for load in loads if load.queued_max is not None]
    retracted = [load.retractions for load in loads if load.retractions is not None]
    return ServerLoad(
        running_max=max(running) if running else None,
        queued_max=max(queued) if queued else None,
        retractions=sum(retracted) if retracted else None,
        polls=sum(load.polls for load in loads),
    )


def _merged_bound(samples: Sequence[PointMetrics]) -> Bound | None:
    """The samples' bound when they agree, mixed when they differ, None if one was not read."""
    bounds = {sample.bound for sample in samples}
    if None in bounds:
        return None
    return bounds.pop() if len(bounds) == 1 else "mixed"


def split_by_boot(run: DepthRun, summarize: Summarize | None = None) -> list[DepthRun]:
    """The run as one run per server boot (calibration across boots), each point re-merged
    from that boot's samples; a run of one boot comes back as itself."""
    boots = sorted({boot for point in run.points for boot in point.boots()})
    if len(boots) <= 1:
        return [run]

    def of_boot(points: Sequence[PointMetrics], boot: int) -> list[PointMetrics]:
        found = []
        for point in points:
            mine = [sample for sample in point.all_samples() if sample.boot == boot]
            if mine:
                found.append(merge_samples(mine, summarize))
        return found

    return [
        msgspec.structs.replace(
            run, points=of_boot(run.points, boot), rate_points=of_boot(run.rate_points, boot)
        )
        for boot in boots
    ]
