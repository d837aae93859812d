"""`specperf bench`: the suite's DepthSession on a running server, without pytest.

The same path as ``pytest perf_tests --specperf-url=URL`` for one depth: every point measured
``--repeats`` times (interleaved), results.json rewritten after every sample, the gate's
throughput verdicts against a baseline file when one is given (borderline ones re-measured
on the same server unless ``--confirm off``), then report.md, the plots and the
github-action-benchmark files beside results.json.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_specperf.config.settings import Settings
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import BaselineError, UsageError
from pytest_specperf.gate import floors
from pytest_specperf.gate.baselines import load_baseline
from pytest_specperf.gate.decision import (
    GateSettings,
    Remeasured,
    judge_depth,
    points_to_confirm,
)
from pytest_specperf.results.artifacts import write_run_artifacts
from pytest_specperf.results.report import full_report
from pytest_specperf.results.schema import PointMetrics, RunResults, Verdict
from pytest_specperf.results.store import ResultsStore, git_commit
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.sampling import PointObserver, ServerDied, ServerGone
from pytest_specperf.server.process import depth_of, fetch_server_info


@dataclass(frozen=True)
class BenchOutcome:
    results: RunResults
    problems: list[str]  # why the exit status is not 0: failed requests, regressions
    notes: list[str]  # the rest the user should read: improvements, artifacts not written


def run_bench(
    settings: Settings,
    baseline: Path | None,
    *,
    say: Callable[[str], None] = print,
    observer: PointObserver | None = None,
) -> BenchOutcome:
    """Measure the server at ``settings.url``, judge it against ``baseline`` if given;
    ``observer`` sees each sample being measured (the progress the front end shows)."""
    assert settings.url is not None, "bench measures a running server"
    depth = depth_of(fetch_server_info(settings.url, settings.api_key))
    depth = CONTROL_DEPTH if depth is None else depth
    settings = replace(settings, depths=(depth,))
    store = ResultsStore(settings.out_dir, report=True, tested_commit=git_commit(Path.cwd()))
    session = DepthSession(settings, depth, store)
    session.observer = observer
    say(
        f"measuring {settings.url}: steps={depth}, C={','.join(map(str, settings.concurrency))}"
        f", {settings.repeats} sample(s) per point"
    )
    try:
        session.open()
        session.measure_all()
        verdicts = _judge(session, baseline) if baseline is not None else []
    finally:
        session.close()
    results = store.load()
    assert results is not None, "the session recorded its run"
    problems = [_point_problem(p.concurrency, p.failed, p.requests) for p in _failed(results)]
    if session.failure is not None:
        problems.insert(0, session.failure)
    problems += [v.message for v in verdicts if v.outcome in ("regression", "unjudged")]
    notes = [v.message for v in verdicts if v.outcome == "improvement"]
    results = store.update(lambda r: _ended(r, problems, session.failure))
    notes += write_run_artifacts(results, settings.out_dir)
    return BenchOutcome(results, problems, notes)


def _ended(results: RunResults, problems: list[str], failure: str | None) -> None:
    """The exit status `specperf bench` returns, and why, for report.md's verdict section
    (the depth's own failure is in its run already)."""
    results.exit_status = 1 if problems else 0
    results.exit_reasons = [problem for problem in problems if problem != failure]


def report_text(results: RunResults) -> str:
    """The terminal's tables: the same text a pytest run prints in its summary."""
    return full_report(
        results.runs, results.lossless, slo=results.slo, recommendation=results.recommendation
    )


def _judge(session: DepthSession, path: Path) -> list[Verdict]:
    """The gate's throughput verdicts of the session's points, written into results.json."""
    try:
        baseline = load_baseline(path)
    except BaselineError as exc:
        raise UsageError(f"--baseline: {exc}") from None
    if baseline is None:
        raise UsageError(f"--baseline: {path} does not exist")
    mismatch = floors.workload_mismatch(session.settings.workload.key(), baseline)
    if mismatch:
        raise UsageError(f"--baseline: {mismatch}: not comparable with {path}")
    settings = session.settings
    points = [floors.point_input(p, baseline) for p in session.points.values()]

    def remeasure(concurrencies: list[int]) -> dict[int, Remeasured]:
        merged = {}
        for concurrency in concurrencies:
            with contextlib.suppress(ServerDied, ServerGone):
                merged[concurrency] = session.remeasure(concurrency)
        return {
            c: Remeasured(floors.samples_by_metric(p), floors.boots_of(p), p.client_bound)
            for c, p in merged.items()
        }

    gate_settings = GateSettings(alpha=settings.alpha, min_effect=settings.min_effect)
    again = [] if settings.confirm == "off" else points_to_confirm(points, gate_settings)
    verdicts = judge_depth(
        session.depth,
        points,
        gate_settings,
        path=str(path),
        refresh_hint=shlex.join(
            ["specperf", "baseline", "promote", str(session.store.path), "--baselines", "DIR"]
        ),
        confirmed=remeasure(again) if again else None,
    )

    def record(results: RunResults) -> None:
        run = results.depth(session.depth)
        if run is not None:
            run.verdicts = list(verdicts)

    session.store.update(record)
    return verdicts


def _failed(results: RunResults) -> list[PointMetrics]:
    return [p for run in results.runs for p in run.points if p.failed]


def _point_problem(concurrency: int, failed: int, requests: int) -> str:
    return f"C={concurrency}: {failed}/{requests} requests failed"
