"""pytest_specperf.plugin.ab_gate: A/B mode's gate, the depth's verdict from its comparison."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_specperf.config.settings import build_settings
from pytest_specperf.plugin.ab_gate import AbGate
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.run.ab.pairs import run_ab
from pytest_specperf.run.depth_session import DepthSession
from tests.support.points import make_point


def test_ab_mode_fails_the_depth_with_the_verdict_and_records_the_change(tmp_path: Any) -> None:
    """A/B mode: the depth test fails on a regression, saying why, and the JUnit properties
    carry the change, its interval, the pairs and the server-seconds."""
    values = {"backend": "sim", "concurrency": "1,4", "base_server_arg": ["--sim-seed=1"]}
    settings = build_settings(lambda key: values.get(key), tmp_path)
    rng = random.Random(3)

    def measure(pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        runs = {}
        for side in order:
            factor = math.exp(rng.gauss(0, 0.01)) * (0.9 if side == "head" else 1.0)
            point = make_point(4, 400.0 * factor, requests=1, tokens=1, boot=0)
            point.accept_length = 3.0
            runs[side] = DepthRun(
                depth=3, profile="p", backend="sim", hardware="h", workload={}, points=[point]
            )
        return runs, 30.0

    ab = run_ab(settings, 3, measure=measure)
    session = SimpleNamespace(settings=settings, depth=3)
    properties: list[tuple[str, object]] = []
    gate = AbGate(cast(DepthSession, session), ab, properties)
    with pytest.raises(pytest.fail.Exception, match=r"A/B: REGRESSION \(moved by step time\)"):
        gate._ab_depth()
    recorded = dict(properties)
    assert recorded["specperf.ab.outcome"] == "regression"
    assert recorded["specperf.ab.pairs"] == 3 and recorded["specperf.ab.server_seconds"] == 90.0
    assert -0.12 < float(recorded["specperf.ab.change"]) < -0.08  # type: ignore[arg-type]
