"""--specperf-self-test: prove, on the server under test, that the gate catches a regression.

After a depth's points are measured (``self_test``, on the depth's running session), a known
sleep per forward pass is set through the server's own ``/slow_down`` (SGLang's, and the
simulator's), the lowest concurrency is measured again with a couple of requests, and the
gate's decision (gate/decision.py) judges it: against the depth's baseline when there is one,
else against this run's own point. Then the sleep is reset and two more requests check that
the speed came back: agg tok/s nearer the run's own than the slowed one.

The sleep is a few verify steps' measured duration (SLOWDOWN_STEPS), so the injected
regression cuts the single-request decode rate to a fraction on any deployment: far beyond
any sane tolerance or noise, yet bounded in time. The simulator scales /slow_down by its
speedup like every simulated time, so there the sleep is given in simulated seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import msgspec

from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.baselines import Baseline, baseline_from_run
from pytest_specperf.gate.decision import GateSettings, judge_depth
from pytest_specperf.gate.floors import backend_mismatch, point_input, workload_mismatch
from pytest_specperf.measure import loop as event_loop
from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults, SelfTest
from pytest_specperf.run.baselines import load_baseline_safely
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.run_record import known_backend
from pytest_specperf.server.process import inject_slowdown

SELF_TEST_REQUESTS = 2
MIN_SLOWDOWN_S = 0.001
# The sleep is this many verify steps long: the decode rate drops to 1 / (1 + this), far
# outside any tolerance and any run-to-run noise, while the slowed requests stay short.
SLOWDOWN_STEPS = 3.0


def stream_rate(point: PointMetrics) -> float | None:
    """Tokens per second of one stream over whole requests (agg tok/s / concurrency).

    Wall-time based, unlike per-request tok/s, which short streams whose chunks arrive
    bunched together can inflate many times over on a busy client.
    """
    return point.agg_tok_s / point.concurrency if point.agg_tok_s > 0 else None


def step_seconds(point: PointMetrics) -> float | None:
    """One verify step's duration at this point: tokens per step / tokens per second."""
    rate = stream_rate(point)
    if rate is None:
        return None
    return (point.accept_length or 1.0) / rate


def slowdown_for(point: PointMetrics, time_scale: float = 1.0) -> float:
    """A sleep per forward pass of SLOWDOWN_STEPS verify steps (``time_scale``: the sim's
    speedup, which divides /slow_down like every simulated time)."""
    step = step_seconds(point) or MIN_SLOWDOWN_S
    return max(MIN_SLOWDOWN_S, SLOWDOWN_STEPS * step * time_scale)


def recovered(before: float | None, slowed: float | None, after: float | None) -> bool:
    """The rate after the reset is nearer the rate before than the slowed one (ratio-wise)."""
    if not before or not after:
        return False
    if not slowed:
        return True
    return after >= math.sqrt(before * slowed)


def slowdown_regressions(
    slowed: PointMetrics, reference: Baseline, depth: int, path: Path, settings: GateSettings
) -> list[str]:
    """The gate's regression lines for the slowed point (the same decision as the tests')."""
    verdicts = judge_depth(
        depth,
        [point_input(slowed, reference)],
        settings,
        path=str(path),
        refresh_hint="(self-test: no refresh)",
    )
    return [v.message for v in verdicts if v.outcome == "regression"]


def run_self_test(
    *,
    base_url: str,
    api_key: str | None,
    run: DepthRun,
    point: PointMetrics,
    baseline: tuple[Path, Baseline] | None,
    tolerance: float,
    measure: Callable[[int], PointMetrics],
    gate_settings: GateSettings | None = None,
    time_scale: float = 1.0,
) -> SelfTest:
    """Inject, judge, reset, confirm. ``measure(requests)`` measures ``point``'s concurrency."""
    if baseline is not None and baseline[1].point(point.concurrency) is not None:
        path, reference = baseline
        against = str(path)
    else:
        path = Path("this-run")
        reference = baseline_from_run(
            run, how_recorded="self-test: this run's own points", tolerance=None
        )
        reference = msgspec.structs.replace(
            reference, tolerance=msgspec.structs.replace(reference.tolerance, throughput=tolerance)
        )
        against = f"this run's own C={point.concurrency} point (no baseline)"
    slowdown = slowdown_for(point, time_scale)
    result = SelfTest(
        slowdown_s=slowdown,
        concurrency=point.concurrency,
        reference=against,
        before_agg_tok_s=point.agg_tok_s,
        before_per_req_tok_s=point.per_req_tok_s,
    )
    try:
        inject_slowdown(base_url, slowdown, api_key)
        try:
            slowed = measure(SELF_TEST_REQUESTS)
        finally:
            inject_slowdown(base_url, None, api_key)
        result.slowed_agg_tok_s = slowed.agg_tok_s
        result.slowed_per_req_tok_s = slowed.per_req_tok_s
        result.gate_messages = slowdown_regressions(
            slowed, reference, run.depth, path, gate_settings or GateSettings()
        )
        result.caught = bool(result.gate_messages)
        after = measure(SELF_TEST_REQUESTS)
        result.after_agg_tok_s = after.agg_tok_s
        result.reset = after.ok == after.requests and recovered(
            point.agg_tok_s, slowed.agg_tok_s, after.agg_tok_s
        )
        if not result.reset:
            result.problem = (
                f"after the reset: agg tok/s {after.agg_tok_s:,.1f}, nearer the slowed "
                f"{slowed.agg_tok_s:,.1f} than the run's {point.agg_tok_s:,.1f}; "
                f"{after.ok}/{after.requests} requests succeeded"
            )
    except SpecperfError as exc:
        result.problem = str(exc)
    return result


def measure_with(
    base_url: str, workload: Workload, concurrency: int, model: str, api_key: str | None
) -> Callable[[int], PointMetrics]:
    """A ``measure(requests)`` for run_self_test: the run's workload, a fixed request count."""

    def measure(requests: int) -> PointMetrics:
        fixed = msgspec.structs.replace(workload, fixed_requests=requests, min_point_seconds=0.0)
        return event_loop.run(
            measure_point(base_url, fixed, concurrency, model=model, api_key=api_key)
        )

    return measure


def self_test(session: DepthSession) -> SelfTest:
    """Inject a known /slow_down, let the gate judge the lowest concurrency, reset it."""
    assert session.base_url is not None and session.points, "measure the points first"
    s = session.settings
    point = session.points[min(session.points)]
    path, baseline, _ = load_baseline_safely(session)
    if baseline is not None and (
        workload_mismatch(s.workload.key(), baseline) is not None
        or backend_mismatch(known_backend(s, session.summary), baseline) is not None
    ):
        baseline = None  # not comparable: the run's own point is the reference
    summary = session.summary
    model = summary.model_path if summary and summary.model_path else "default"
    result = run_self_test(
        base_url=session.base_url,
        api_key=s.api_key,
        run=session.run_snapshot(),
        point=point,
        baseline=(path, baseline) if path is not None and baseline is not None else None,
        tolerance=s.tolerance,
        measure=measure_with(session.base_url, s.workload, point.concurrency, model, s.api_key),
        gate_settings=GateSettings(alpha=s.alpha, min_effect=s.min_effect),
        time_scale=s.sim_speedup if s.backend == "sim" and s.url is None else 1.0,
    )

    def record(results: RunResults) -> None:
        session.record.run_in(results, session.hardware).self_test = result

    session.store.update(record)
    return result
