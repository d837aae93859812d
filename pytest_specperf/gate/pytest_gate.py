"""The pytest-facing side of the gate: turns gate.py's messages into fail/skip outcomes.

Perf tests call these; every failure is one readable block (no traceback), every skip says
what to do about it.
"""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path

import pytest

from pytest_specperf.gate import floors as gate
from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD
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
        parts.append(f"--specperf-profile={s.profile.name}")
        if s.workload.name != DEFAULT_WORKLOAD:
            parts.append(f"--specperf-workload={s.workload.name}")
        parts.append("--specperf-update-baselines")
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

    def require_goodput(self, point: PointMetrics) -> None:
        """With SLOs set and a baseline recorded under the same ones: goodput >= its floor.
        Nothing to check otherwise (the throughput floors still apply)."""
        if self.settings.slo is None:
            return
        path, baseline = self.baseline()
        if gate.slo_mismatch(self.settings.slo, baseline) is not None:
            return
        message = gate.goodput_failure(point, baseline, self.session.depth, path)
        if message:
            pytest.fail(message, pytrace=False)

    def require_slo_capacity(self, run: DepthRun) -> None:
        if self.settings.slo is None:
            pytest.skip("no --specperf-slo: no SLO capacity to check")
        path, baseline = self.baseline()
        mismatch = gate.slo_mismatch(self.settings.slo, baseline)
        if mismatch is not None:
            pytest.skip(f"{mismatch}: not comparable; re-record {path}")
        if baseline.slo_max_concurrency is None:
            pytest.skip(f"baseline {path} records no concurrency meeting the SLOs")
        message = gate.slo_capacity_failure(run, baseline, path)
        if message:
            pytest.fail(message, pytrace=False)
