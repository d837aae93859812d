"""A/B mode's gate: throughput judged against the base side, by the depth's comparison
(run/ab/) and its verdict (gate/ab/verdict.py); every check that needs a baseline file skips.

The ``specperf_gate`` fixture makes one in A/B mode, in place of a ``SpecperfGate``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_specperf.gate.ab.undecided import undecided_advice
from pytest_specperf.gate.ab.verdict import PointSummary, change_percent
from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.plugin.gate import BaselineImprovement, SpecperfGate
from pytest_specperf.plugin.session import DepthVerdicts
from pytest_specperf.results.schema import DepthRun, PointMetrics
from pytest_specperf.run.ab.pairs import AbRun
from pytest_specperf.run.depth_session import DepthSession


class AbGate(SpecperfGate):
    """A/B mode's gate: throughput judged against the base side; every check that needs a
    baseline file skips."""

    def __init__(
        self,
        session: DepthSession,
        ab: AbRun,
        properties: list[tuple[str, object]] | None = None,
        depth_verdicts: DepthVerdicts | None = None,
    ) -> None:
        """``ab``: the depth's comparison, run to its verdict when the depth started."""
        super().__init__(session, properties, depth_verdicts)
        self.ab = ab

    def baseline(self) -> tuple[Path, Baseline]:
        pytest.skip(
            "A/B mode: no baseline file is read; throughput is judged against the base "
            "side (test_throughput_depth, test_throughput_floor)"
        )

    def require_throughput(self, point: PointMetrics) -> None:
        self.figures.point(self.session.depth, point)
        self._ab_point(point)

    def require_depth_throughput(self, run: DepthRun) -> None:
        self.figures.record("depth", self.session.depth)
        self._ab_depth()

    def require_kv_capacity(self) -> None:
        self.baseline()

    def require_accept_length(self, run: DepthRun) -> None:
        self.baseline()

    def require_position_acceptance(self, run: DepthRun) -> None:
        self.baseline()

    def require_speedup(self) -> None:
        self.baseline()

    def require_lossless(self) -> None:
        self.baseline()

    def require_self_test(self) -> None:
        self.baseline()

    def _record_ab(self, summary: PointSummary) -> None:
        change, low, high = change_percent(summary.estimate)
        self.figures.record("ab.change", change)
        self.figures.record("ab.change.low", low)
        self.figures.record("ab.change.high", high)
        self.figures.record("ab.base_median", summary.base_median)
        self.figures.record("ab.head_median", summary.head_median)
        self.figures.record("ab.why", summary.attribution.text())
        self.figures.record("ab.pairs", len(self.ab.pairs))
        self.figures.record("ab.server_seconds", round(self.ab.server_seconds, 1))

    def _ab_point(self, point: PointMetrics) -> None:
        """A/B mode: this point's change over the pairs, recorded; the verdict is the depth's
        (test_throughput_depth): judging each point at the depth's alpha would add their
        false alarms up."""
        found = self.ab.last
        summary = (
            next((p for p in found.points if p.concurrency == point.concurrency), None)
            if found is not None
            else None
        )
        if summary is None:
            pytest.skip(f"C={point.concurrency}: not measured on both sides of a pair")
        self._record_ab(summary)

    def _ab_depth(self) -> None:
        """A/B mode: the depth's verdict: red on a regression or when undecided."""
        found = self.ab.last
        if self.ab.failure is not None or found is None:
            pytest.fail(self.ab.failure or "A/B: no pair was measured", pytrace=False)
        self._record_ab(found.pooled)
        self.figures.record("ab.outcome", found.outcome)
        line = (
            f"{found.message(self.ab.settings.min_effect, self.ab.settings.beta)}; {self.ab.cost()}"
        )
        if found.outcome == "regression":
            pytest.fail(line, pytrace=False)
        if found.outcome in ("undecided", "continue"):
            pytest.fail(
                f"{line}: too noisy to tell a {self.ab.settings.min_effect:.0%} change from "
                f"none in {self.ab.settings.max_pairs} pairs: "
                f"{undecided_advice(self.ab.judged_pairs(), self.ab.settings)}",
                pytrace=False,
            )
        if found.outcome == "improvement":
            warnings.warn(BaselineImprovement(line), stacklevel=3)
