"""The end of a run, plain code: the refined points, the no-verdict lines and the depths
that judged nothing, as verdicts for results.json.

The pytest plugin calls these after teardown and turns what they say into exit statuses and
terminal lines; nothing here knows pytest.
"""

from __future__ import annotations

from pytest_specperf.config.settings import Settings
from pytest_specperf.config.table import ALLOW_NO_BASELINE_FLAG
from pytest_specperf.gate.no_verdict import (
    depths_without_verdict,
    exploratory_line,
    no_verdict_line,
    points_not_judged,
)
from pytest_specperf.results.schema import RunResults, Verdict
from pytest_specperf.run.advice import Unjudged, no_verdict_advice
from pytest_specperf.run.baselines import why_unjudged
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.refine import refine


def refine_then_stop(
    pending: list[DepthSession], settings: Settings, *, interrupted: bool, under_xdist: bool
) -> list[str]:
    """--specperf-refine: measure the boundaries on the servers kept up, then stop them all."""
    if not pending:
        if settings.refine and under_xdist:
            return ["refine: not done under xdist (each worker holds only its own depths' servers)"]
        return []
    try:
        return [] if interrupted else refine(pending)
    finally:
        for depth_session in pending:
            depth_session.close()


def no_verdict(
    settings: Settings,
    results: RunResults | None,
    gated: set[int],
    *,
    depths_too: bool = True,
) -> str | None:
    """The one line of a gate that left a depth or a point unjudged (None when every gated
    depth and each of its points has a verdict, or the run records baselines, or the user said
    it is exploratory, or A/B mode, where the depth test judges against the base side and fails
    itself when it cannot). ``depths_too``: name the depths that judged nothing (False when
    the run failed already: a depth that failed has no verdict for that reason)."""
    if settings.update_baselines or settings.allow_no_baseline or settings.ab_mode:
        return None
    unjudged = _unjudged(settings, results, gated) if depths_too else {}
    points = points_not_judged(results.runs if results else [], gated, unjudged)
    if not unjudged and not points:
        return None
    reasons = {depth: reason for depth, (reason, _) in unjudged.items()}
    found = [item for _, item in unjudged.values()]
    found += [_comparable(settings, depth, results) for depth in sorted({v.depth for v in points})]
    command = no_verdict_advice(settings, found)
    return no_verdict_line(reasons, command, ALLOW_NO_BASELINE_FLAG, [v.message for v in points])


def exploratory_no_verdict(
    settings: Settings,
    results: RunResults | None,
    gated: set[int],
    *,
    depths_too: bool = True,
) -> str | None:
    """The line of an exploratory run (--specperf-allow-no-baseline) that left a depth or a
    point unjudged: it passes, and says so (None when every gated depth and point has a
    verdict, the run is not exploratory, records baselines, or is an A/B run)."""
    if settings.update_baselines or not settings.allow_no_baseline or settings.ab_mode:
        return None
    unjudged = _unjudged(settings, results, gated) if depths_too else {}
    points = points_not_judged(results.runs if results else [], gated, unjudged)
    if not unjudged and not points:
        return None
    reasons = {depth: reason for depth, (reason, _) in unjudged.items()}
    return exploratory_line(
        reasons,
        ALLOW_NO_BASELINE_FLAG,
        settings.exploratory_run_profile,
        [v.message for v in points],
    )


def depths_not_judged(
    settings: Settings, results: RunResults | None, gated: set[int]
) -> list[Verdict]:
    """A no-baseline verdict (the depth's, concurrency None) for each gated depth that judged
    nothing, saying why, for results.json and report.md (none for a recording or an A/B run)."""
    if settings.update_baselines or settings.ab_mode:
        return []
    return [
        Verdict(
            depth=depth,
            concurrency=None,
            metric="throughput",
            outcome="no-baseline",
            message=f"steps={depth}: not judged: {reason}",
        )
        for depth, (reason, _) in sorted(_unjudged(settings, results, gated).items())
    ]


def _comparable(settings: Settings, depth: int, results: RunResults | None) -> Unjudged:
    """A depth whose baseline judged some of its points: re-recording it adds the others."""
    run = results.depth(depth) if results else None
    hardware = run.hardware if run is not None else settings.hardware or "unknown-hardware"
    _, old, _ = why_unjudged(settings, depth, hardware)
    return Unjudged(depth, hardware, old, comparable=True)


def _unjudged(
    settings: Settings, results: RunResults | None, gated: set[int]
) -> dict[int, tuple[str, Unjudged]]:
    """Each gated depth without a judged throughput verdict: why, and what was found."""
    found: dict[int, tuple[str, Unjudged]] = {}
    for depth in depths_without_verdict(results.runs if results else [], gated):
        run = results.depth(depth) if results else None
        hardware = run.hardware if run is not None else settings.hardware or "unknown-hardware"
        reason, old, not_comparable = why_unjudged(settings, depth, hardware)
        found[depth] = (reason, Unjudged(depth, hardware, old, comparable=not not_comparable))
    return found
