"""Checks with fixed rules (success rate, KV capacity, accept length, drift) and the bridge
from measured points and baselines to gate/decision.py, which judges throughput.

Each check returns None when it passes, or one line that names the depth, the concurrency,
the metric, measured vs floor, and the baseline file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pytest_specperf.gate.baselines import (
    THROUGHPUT_METRICS,
    Baseline,
    BaselinePoint,
    metric_samples,
)
from pytest_specperf.gate.decision import (
    Comparison,
    GateSettings,
    PointInput,
    Reference,
    compare,
    compare_depth,
)
from pytest_specperf.gate.recommend import slo_capacity
from pytest_specperf.results.acceptance import SamplingBound
from pytest_specperf.results.client_bound import fell_behind
from pytest_specperf.results.formats import number, relative_change
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import (
    DepthRun,
    PointMetrics,
    RateSearch,
    ServerSummary,
    Slo,
    Speedup,
    Verdict,
)


def floor(baseline_value: float, tolerance: float) -> float:
    return baseline_value * (1.0 - tolerance)


def _below(
    label: str,
    measured: float | None,
    reference: float | None,
    tolerance: float,
    where: str,
    path: Path,
) -> str | None:
    if reference is None:
        return None
    limit = floor(reference, tolerance)
    if measured is None:
        return f"{where}: {label} was not measured; floor {limit:,.1f} [{path}]"
    if measured < limit:
        return (
            f"{where}: {label} {measured:,.1f} < floor {limit:,.1f} "
            f"(baseline {reference:,.1f} - {tolerance:.0%}) [{path}]"
        )
    return None


def samples_by_metric(point: PointMetrics) -> dict[str, list[float]]:
    """Every sample of each throughput figure of the point (one sample without repeats)."""
    return {metric: metric_samples(point, metric) for metric in THROUGHPUT_METRICS}


def boots_of(point: PointMetrics) -> int:
    """How many server boots measured the point's samples (2 after a fresh-boot confirmation)."""
    return len(point.boots())


def failure_lines(verdicts: Sequence[Verdict], point: PointMetrics | None) -> list[str]:
    """The lines a failing throughput test shows: each regression, then a note when the load
    generator fell behind while measuring the point (a slow runner is not a slow server)."""
    failures = [v.message for v in verdicts if v.outcome == "regression"]
    note = fell_behind(point.client) if point is not None and failures else None
    return [*failures, f"note: {note}"] if note else failures


SHORT_LABELS = {"agg_tok_s": "agg", "per_req_tok_s": "per-req"}


def headline(verdict: Verdict) -> str:
    """A regression in a few words, the figure included, for pytest's one-line short summary
    (`steps=3 C=1 agg 856.8 < floor 964.2 (-20.0% vs baseline)`)."""
    if verdict.measured is None or verdict.floor is None:
        return verdict.message.split(";")[0]
    if verdict.concurrency is None and verdict.load is None:
        return (
            f"steps={verdict.depth} throughput {relative_change(verdict.measured)} vs baseline "
            f"< floor {relative_change(verdict.floor)}"
        )
    label = SHORT_LABELS.get(verdict.metric, verdict.metric)
    change = (
        f" ({relative_change(verdict.measured / verdict.baseline)} vs baseline)"
        if verdict.baseline
        else ""
    )
    where = verdict.load if verdict.load is not None else f"C={verdict.concurrency}"
    return (
        f"steps={verdict.depth} {where} {label} {verdict.measured:,.1f} "
        f"< floor {verdict.floor:,.1f}{change}"
    )


def what_to_do(report: Path, record_command: str, deliberate_slowdown: str | None) -> str:
    """The last line of a failing throughput check: where the evidence is, and what to run
    when the change is intended (or that the run slowed the server on purpose)."""
    line = f"what to do: open {report} (every sample, the noise assumed, the floors)"
    if deliberate_slowdown:
        return (
            f"{line}; this run slowed the server on purpose ({deliberate_slowdown}): the "
            "gate caught the injected slowdown, drop it to measure the server as it is"
        )
    return f"{line}; if the change is intended, re-record the baseline with: {record_command}"


def _reading_exactly(
    references: Sequence[Mapping[str, Reference]], samples: int
) -> list[list[tuple[list[float], Reference]]]:
    """Each point's figures (its references by metric) as a run of ``samples`` samples reading
    exactly the references' figures."""
    return [[([ref.figure] * samples, ref) for ref in refs.values()] for refs in references]


def pooled_floor(
    references: Sequence[Mapping[str, Reference]], samples: int, settings: GateSettings
) -> Comparison | None:
    """The depth's pooled comparison for a run of ``samples`` samples a point reading exactly
    the references' figures in one fresh boot (its ``threshold`` is the floor, on the log
    scale); None where they have no calibrated noise (each point then has the fixed
    tolerance). ``references``: each point's, by metric."""
    return compare_depth(
        _reading_exactly(references, samples), alpha=settings.depth_alpha, settings=settings
    )


def _references_by_point(baseline: Baseline) -> list[dict[str, Reference]]:
    return [references_of(point, baseline) for point in baseline.points.values()]


def expected_depth_floor(
    baseline: Baseline, samples: int, settings: GateSettings
) -> Comparison | None:
    """``pooled_floor`` of a run reading exactly the baseline's figures."""
    return pooled_floor(_references_by_point(baseline), samples, settings)


def expected_floor(baseline: Baseline, samples: int, settings: GateSettings) -> str:
    """The floor a run of ``samples`` samples a point gets against ``baseline``, worked out as
    the gate works it for a run reading exactly the baseline's figures in one fresh boot: the
    depth's pooled floor and where its width comes from, else (no calibrated noise) the
    fixed tolerance each point is held to. For ``specperf baseline show``: how small a change
    a nightly against this file can catch, before any night runs."""
    pooled = expected_depth_floor(baseline, samples, settings)
    if pooled is not None:
        return (
            f"a run of {samples} samples a point reading these figures: floor "
            f"{relative_change(math.exp(-pooled.threshold))} for the depth ({pooled.noise_source})"
        )
    points = _reading_exactly(_references_by_point(baseline), samples)
    tests = sum(len(items) for items in points)
    widths = [
        compare(current, ref, alpha=settings.point_alpha(tests), settings=settings).threshold
        for items in points
        for current, ref in items
    ]
    if not widths:
        return "no throughput figures: nothing to gate"
    return (
        f"a run reading these figures: each point's floor {relative_change(math.exp(-max(widths)))}"
        " (fixed tolerance: no calibrated noise)"
    )


def point_input(
    point: PointMetrics, baseline: Baseline, runner: RunnerSpread | None = None
) -> PointInput:
    """What gate/decision.py needs of a measured point and its baseline; ``runner``: the spread
    between this runner's earlier runs (--specperf-history), None where not known."""
    reference = (
        baseline.point(point.concurrency)
        if point.load is None
        else baseline.rate_points.get(point.load)
    )
    return PointInput(
        concurrency=point.concurrency,
        samples=samples_by_metric(point),
        references={} if reference is None else references_of(reference, baseline, runner),
        client_bound=point.client_bound,
        boots=boots_of(point),
        load=point.load,
    )


def references_of(
    point: BaselinePoint, baseline: Baseline, runner: RunnerSpread | None = None
) -> dict[str, Reference]:
    """The baseline's side of each throughput figure of one of its points."""
    references: dict[str, Reference] = {}
    for metric in THROUGHPUT_METRICS:
        figure = point.figure(metric)
        if figure is None:
            continue
        references[metric] = Reference(
            figure=figure,
            samples=tuple(point.samples.get(metric, ())),
            boots=point.boots,
            noise=point.noise.get(metric),
            published=baseline.recorded_by == "published",
            tolerance=baseline.tolerance.throughput,
            runner=runner,
        )
    return references


def success_failure(point: PointMetrics, min_success_rate: float, depth: int) -> str | None:
    if point.success_rate >= min_success_rate:
        return None
    reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(point.errors.items()))
    return (
        f"steps={depth} {point.key}: {point.ok}/{point.requests} requests succeeded "
        f"({point.success_rate:.0%} < required {min_success_rate:.0%}); failures: {reasons}"
    )


def kv_failures(server: ServerSummary, baseline: Baseline, depth: int, path: Path) -> list[str]:
    """KV capacity is deterministic for a build and hardware: no tolerance."""
    failures: list[str] = []
    for label, measured, reference in (
        ("max_total_num_tokens", server.max_total_num_tokens, baseline.kv.max_total_num_tokens),
        ("max_running_requests", server.max_running_requests, baseline.kv.max_running_requests),
    ):
        if reference is None:
            continue
        if measured is None:
            failures.append(
                f"steps={depth}: server reported no {label}; baseline {reference:,} [{path}]"
            )
        elif measured < reference:
            failures.append(
                f"steps={depth}: {label} {measured:,} < baseline {reference:,} "
                f"(KV capacity lost: {reference - measured:,}) [{path}]"
            )
    return failures


def accept_length_failure(
    measured: float | None,
    baseline: Baseline,
    depth: int,
    path: Path,
    upper: SamplingBound | None = None,
) -> str | None:
    """Below the floor, unless the samples' own spread reaches it (``upper``: see
    results/acceptance.py; None judges the figure alone, as with one sample)."""
    if baseline.accept_length is None:
        return None
    miss = _short_of_floor(
        measured,
        baseline.accept_length,
        baseline.tolerance.accept_length,
        lambda v: number(v, 2),
        upper,
    )
    return None if miss is None else f"steps={depth} (run-scoped): accept length {miss} [{path}]"


def speedup_failures(
    speedups: Sequence[Speedup], baseline: Baseline, depth: int, path: Path
) -> list[str]:
    """Speedups over the control against the baseline's, with the throughput tolerance."""
    failures: list[str] = []
    tolerance = baseline.tolerance.throughput
    for item in speedups:
        reference = baseline.point(item.concurrency)
        if reference is None:
            continue
        where = f"steps={depth} C={item.concurrency}"
        for label, measured, recorded in (
            ("agg speedup over steps=0", item.agg, reference.agg_speedup),
            ("per-req speedup over steps=0", item.per_req, reference.per_req_speedup),
        ):
            if recorded is None:
                continue
            miss = _short_of_floor(measured, recorded, tolerance, lambda v: f"{v:.2f}x")
            if miss is not None:
                failures.append(f"{where}: {label} {miss} [{path}]")
    return failures


def position_accept_failures(
    rates: Sequence[float],
    baseline: Baseline,
    depth: int,
    path: Path,
    uppers: Sequence[SamplingBound | None] = (),
) -> list[str]:
    """Each draft position's acceptance rate against the baseline's (accept-length tolerance),
    each below its floor only beyond the spread of its samples (``uppers``, by position)."""
    recorded = baseline.position_accept_rate or []
    tolerance = baseline.tolerance.accept_length
    failures: list[str] = []
    for position, reference in enumerate(recorded, start=1):
        measured = rates[position - 1] if position <= len(rates) else None
        upper = uppers[position - 1] if position <= len(uppers) else None
        miss = _short_of_floor(measured, reference, tolerance, lambda v: number(v, 3), upper)
        if miss is not None:
            failures.append(
                f"steps={depth} (run-scoped): acceptance of draft position {position} {miss} "
                f"[{path}]"
            )
    return failures


def _short_of_floor(
    measured: float | None,
    recorded: float,
    tolerance: float,
    show: Callable[[float], str],
    upper: SamplingBound | None = None,
) -> str | None:
    """``<measured> < floor <f> (baseline <b> - <tolerance>)`` when below the floor, else None.

    With ``upper``, a figure below the floor passes while its samples' upper bound reaches the
    floor: the shortfall is within what the samples' own disagreement explains.
    """
    limit = floor(recorded, tolerance)
    if measured is not None and measured >= limit:
        return None
    if measured is not None and upper is not None and upper.value >= limit:
        return None
    shown = "not measured" if measured is None else show(measured)
    message = f"{shown} < floor {show(limit)} (baseline {show(recorded)} - {tolerance:.0%})"
    if measured is not None and upper is not None:
        message += (
            f", beyond the spread of its {upper.samples} samples "
            f"(upper {upper.confidence:.0%} bound {show(upper.value)})"
        )
    return message


def version_drift(server: ServerSummary | None, baseline: Baseline) -> str | None:
    if server is None or not server.version or not baseline.sglang_version:
        return None
    if server.version == baseline.sglang_version:
        return None
    return (
        f"the server runs SGLang {server.version}, the baseline for steps={baseline.depth} was "
        f"recorded with {baseline.sglang_version}: differences may come from the upgrade"
    )


# A run against a server at --specperf-url records "external" unless the server says it is
# the simulator (run/run_record.py known_backend): which backend serves it is not known, so
# it neither refuses nor is refused.
UNKNOWN_BACKENDS = frozenset({"", "external"})


def backends_differ(one: str | None, other: str | None) -> bool:
    """Both backends known and not the same: the simulator's figures say nothing about a real
    GPU's, nor the other way round. None (an old baseline file, a run at --specperf-url whose
    server does not say) or "external" is not known, and differs from nothing."""
    if not one or not other or {one, other} & UNKNOWN_BACKENDS:
        return False
    return one != other


def backend_mismatch(run_backend: str | None, baseline: Baseline) -> str | None:
    """Why figures of ``run_backend`` cannot be judged against ``baseline`` (None: they can)."""
    recorded = baseline.backend
    if not backends_differ(run_backend, recorded):
        return None
    return (
        f"the baseline for steps={baseline.depth} was recorded on backend {recorded}, "
        f"this run uses backend {run_backend}"
    )


def workload_mismatch(workload_key: dict[str, object], baseline: Baseline) -> str | None:
    """Only fields that both record are compared (a published baseline may lack some)."""
    differing = {
        name: (baseline.workload[name], value)
        for name, value in workload_key.items()
        if name in baseline.workload and baseline.workload[name] != value
    }
    if not differing:
        return None
    details = ", ".join(
        f"{name}: baseline {old!r} vs run {new!r}" for name, (old, new) in differing.items()
    )
    return f"baseline workload differs from this run's ({details})"


def slo_mismatch(slo: Slo | None, baseline: Baseline) -> str | None:
    """Why goodput cannot be judged against this baseline (None: it can)."""
    if slo is None:
        return "no --specperf-slo in this run"
    if baseline.slo is None:
        return "the baseline was recorded without --specperf-slo"
    if baseline.slo != slo:
        return f"the baseline's SLOs ({baseline.slo}) differ from this run's ({slo})"
    return None


def goodput_failure(point: PointMetrics, baseline: Baseline, depth: int, path: Path) -> str | None:
    """Goodput under the same SLOs >= the baseline's x (1 - throughput tolerance)."""
    reference = baseline.point(point.concurrency)
    if reference is None or reference.goodput_tok_s is None:
        return None
    return _below(
        "goodput tok/s",
        point.goodput.goodput_tok_s if point.goodput is not None else None,
        reference.goodput_tok_s,
        baseline.tolerance.throughput,
        f"steps={depth} C={point.concurrency}",
        path,
    )


def rate_capacity_failure(
    search: RateSearch, baseline: Baseline, depth: int, path: Path
) -> str | None:
    """The highest request rate meeting the SLOs never falls below the baseline's less the
    throughput tolerance (the search's own step is about 10%)."""
    if baseline.slo_max_rate is None:
        return None
    least = floor(baseline.slo_max_rate, baseline.tolerance.throughput)
    if search.max_rate is not None and search.max_rate >= least:
        return None
    found = "none met the SLOs" if search.max_rate is None else f"{search.max_rate:g}/s"
    probes = ", ".join(f"{p.rate:g}/s {'met' if p.meets_slo else 'missed'}" for p in search.probes)
    return (
        f"steps={depth}: highest request rate meeting the SLOs {found} < floor "
        f"{least:g}/s (baseline {baseline.slo_max_rate:g}/s - "
        f"{baseline.tolerance.throughput:.0%}) [{path}]; probes: {probes}"
    )


def slo_capacity_failure(run: DepthRun, baseline: Baseline, path: Path) -> str | None:
    """The largest concurrency meeting the SLOs never falls below the baseline's (a level of
    the sweep, not a figure: no tolerance)."""
    reference = baseline.slo_max_concurrency
    if reference is None:
        return None
    capacity = slo_capacity(run)
    measured = capacity.max_concurrency if capacity is not None else None
    if measured is not None and measured >= reference:
        return None
    shown = "none (the lowest concurrency missed them)" if measured is None else f"C={measured}"
    return (
        f"steps={run.depth}: largest concurrency meeting the SLOs {shown} < baseline "
        f"C={reference} [{path}]"
    )
