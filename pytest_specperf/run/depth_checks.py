"""The checks of one depth that look past its own points: its greedy outputs against the other
depths', and its speedup over the control. (The gate's self-test on its server is
run/self_test.py's.)"""

from __future__ import annotations

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.measure.lossless import fetch_greedy_outputs, record_and_compare
from pytest_specperf.results.schema import DepthRun, OutputComparison, RunResults, Speedup
from pytest_specperf.results.speedup import control_run, depth_speedups
from pytest_specperf.run.depth_session import DepthSession


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
