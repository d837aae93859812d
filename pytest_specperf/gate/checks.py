"""The gate's checks against a baseline, each one outcome: pass, fail (its lines) or skip (why).

Plain functions over results types and a loaded baseline: ``plugin/gate.py`` finds the
baseline, records the figures as JUnit properties and turns an ``Outcome`` into pytest's
fail or skip; the floors themselves are in ``floors.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_specperf.errors import BaselineError
from pytest_specperf.gate import floors
from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.results.acceptance import (
    accept_length_upper_bound,
    position_rate_upper_bounds,
)
from pytest_specperf.results.schema import (
    DepthRun,
    PointMetrics,
    RateSearch,
    ServerSummary,
    Slo,
    Speedup,
)


@dataclass(frozen=True)
class Outcome:
    """A check's result: failures (one line each) fail it; else a skip reason skips it."""

    failures: list[str] = field(default_factory=list)
    skip: str | None = None


PASSED = Outcome()


def _failed(message: str | None) -> Outcome:
    return Outcome(failures=[message]) if message else PASSED


def kv_capacity(summary: ServerSummary, baseline: Baseline, depth: int, path: Path) -> Outcome:
    """KV capacity has no tolerance: the floor is the baseline."""
    if baseline.kv.max_total_num_tokens is None and baseline.kv.max_running_requests is None:
        return Outcome(skip=f"baseline {path} records no KV capacity")
    return Outcome(failures=floors.kv_failures(summary, baseline, depth, path))


def accept_length(
    run: DepthRun, baseline: Baseline, depth: int, path: Path, confidence: float
) -> Outcome:
    """The run's accept length against its floor, beyond its samples' spread."""
    if baseline.accept_length is None:
        return Outcome(skip=f"baseline {path} records no accept length")
    return _failed(
        floors.accept_length_failure(
            run.accept_length,
            baseline,
            depth,
            path,
            upper=accept_length_upper_bound(run, confidence),
        )
    )


def position_acceptance(
    run: DepthRun, baseline: Baseline, depth: int, path: Path, confidence: float
) -> Outcome:
    """Each draft position's acceptance against its floor, beyond its samples' spread."""
    if not baseline.position_accept_rate:
        return Outcome(skip=f"baseline {path} records no per-position acceptance")
    return Outcome(
        failures=floors.position_accept_failures(
            run.position_accept_rate,
            baseline,
            depth,
            path,
            position_rate_upper_bounds(run, confidence),
        )
    )


def speedups(
    judged: Sequence[tuple[int, list[Speedup]]],
    baseline_at: Callable[[int], tuple[Path, Baseline | None]],
    workload_key: dict[str, object],
    run_backend: str | None = None,
) -> tuple[list[str], list[str], Baseline | None]:
    """Each judged depth's speedups against its baseline's floors: (failures, why a depth
    was not judged, the first baseline of another workload found, which a recording at this
    run's settings must not replace). ``baseline_at(depth)`` loads that depth's baseline
    (BaselineError: the file is bad, a failure); a baseline recorded on another backend than
    ``run_backend`` is a failure too (None: the run's backend is not known)."""
    failures: list[str] = []
    unjudged: list[str] = []
    incomparable: Baseline | None = None
    for depth, found in judged:
        try:
            path, baseline = baseline_at(depth)
        except BaselineError as exc:
            failures.append(str(exc))
            continue
        if baseline is None or not any(
            p.agg_speedup or p.per_req_speedup for p in baseline.points.values()
        ):
            unjudged.append(f"steps={depth}: {path} records no speedup")
            continue
        other = floors.backend_mismatch(run_backend, baseline)
        if other:
            failures.append(f"steps={depth}: {other}: not comparable ({path})")
            continue
        mismatch = floors.workload_mismatch(workload_key, baseline)
        if mismatch:
            unjudged.append(f"steps={depth}: {mismatch}: not comparable ({path})")
            incomparable = incomparable or baseline
            continue
        failures += floors.speedup_failures(found, baseline, depth, path)
    return failures, unjudged, incomparable


def goodput(point: PointMetrics, baseline: Baseline, slo: Slo, depth: int, path: Path) -> Outcome:
    """Goodput against its floor; nothing to check for a baseline of other SLOs."""
    if floors.slo_mismatch(slo, baseline) is not None:
        return PASSED
    return _failed(floors.goodput_failure(point, baseline, depth, path))


def slo_capacity(run: DepthRun, baseline: Baseline, slo: Slo, path: Path) -> Outcome:
    """The highest concurrency meeting the SLOs, against the baseline's."""
    mismatch = floors.slo_mismatch(slo, baseline)
    if mismatch is not None:
        return Outcome(skip=f"{mismatch}: not comparable; re-record {path}")
    if baseline.slo_max_concurrency is None:
        return Outcome(skip=f"baseline {path} records no concurrency meeting the SLOs")
    return _failed(floors.slo_capacity_failure(run, baseline, path))


def rate_capacity(
    search: RateSearch, baseline: Baseline, slo: Slo | None, depth: int, path: Path
) -> Outcome:
    """The highest request rate meeting the SLOs, against the baseline's under the same SLOs."""
    if baseline.slo_max_rate is None or baseline.slo != slo:
        return Outcome(skip=f"baseline {path} records no SLO rate under these SLOs")
    return _failed(floors.rate_capacity_failure(search, baseline, depth, path))
