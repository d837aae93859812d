"""The pytest-facing side of the gate: turns verdicts and floor messages into fail/skip outcomes.

Perf tests call these; every failure is one readable block (no traceback), every skip says
what to do about it. Each check also leaves its figures (measured, floor, baseline, interval)
as the test's user properties, which ``--junitxml`` writes as ``<property>`` elements. In a
recording run (``--specperf-update-baselines``) a check does not gate: the test passes with a
``specperf.recorded`` property saying what was recorded (shown as RECORDED / R). A depth's
verdicts are judged once, when a test first asks, and kept on the run's ``SpecperfRun``. In
A/B mode the ``specperf_gate`` fixture makes an ``AbGate`` instead (plugin/ab_gate.py).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_specperf.config.settings import Settings
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.gate import checks, floors
from pytest_specperf.gate.attribution import explain_verdicts
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.gate.checks import Outcome
from pytest_specperf.gate.decision import (
    GateSettings,
    Remeasured,
    judge_depth,
    points_to_confirm,
)
from pytest_specperf.measure import lossless
from pytest_specperf.plugin.session import DepthVerdicts
from pytest_specperf.plugin.terminal import RECORDED_PROPERTY
from pytest_specperf.results.formats import count, number
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import (
    DepthRun,
    Interval,
    PointMetrics,
    RateSearch,
    RunResults,
    Verdict,
)
from pytest_specperf.results.speculation_report import self_test_line
from pytest_specperf.results.testbed_compare import differs_line
from pytest_specperf.run import depth_checks
from pytest_specperf.run.advice import (
    Recording,
    deliberate_slowdown,
    not_comparable_advice,
    other_backend_advice,
    record_advice,
    record_command,
    record_hint,
    then_gate,
)
from pytest_specperf.run.baselines import load_baseline_safely
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.run_record import known_backend
from pytest_specperf.run.self_test import self_test

PROPERTY_PREFIX = "specperf."
# With --specperf-url the depth is the server's: --spec-steps cannot add another.
ONE_SERVER = (
    "--specperf-url measures one server at its one depth; compare depths on servers the "
    "suite boots (--spec-steps=0,3 without --specperf-url)"
)


class BaselineDriftWarning(UserWarning):
    """The server's SGLang version differs from the baseline's."""


class TestbedDiffers(UserWarning):
    """A verdict's run was measured on another machine than its baseline (a red verdict says
    so in its first line instead)."""

    __test__ = False  # not a test class, whatever pytest's naming rules say


class BaselineImprovement(UserWarning):
    """A figure is significantly better than its baseline: refresh it after review."""


def _figure(value: float) -> float | int:
    return value if isinstance(value, int) else round(value, 3)


def interval_text(interval: Interval) -> str:
    return f"{interval.low:.3f}..{interval.high:.3f} ({interval.level:.0%} {interval.method})"


class TestProperties:
    """A check's figures, as the test's user properties (``record_property``'s list)."""

    __test__ = False  # not a test class, whatever pytest's naming rules say

    def __init__(self, properties: list[tuple[str, object]]) -> None:
        self.properties = properties

    def record(self, name: str, value: float | int | str | None) -> None:
        if value is None:
            return
        shown = value if isinstance(value, str) else _figure(value)
        self.properties.append((PROPERTY_PREFIX + name, shown))

    def measured(
        self, metric: str, measured: float | None, interval: Interval | None = None
    ) -> None:
        self.record(metric, measured)
        if interval is not None:
            self.record(f"{metric}.interval", interval_text(interval))

    def reference(self, metric: str, baseline: float | None, floor: float | None) -> None:
        self.record(f"{metric}.baseline", baseline)
        self.record(f"{metric}.floor", floor)

    def point(self, depth: int, point: PointMetrics) -> None:
        """Where a point was measured, how many of its requests succeeded, its two rates."""
        self.record("depth", depth)
        self.record("concurrency", point.concurrency)
        self.record("ok", point.ok)
        self.record("requests", point.requests)
        for metric in ("agg_tok_s", "per_req_tok_s"):
            self.measured(metric, getattr(point, metric), point.intervals.get(metric))


def _confidence(settings: Settings) -> float:
    """Acceptance floors: how sure a shortfall must be before it fails (the gate's alpha)."""
    return 1 - settings.alpha


def _testbed_differs(session: DepthSession) -> list[str]:
    """``testbed differs from the baseline's: ...`` when it does (else nothing)."""
    _, baseline, _ = load_baseline_safely(session)
    if baseline is None:
        return []
    line = differs_line(session.run_snapshot().testbed, baseline.testbed)
    return [line] if line else []


def _settle(outcome: Outcome) -> None:
    """A check's outcome as pytest's: fail with its lines, else skip saying why."""
    if outcome.failures:
        pytest.fail("\n".join(outcome.failures), pytrace=False)
    if outcome.skip is not None:
        pytest.skip(outcome.skip)


def _skip_unless_judged(verdicts: list[Verdict]) -> None:
    """A point the baseline has no figures for skips with its no-baseline verdict's line (the
    run's end names it again: a gating run fails on it)."""
    for verdict in verdicts:
        if verdict.outcome == "no-baseline":
            pytest.skip(verdict.message)


class SpecperfGate:
    def __init__(
        self,
        session: DepthSession,
        properties: list[tuple[str, object]] | None = None,
        depth_verdicts: DepthVerdicts | None = None,
        runner: RunnerSpread | None = None,
    ) -> None:
        """``properties``: where figures go (a test's ``user_properties``, as record_property);
        ``depth_verdicts``: where the depth's verdicts are kept once judged (the run's, on
        ``SpecperfRun``; None: this gate's own); ``runner``: the spread between this runner's
        earlier runs, from --specperf-history (issue 38), None without one."""
        self.session = session
        self.settings = session.settings
        self.properties = properties if properties is not None else []
        self.figures = TestProperties(self.properties)
        self.depth_verdicts = depth_verdicts if depth_verdicts is not None else DepthVerdicts()
        self.runner = runner

    def _recording(self, what: str) -> bool:
        """True in a recording run, after noting what this test recorded."""
        if not self.settings.update_baselines:
            return False
        # A baseline file that cannot be read fails here too: the recording would replace it.
        _, _, error = load_baseline_safely(self.session)
        if error is not None:
            pytest.fail(error, pytrace=False)
        self.properties.append((RECORDED_PROPERTY, f"steps={self.session.depth} {what}"))
        return True

    def baseline(self) -> tuple[Path, Baseline]:
        """The baseline for this depth, or skip/fail saying why there is none."""
        path, baseline, error = load_baseline_safely(self.session)
        if error is not None:
            pytest.fail(error, pytrace=False)
        assert path is not None
        if baseline is None:
            pytest.skip(
                f"no baseline for profile={self.settings.profile.name} "
                f"hardware={self.session.hardware} steps={self.session.depth} ({path} is missing); "
                f"record one with: {self._said()}"
            )
        run_backend = known_backend(self.settings, self.session.summary)
        other = floors.backend_mismatch(run_backend, baseline)
        if other:
            advice = other_backend_advice(
                self.settings, (self.session.depth,), baseline, self.session.hardware, run_backend
            )
            pytest.fail(f"{other}: not comparable with {path}; {advice}", pytrace=False)
        drift = floors.version_drift(self.session.summary, baseline)
        if drift:
            warnings.warn(BaselineDriftWarning(drift), stacklevel=2)
        mismatch = floors.workload_mismatch(self.settings.workload.key(), baseline)
        if mismatch:
            advice = not_comparable_advice(
                self.settings, (self.session.depth,), baseline, self.session.hardware
            )
            pytest.skip(f"{mismatch}: not comparable with {path}; {advice}")
        return path, baseline

    def require_success(self, point: PointMetrics) -> None:
        message = floors.success_failure(point, self.settings.min_success_rate, self.session.depth)
        if message:
            pytest.fail(message, pytrace=False)

    def _hint(self, depths: tuple[int, ...] | None = None) -> str:
        """The pasteable command that (re-)records this depth's baseline (run/advice.py)."""
        return record_hint(self.settings, self.session.hardware, self.session.depth, depths)

    def _said(self, depths: tuple[int, ...] | None = None) -> str:
        """``_hint`` as a message says it: where it records when not the run's directory."""
        return record_advice(self.settings, self.session.hardware, self.session.depth, depths)

    def require_throughput(self, point: PointMetrics) -> None:
        self.figures.point(self.session.depth, point)
        if self._recording(
            f"C={point.concurrency}: agg {number(point.agg_tok_s)} tok/s, "
            f"per-req {number(point.per_req_tok_s)} tok/s, {point.ok}/{point.requests} ok"
        ):
            return
        path, baseline = self.baseline()
        verdicts = [v for v in self.verdicts(path, baseline) if v.concurrency == point.concurrency]
        _skip_unless_judged(verdicts)
        for verdict in verdicts:
            self.figures.reference(verdict.metric, verdict.baseline, verdict.floor)
        self._fail_on(verdicts, point)

    def require_depth_throughput(self, run: DepthRun) -> None:
        """The depth as a whole (every point's change pooled) is not a regression."""
        self.figures.record("depth", self.session.depth)
        if self._recording("throughput of the depth as a whole (pooled)"):
            return
        path, baseline = self.baseline()
        if not any(baseline.point(c) is not None for c in self.settings.concurrency):
            advice = not_comparable_advice(
                self.settings, (self.session.depth,), baseline, self.session.hardware
            )
            levels = ",".join(sorted(baseline.points, key=int))
            pytest.skip(
                f"{path} has no figures for the measured concurrencies (it has C={levels}): "
                f"not comparable; {advice}"
            )
        every = self.verdicts(path, baseline)
        verdicts = [v for v in every if v.concurrency is None and v.load is None]
        unjudged = [v.message for v in every if v.outcome == "unjudged"]
        if not verdicts and unjudged and len(unjudged) == len(every):
            # Every point was client-bound: nothing was left to pool, and saying so beats a skip.
            pytest.fail("\n".join(dict.fromkeys(unjudged)), pytrace=False)
        if not verdicts:
            calibrate = record_command(
                self.settings,
                (self.session.depth,),
                self.session.hardware,
                old=baseline,
                recording=Recording(calibrate=True, boots=3, repeats=3),
            ) + then_gate(self.settings)
            pytest.skip(
                f"baseline {path} has no calibrated noise (published, schema 1 or one run's "
                "figures): the depth as a whole is not tested, each point keeps the fixed "
                f"tolerance; calibrate with: {calibrate}"
            )
        for verdict in verdicts:
            self.figures.measured("throughput_ratio", verdict.measured)
            self.figures.reference("throughput_ratio", verdict.baseline, verdict.floor)
        self._fail_on(verdicts, None)

    def verdicts(self, path: Path, baseline: Baseline) -> list[Verdict]:
        """Every verdict of this depth, decided once (after every planned point is measured),
        with confirmation of borderline ones, and written into results.json."""
        cached = self.depth_verdicts.closed_loop
        if cached is not None:
            return cached
        self.session.measure_all()
        points = [
            floors.point_input(measured, baseline, self.runner)
            for concurrency in self.settings.concurrency
            if (measured := self.session.points.get(concurrency)) is not None
        ]
        settings = GateSettings(alpha=self.settings.alpha, min_effect=self.settings.min_effect)
        again = [] if self.settings.confirm == "off" else points_to_confirm(points, settings)
        verdicts = judge_depth(
            self.session.depth,
            points,
            settings,
            path=str(path),
            refresh_hint=self._hint(),
            confirmed=self._remeasure(again) if again else None,
        )
        run = self.session.run_snapshot()
        explain_verdicts(
            verdicts,
            accept_length=run.accept_length,
            baseline_accept_length=baseline.accept_length,
            positions=run.position_accept_rate,
            baseline_positions=baseline.position_accept_rate or (),
        )
        self.depth_verdicts.closed_loop = verdicts
        depth = self.session.depth

        def record(results: RunResults) -> None:
            run = results.depth(depth)
            if run is not None:
                run.verdicts = list(verdicts) + [v for v in run.verdicts if v.load is not None]

        self.session.store.update(record)
        return verdicts

    def _remeasure(self, concurrencies: list[int]) -> dict[int, Remeasured]:
        session = self.session
        if self.settings.confirm == "fresh-boot" and session.server is not None:
            session.reboot()
        merged = {c: session.remeasure(c) for c in concurrencies}
        return {
            c: Remeasured(floors.samples_by_metric(p), floors.boots_of(p), p.client_bound)
            for c, p in merged.items()
        }

    def _fail_on(self, verdicts: list[Verdict], point: PointMetrics | None) -> None:
        unjudged = [v.message for v in verdicts if v.outcome == "unjudged"]
        if unjudged:
            pytest.fail("\n".join(dict.fromkeys(unjudged)), pytrace=False)
        failures = floors.failure_lines(verdicts, point)
        # The machine first: a red on another runner than the baseline's may be the runner.
        testbed = _testbed_differs(self.session)
        if failures:
            headlines = [floors.headline(v) for v in verdicts if v.outcome == "regression"]
            advice = floors.what_to_do(
                self.settings.out_dir / "report.md",
                self._said(),
                deliberate_slowdown(self.settings),
            )
            lines = [*testbed, "; ".join(headlines), *failures, advice]
            pytest.fail("\n".join(lines), pytrace=False)
        for line in testbed:
            warnings.warn(TestbedDiffers(line), stacklevel=3)
        for improved in (v for v in verdicts if v.outcome == "improvement"):
            warnings.warn(BaselineImprovement(improved.message), stacklevel=3)

    def require_kv_capacity(self) -> None:
        summary = self.session.summary
        assert summary is not None
        self.figures.record("depth", self.session.depth)
        self.figures.record("max_total_num_tokens", summary.max_total_num_tokens)
        self.figures.record("max_running_requests", summary.max_running_requests)
        if self._recording(
            f"KV: max_total_num_tokens {count(summary.max_total_num_tokens)}, "
            f"max_running_requests {count(summary.max_running_requests)}"
        ):
            return
        path, baseline = self.baseline()
        # KV capacity has no tolerance: the floor is the baseline.
        for metric in ("max_total_num_tokens", "max_running_requests"):
            value = getattr(baseline.kv, metric)
            self.figures.reference(metric, value, value)
        _settle(checks.kv_capacity(summary, baseline, self.session.depth, path))

    def require_accept_length(self, run: DepthRun) -> None:
        if self.session.depth == CONTROL_DEPTH:
            pytest.skip("steps=0 is the no-speculation control: no accept length")
        self.figures.record("depth", self.session.depth)
        self.figures.measured("accept_length", run.accept_length)
        if self._recording(f"accept length {number(run.accept_length, 2)} (run-scoped)"):
            return
        path, baseline = self.baseline()
        if baseline.accept_length is not None:
            self.figures.reference(
                "accept_length",
                baseline.accept_length,
                floors.floor(baseline.accept_length, baseline.tolerance.accept_length),
            )
        _settle(
            checks.accept_length(
                run, baseline, self.session.depth, path, _confidence(self.settings)
            )
        )

    def require_position_acceptance(self, run: DepthRun) -> None:
        if self.session.depth == CONTROL_DEPTH:
            pytest.skip("steps=0 is the no-speculation control: no draft positions")
        self.figures.record("depth", self.session.depth)
        for position, rate in enumerate(run.position_accept_rate, start=1):
            self.figures.record(f"position_accept_rate.{position}", rate)
        shown = ", ".join(f"{rate:.3f}" for rate in run.position_accept_rate) or "-"
        if self._recording(f"acceptance per draft position {shown} (run-scoped)"):
            return
        path, baseline = self.baseline()
        depth = self.session.depth
        _settle(checks.position_acceptance(run, baseline, depth, path, _confidence(self.settings)))

    def require_speedup(self) -> None:
        """Speedup floors of every (depth, control) pair that became judgeable with this depth."""
        if CONTROL_DEPTH not in self.settings.depths:
            pytest.skip(
                f"no control in this run: {ONE_SERVER}"
                if self.settings.url
                else "no control in this run: add 0 to --spec-steps to measure the speedup"
            )
        if self.settings.update_baselines:
            pytest.skip("recording baselines this run: speedup floors are not gated")
        judged = depth_checks.speedups_to_judge(self.session)
        if not judged:
            pytest.skip(
                f"steps={self.session.depth}: the speedup is judged by whichever of the depth "
                "and the control finishes its sweep last; nothing to judge here"
            )
        s = self.settings

        def baseline_at(depth: int) -> tuple[Path, Baseline | None]:
            path = baseline_path(
                s.baselines_dir, s.profile.name, self.session.hardware, depth, s.workload.name
            )
            return path, load_baseline(path)

        failures, unjudged, incomparable = checks.speedups(
            judged, baseline_at, s.workload.key(), known_backend(s, self.session.summary)
        )
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)
        if unjudged:
            depths = (0, *sorted({d for d, _ in judged}))
            advice = (
                f"record with: {self._said(depths)}"
                if incomparable is None
                else not_comparable_advice(s, depths, incomparable, self.session.hardware)
            )
            pytest.skip(f"{'; '.join(unjudged)} ({advice})")

    def require_lossless(self) -> None:
        """This depth's greedy outputs equal those of every depth stored before it."""
        if len(self.settings.depths) < 2:
            pytest.skip(
                f"one depth in this run: {ONE_SERVER}"
                if self.settings.url
                else "one depth in this run: add another (e.g. --spec-steps=0,3) to compare"
            )
        try:
            comparisons = depth_checks.compare_greedy_outputs(self.session)
        except lossless.GreedyOutputError as exc:
            pytest.fail(str(exc), pytrace=False)
        if not comparisons:
            pytest.skip(
                f"steps={self.session.depth}: greedy outputs recorded; the depths that finish "
                "after it compare theirs against them"
            )
        failures = lossless.violations(comparisons, self.settings.lossless_min_prefix)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)

    def require_self_test(self) -> None:
        """--specperf-self-test: the gate catches a known /slow_down, and the reset holds."""
        if not self.settings.self_test:
            pytest.skip("the gate's self-test runs with --specperf-self-test")
        result = self_test(self.session)
        line = self_test_line(self.session.depth, result)
        if not result.caught or not result.reset:
            pytest.fail("\n".join([line, *result.gate_messages]), pytrace=False)

    def require_goodput(self, point: PointMetrics) -> None:
        """With SLOs set and a baseline recorded under the same ones: goodput >= its floor.
        Nothing to check otherwise (the throughput floors still apply)."""
        if self.settings.slo is None:
            return
        path, baseline = self.baseline()
        _settle(checks.goodput(point, baseline, self.settings.slo, self.session.depth, path))

    def require_slo_capacity(self, run: DepthRun) -> None:
        if self.settings.slo is None:
            pytest.skip("no --specperf-slo: no SLO capacity to check")
        path, baseline = self.baseline()
        _settle(checks.slo_capacity(run, baseline, self.settings.slo, path))

    # -- open-loop points: a trace replayed, --specperf-request-rate -------------------------
    def require_open_throughput(self, point: PointMetrics) -> None:
        """An open-loop point (``point.load``) is not a regression against the baseline's
        point of the same load: judged as a closed-loop point is, its key the load."""
        assert point.load is not None
        self.figures.record("depth", self.session.depth)
        self.figures.record("load", point.load)
        self.figures.record("request_rate", point.request_rate)
        self.figures.record("ok", point.ok)
        self.figures.record("requests", point.requests)
        for metric in ("agg_tok_s", "per_req_tok_s"):
            self.figures.measured(metric, getattr(point, metric), point.intervals.get(metric))
        if point.send_lag_s is not None:
            self.figures.record("send_lag_p99_s", point.send_lag_s.p99)
        if self._recording(
            f"{point.load}: agg {number(point.agg_tok_s)} tok/s, "
            f"per-req {number(point.per_req_tok_s)} tok/s, {point.ok}/{point.requests} ok"
        ):
            return
        path, baseline = self.baseline()
        if self.depth_verdicts.open_loop is None:
            self.depth_verdicts.open_loop = judge_open_loop(
                self.session, path, baseline, self._hint()
            )
        verdicts = [v for v in self.depth_verdicts.open_loop if v.load == point.load]
        _skip_unless_judged(verdicts)
        for verdict in verdicts:
            self.figures.reference(verdict.metric, verdict.baseline, verdict.floor)
        self._fail_on(verdicts, point)

    def require_rate_capacity(self, search: RateSearch) -> None:
        """The highest request rate meeting the SLOs is not below the baseline's (under the
        same SLOs), less the throughput tolerance: the search's own step is about 10%."""
        self.figures.record("depth", self.session.depth)
        self.figures.record("slo_max_rate", search.max_rate)
        self.figures.record("slo_rate_probes", len(search.probes))
        found = "none met the SLOs" if search.max_rate is None else f"{search.max_rate:g}/s"
        if self._recording(f"highest rate meeting the SLOs {found}"):
            return
        path, baseline = self.baseline()
        outcome = checks.rate_capacity(
            search, baseline, self.settings.slo, self.session.depth, path
        )
        if outcome.skip is None and baseline.slo_max_rate is not None:
            least = floors.floor(baseline.slo_max_rate, baseline.tolerance.throughput)
            self.figures.reference("slo_max_rate", baseline.slo_max_rate, least)
        _settle(outcome)


def judge_open_loop(
    session: DepthSession, path: Path, baseline: Baseline, refresh_hint: str
) -> list[Verdict]:
    """Every open-loop point of the depth judged together (one family of tests, as a depth's
    closed-loop points; no pooled depth verdict, no re-measuring), once all are measured;
    written into results.json beside the closed-loop verdicts."""
    settings = session.settings
    measured = [session.open_loop.measure(load) for load in settings.open_loads]
    points = [floors.point_input(point, baseline) for point in measured]
    verdicts = [
        v
        for v in judge_depth(
            session.depth,
            points,
            GateSettings(alpha=settings.alpha, min_effect=settings.min_effect),
            path=str(path),
            refresh_hint=refresh_hint,
        )
        if v.load is not None
    ]
    depth = session.depth

    def record(results: RunResults) -> None:
        run = results.depth(depth)
        if run is not None:
            run.verdicts = [v for v in run.verdicts if v.load is None] + verdicts

    session.store.update(record)
    return verdicts
