"""The verdicts of points the gate could not judge on their figures: a figure the baseline
has and the run did not measure (a failure), a point the load generator bounded (neither pass
nor fail), a point the baseline has no figures for (never silent: a gating run fails on it,
gate/coverage.py); the baseline's side of a figure (``Reference``), the metrics' labels, and
the one constructor of a point's verdict that the judged points (decision.py) share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_specperf.gate.noise import MetricNoise
from pytest_specperf.results.schema import Verdict, VerdictOutcome
from pytest_specperf.results.spread import RunnerSpread

LABELS = {
    "agg_tok_s": "agg tok/s",
    "per_req_tok_s": "per-req tok/s",
    "accept_length": "accept length",
    "ttft_s": "TTFT s",
    "itl_s": "ITL s",
}


@dataclass(frozen=True)
class Reference:
    """The baseline's side of one figure of one point."""

    figure: float
    samples: Sequence[float] = ()
    boots: int = 1
    noise: MetricNoise | None = None
    published: bool = False
    tolerance: float = 0.10
    # The spread between this runner's earlier runs (--specperf-history), None: not known.
    runner: RunnerSpread | None = None


def where(depth: int, concurrency: int | None, load: str | None = None) -> str:
    """``steps=3 C=16``, ``steps=3 rate=4`` (an open-loop point) or ``steps=3`` (the depth)."""
    if load is not None:
        return f"steps={depth} {load}"
    return f"steps={depth} C={concurrency}" if concurrency is not None else f"steps={depth}"


def point_verdict(
    depth: int,
    concurrency: int | None,
    load: str | None,
    metric: str,
    outcome: VerdictOutcome,
    message: str,
    **figures: Any,
) -> Verdict:
    """The verdict of one point's ``metric``; an open-loop point (``load``) has no concurrency."""
    return Verdict(
        depth=depth,
        concurrency=None if load is not None else concurrency,
        load=load,
        metric=metric,
        outcome=outcome,
        message=message,
        **figures,
    )


def not_measured(
    depth: int, concurrency: int, metric: str, ref: Reference, path: str, load: str | None = None
) -> Verdict:
    """A figure the baseline has and this run did not measure: a failure, not a pass."""
    message = (
        f"{where(depth, concurrency, load)}: {LABELS.get(metric, metric)} was not measured; "
        f"baseline {ref.figure:,.1f} [{path}]"
    )
    return point_verdict(
        depth, concurrency, load, metric, "regression", message, baseline=ref.figure
    )


def no_baseline(depth: int, concurrency: int, path: str, load: str | None = None) -> Verdict:
    """A measured point the baseline has no figures for: not judged, and said so (the run's
    end names it; a gating run fails on it)."""
    message = f"{where(depth, concurrency, load)}: not judged: no baseline point [{path}]"
    return point_verdict(depth, concurrency, load, "throughput", "no-baseline", message)


CLIENT_BOUND_ADVICE = (
    "rerun with more client processes (--specperf-client-procs N), on a less busy client "
    "machine, or at a lower concurrency"
)


def unjudged(
    depth: int, concurrency: int, metric: str, reason: str, load: str | None = None
) -> Verdict:
    """A point the load generator bounded: its figures say nothing about the server, so it
    neither passes nor fails; the message says why and what to do."""
    message = (
        f"{where(depth, concurrency, load)}: not judged (neither pass nor fail): the load "
        f"generator was the bottleneck, not the server ({reason}); {CLIENT_BOUND_ADVICE}"
    )
    return point_verdict(depth, concurrency, load, metric, "unjudged", message)
