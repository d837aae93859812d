"""`specperf bench`: the suite's DepthSession on a running server, without pytest.

The same path as ``pytest perf_tests --specperf-url=URL`` for one depth: every point measured
``--repeats`` times (interleaved), results.json rewritten after every sample, the gate's
throughput verdicts against a baseline file when one is given (borderline ones re-measured
on the same server unless ``--confirm off``), then report.md, the plots and the
github-action-benchmark files beside results.json.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_specperf.config.settings import Settings
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import BaselineError, BaselineMismatch, UsageError
from pytest_specperf.gate import floors
from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.gate.decision import (
    GateSettings,
    Remeasured,
    judge_depth,
    points_to_confirm,
)
from pytest_specperf.gate.no_verdict import baseline_mismatches
from pytest_specperf.results.artifacts import write_run_artifacts
from pytest_specperf.results.report import full_report
from pytest_specperf.results.schema import PointMetrics, RunResults, Verdict
from pytest_specperf.results.store import ResultsStore, git_commit
from pytest_specperf.run.advice import promote_command
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.run_record import known_backend
from pytest_specperf.run.sampling import PointObserver, ServerDied, ServerGone
from pytest_specperf.server.process import depth_of, fetch_server_info, summarize_server_info


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
    """Measure the server at ``settings.url``, judge it against ``baseline`` if given (a
    baseline that cannot judge the server is refused before anything is measured);
    ``observer`` sees each sample being measured (the progress the front end shows)."""
    url = settings.url
    assert url is not None, "bench measures a running server"
    info = fetch_server_info(url, settings.api_key)
    depth = depth_of(info)
    depth = CONTROL_DEPTH if depth is None else depth
    settings = replace(settings, depths=(depth,))
    backend = known_backend(settings, summarize_server_info(url, info))
    reference = (
        comparable_baseline(settings, depth, backend, baseline) if baseline is not None else None
    )
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
        verdicts = _judge(session, *reference) if reference is not None else []
    finally:
        session.close()
    results = store.load()
    assert results is not None, "the session recorded its run"
    problems = [_point_problem(p.concurrency, p.failed, p.requests) for p in _failed(results)]
    if session.failure is not None:
        problems.insert(0, session.failure)
    problems += [v.message for v in verdicts if v.outcome in ("regression", "unjudged")]
    notes = [v.message for v in verdicts if v.outcome == "improvement"]
    not_judged = [v.message for v in verdicts if v.outcome == "no-baseline"]
    (notes if settings.allow_no_baseline else problems).extend(not_judged)
    results = store.update(lambda r: _ended(r, problems, session.failure))
    notes += write_run_artifacts(results, settings.out_dir, plots=not settings.no_plots)
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


def comparable_baseline(
    settings: Settings, depth: int, backend: str | None, path: Path
) -> tuple[Path, Baseline]:
    """The baseline at ``path``, read and held to the run (its depth, profile, workload and
    backend, and a point for each concurrency unless --allow-no-baseline) before anything is
    measured: one line when it cannot judge the run."""
    try:
        baseline = load_baseline(path)
    except BaselineError as exc:
        raise UsageError(f"--baseline: {exc}") from None
    if baseline is None:
        raise UsageError(f"--baseline: {path} does not exist")
    mismatches = baseline_mismatches(
        baseline,
        depth=depth,
        profile=settings.profile.name,
        workload_key=settings.workload.key(),
        backend=backend,
    )
    if mismatches:
        raise BaselineMismatch(
            f"--baseline: {path} cannot judge the server at {settings.url}: "
            f"{'; '.join(mismatches)}; nothing was measured"
        )
    lacking = [c for c in settings.concurrency if baseline.point(c) is None]
    if lacking and not settings.allow_no_baseline:
        has = ",".join(sorted(baseline.points, key=int))
        raise BaselineMismatch(
            f"--baseline: {path} has no figures for C={','.join(map(str, lacking))} (it has "
            f"C={has}): those points would not be judged; leave them out of --concurrency, or "
            "add --allow-no-baseline to measure them unjudged; nothing was measured"
        )
    return path, baseline


def _judge(session: DepthSession, path: Path, baseline: Baseline) -> list[Verdict]:
    """The gate's throughput verdicts of the session's points, written into results.json."""
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
        refresh_hint=promote_command(settings, session.store.path),
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
