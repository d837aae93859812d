"""The pytest-facing side of the gate: turns gate.py's messages into fail/skip outcomes.

Perf tests call these; every failure is one readable block (no traceback), every skip says
what to do about it.
"""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path

import pytest

from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import BaselineError
from pytest_specperf.gate import floors as gate
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.measure import lossless
from pytest_specperf.results.report import self_test_line
from pytest_specperf.results.schema import DepthRun, PointMetrics
from pytest_specperf.suite import DepthSession, load_baseline_safely


class BaselineDriftWarning(UserWarning):
    """The server's SGLang version differs from the baseline's."""


class SpecperfGate:
    def __init__(self, session: DepthSession) -> None:
        self.session = session
        self.settings = session.settings

    def _record_hint(self) -> str:
        s = self.settings
        parts = ["pytest", "perf_tests", f"--spec-steps={self.session.depth}"]
        if s.url:
            parts.append(f"--specperf-url={s.url}")
        else:
            parts.append(f"--specperf-backend={s.backend}")
            if s.backend == "sim":
                parts.append(f"--specperf-sim-speedup={s.sim_speedup:g}")
        parts += [f"--specperf-profile={s.profile.name}", "--specperf-update-baselines"]
        return shlex.join(parts)

    def baseline(self) -> tuple[Path, Baseline]:
        """The baseline for this depth, or skip/fail saying why there is none."""
        path, baseline, error = load_baseline_safely(self.session)
        if error is not None:
            pytest.fail(error, pytrace=False)
        assert path is not None
        if self.settings.update_baselines:
            pytest.skip(f"recording baselines this run: not gating against {path}")
        if baseline is None:
            pytest.skip(
                f"no baseline for profile={self.settings.profile.name} "
                f"hardware={self.session.hardware} steps={self.session.depth} ({path} is missing); "
                f"record one with: {self._record_hint()}"
            )
        drift = gate.version_drift(self.session.summary, baseline)
        if drift:
            warnings.warn(BaselineDriftWarning(drift), stacklevel=2)
        mismatch = gate.workload_mismatch(self.settings.workload.key(), baseline)
        if mismatch:
            pytest.skip(f"{mismatch}: not comparable; re-record {path}")
        return path, baseline

    def require_success(self, point: PointMetrics) -> None:
        message = gate.success_failure(point, self.settings.min_success_rate, self.session.depth)
        if message:
            pytest.fail(message, pytrace=False)

    def require_throughput(self, point: PointMetrics) -> None:
        path, baseline = self.baseline()
        if baseline.point(point.concurrency) is None:
            pytest.skip(f"baseline {path} has no figures for C={point.concurrency}")
        failures = gate.throughput_failures(point, baseline, self.session.depth, path)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)

    def require_kv_capacity(self) -> None:
        summary = self.session.summary
        assert summary is not None
        path, baseline = self.baseline()
        if baseline.kv.max_total_num_tokens is None and baseline.kv.max_running_requests is None:
            pytest.skip(f"baseline {path} records no KV capacity")
        failures = gate.kv_failures(summary, baseline, self.session.depth, path)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)

    def require_accept_length(self, run: DepthRun) -> None:
        path, baseline = self.baseline()
        if baseline.accept_length is None:
            pytest.skip(f"baseline {path} records no accept length")
        message = gate.accept_length_failure(run.accept_length, baseline, self.session.depth, path)
        if message:
            pytest.fail(message, pytrace=False)

    def require_position_acceptance(self, run: DepthRun) -> None:
        if self.session.depth == CONTROL_DEPTH:
            pytest.skip("steps=0 is the no-speculation control: no draft positions")
        path, baseline = self.baseline()
        if not baseline.position_accept_rate:
            pytest.skip(f"baseline {path} records no per-position acceptance")
        failures = gate.position_accept_failures(
            run.position_accept_rate, baseline, self.session.depth, path
        )
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)

    def require_speedup(self) -> None:
        """Speedup floors of every (depth, control) pair that became judgeable with this depth."""
        if CONTROL_DEPTH not in self.settings.depths:
            pytest.skip("no control in this run: add 0 to --spec-steps to measure the speedup")
        if self.settings.update_baselines:
            pytest.skip("recording baselines this run: speedup floors are not gated")
        judged = self.session.speedups_to_judge()
        if not judged:
            pytest.skip(
                f"steps={self.session.depth}: the speedup is judged by whichever of the depth "
                "and the control finishes its sweep last; nothing to judge here"
            )
        failures: list[str] = []
        unjudged: list[str] = []
        for depth, found in judged:
            s = self.settings
            path = baseline_path(s.baselines_dir, s.profile.name, self.session.hardware, depth)
            try:
                baseline = load_baseline(path)
            except BaselineError as exc:
                failures.append(str(exc))
                continue
            if baseline is None or not any(
                p.agg_speedup or p.per_req_speedup for p in baseline.points.values()
            ):
                unjudged.append(f"steps={depth}: {path} records no speedup")
                continue
            failures += gate.speedup_failures(found, baseline, depth, path)
        if failures:
            pytest.fail("\n".join(failures), pytrace=False)
        if unjudged:
            pytest.skip(
                "; ".join(unjudged) + f" (record with: {self._record_hint()} and 0 in --spec-steps)"
            )

    def require_lossless(self) -> None:
        """This depth's greedy outputs equal those of every depth stored before it."""
        if len(self.settings.depths) < 2:
            pytest.skip("one depth in this run: add another (e.g. --spec-steps=0,3) to compare")
        try:
            comparisons = self.session.compare_greedy_outputs()
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
        result = self.session.self_test()
        line = self_test_line(self.session.depth, result)
        if not result.caught or not result.reset:
            pytest.fail("\n".join([line, *result.gate_messages]), pytrace=False)
