"""The checks of one depth that look past its own points: the gate's self-test on its server,
its greedy outputs against the other depths', and its speedup over the control."""

from __future__ import annotations

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.gate.decision import GateSettings
from pytest_specperf.gate.floors import backend_mismatch, workload_mismatch
from pytest_specperf.measure.lossless import fetch_greedy_outputs, record_and_compare
from pytest_specperf.results.schema import DepthRun, OutputComparison, RunResults, SelfTest, Speedup
from pytest_specperf.results.speedup import control_run, depth_speedups
from pytest_specperf.run.baselines import load_baseline_safely
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.known_slowdown import measure_with, run_self_test
from pytest_specperf.run.run_record import known_backend


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


def compare_greedy_outputs(session: DepthSession) -> list[OutputComparison]:
    """Store this depth's greedy outputs; compare them with every depth stored before."""
    assert session.base_url is not None, "open() first"
    outputs = fetch_greedy_outputs(
        session.base_url,
        api_key=session.settings.api_key,
        timeout_s=session.settings.workload.request_timeout_s,
    )
    found: list[OutputComparison] = []

    def change(results: RunResults) -> None:
        run = session.record.run_in(results, session.hardware)
        found.extend(record_and_compare(results, run, outputs))

    session.store.update(change)
    return found


def speedups_to_judge(session: DepthSession) -> list[tuple[int, list[Speedup]]]:
    """(depth, its speedups) for every depth whose speedup is judgeable now and was not yet.

    A pair (depth, control) is judged once both swept all their planned points, by the
    first test of either that finds it so (under the results lock: exactly once).
    """
    found: list[tuple[int, list[Speedup]]] = []

    def change(results: RunResults) -> None:
        control = control_run(results.runs)
        if control is None or not _swept(control, session.plan.samples_per_point):
            return
        for run in results.runs:
            if run.depth == CONTROL_DEPTH or run.depth in results.speedup_judged:
                continue
            if run.depth != session.depth and session.depth != CONTROL_DEPTH:
                continue
            if _swept(run, session.plan.samples_per_point):
                results.speedup_judged.append(run.depth)
                found.append((run.depth, depth_speedups(run, control)))

    session.store.update(change)
    return found


def _swept(run: DepthRun, samples: int) -> bool:
    """Every planned point of the run holds at least ``samples`` samples."""
    for concurrency in run.planned_concurrency:
        point = run.point(concurrency)
        if point is None or len(point.all_samples()) < samples:
            return False
    return True
