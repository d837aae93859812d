"""The gate's open-loop checks (a trace replayed, --specperf-request-rate): each open point
against the baseline's point of the same load, and each depth's highest rate meeting the SLOs.

``OpenLoopChecks`` is a base of ``SpecperfGate`` (plugin/gate.py), which provides what it
declares under TYPE_CHECKING.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from pytest_specperf.gate import floors as gate
from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.gate.decision import GateSettings, judge_depth
from pytest_specperf.results.formats import number
from pytest_specperf.results.schema import Interval, PointMetrics, RateSearch, RunResults, Verdict
from pytest_specperf.run.depth_session import DepthSession

if TYPE_CHECKING:
    from pytest_specperf.config.settings import Settings

# The open-loop verdicts of each depth's session, decided once per run.
_OPEN_VERDICTS: weakref.WeakKeyDictionary[DepthSession, list[Verdict]] = weakref.WeakKeyDictionary()


class _Figures(Protocol):
    def record(self, name: str, value: float | int | str | None) -> None: ...

    def measured(
        self, metric: str, measured: float | None, interval: Interval | None = None
    ) -> None: ...

    def reference(self, metric: str, baseline: float | None, floor: float | None) -> None: ...


class OpenLoopChecks:
    """``require_open_throughput`` and ``require_rate_capacity`` of the gate."""

    if TYPE_CHECKING:
        session: DepthSession
        settings: Settings
        figures: _Figures

        def _recording(self, what: str) -> bool: ...

        def baseline(self) -> tuple[Path, Baseline]: ...

        def _hint(self, depths: tuple[int, ...] | None = None) -> str: ...

        def _fail_on(self, verdicts: list[Verdict], point: PointMetrics | None) -> None: ...

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
        verdicts = [v for v in self.open_verdicts(path, baseline) if v.load == point.load]
        for verdict in verdicts:
            if verdict.outcome == "no-baseline":
                pytest.skip(verdict.message)  # the run's end names it too
        for verdict in verdicts:
            self.figures.reference(verdict.metric, verdict.baseline, verdict.floor)
        self._fail_on(verdicts, point)

    def open_verdicts(self, path: Path, baseline: Baseline) -> list[Verdict]:
        """Every open-loop point of this depth judged together (one family of tests, as a
        depth's closed-loop points; no pooled depth verdict, no re-measuring), once all are
        measured; written into results.json beside the closed-loop verdicts."""
        cached = _OPEN_VERDICTS.get(self.session)
        if cached is not None:
            return cached
        measured = [self.session.open_loop.measure(load) for load in self.settings.open_loads]
        points = [gate.point_input(point, baseline) for point in measured]
        settings = GateSettings(alpha=self.settings.alpha, min_effect=self.settings.min_effect)
        verdicts = [
            v
            for v in judge_depth(
                self.session.depth,
                points,
                settings,
                path=str(path),
                refresh_hint=self._hint(),
            )
            if v.load is not None
        ]
        _OPEN_VERDICTS[self.session] = verdicts
        depth = self.session.depth

        def record(results: RunResults) -> None:
            run = results.depth(depth)
            if run is not None:
                run.verdicts = [v for v in run.verdicts if v.load is None] + verdicts

        self.session.store.update(record)
        return verdicts

    def require_rate_capacity(self, search: RateSearch) -> None:
        """The highest request rate meeting the SLOs is not below the baseline's (under the
        same SLOs), less the throughput tolerance: the search's own step is about 10%."""
        depth = self.session.depth
        self.figures.record("depth", depth)
        self.figures.record("slo_max_rate", search.max_rate)
        self.figures.record("slo_rate_probes", len(search.probes))
        found = "none met the SLOs" if search.max_rate is None else f"{search.max_rate:g}/s"
        if self._recording(f"highest rate meeting the SLOs {found}"):
            return
        path, baseline = self.baseline()
        if baseline.slo_max_rate is None or baseline.slo != self.settings.slo:
            pytest.skip(f"baseline {path} records no SLO rate under these SLOs")
        floor = baseline.slo_max_rate * (1 - baseline.tolerance.throughput)
        self.figures.reference("slo_max_rate", baseline.slo_max_rate, floor)
        if search.max_rate is None or search.max_rate < floor:
            pytest.fail(
                f"steps={depth}: highest request rate meeting the SLOs {found} < floor "
                f"{floor:g}/s (baseline {baseline.slo_max_rate:g}/s - "
                f"{baseline.tolerance.throughput:.0%}) [{path}]; probes: "
                + ", ".join(
                    f"{p.rate:g}/s {'met' if p.meets_slo else 'missed'}" for p in search.probes
                ),
                pytrace=False,
            )
