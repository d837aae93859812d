"""pytest_specperf.gate.pytest_gate: confirmation re-measures through the depth's session."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_specperf.gate.pytest_gate import SpecperfGate
from pytest_specperf.results.schema import PointMetrics
from pytest_specperf.suite import DepthSession
from tests.support.points import make_point


def _sample(agg: float, boot: int) -> PointMetrics:
    return make_point(4, agg, requests=1, tokens=1, boot=boot)


@dataclass
class FakeSession:
    """Records reboots and re-measures; each re-measure adds one sample in the current boot."""

    confirm: str
    server: object | None = object()
    boot: int = 0
    reboots: int = 0
    samples: list[PointMetrics] = field(default_factory=lambda: [_sample(100.0, 0)])

    @property
    def settings(self) -> Any:
        return SimpleNamespace(confirm=self.confirm)

    def reboot(self) -> None:
        self.reboots += 1
        self.boot += 1

    def remeasure(self, concurrency: int) -> PointMetrics:
        self.samples.append(_sample(90.0, self.boot))
        merged = _sample(95.0, 0)
        merged.samples = list(self.samples)
        return merged


@pytest.mark.parametrize(("mode", "reboots", "boots"), [("fresh-boot", 1, 2), ("same-boot", 0, 1)])
def test_confirmation_reboots_only_in_fresh_boot_mode(mode: str, reboots: int, boots: int) -> None:
    """fresh-boot restarts the server once before re-measuring; same-boot does not."""
    session = FakeSession(confirm=mode)
    gate = SpecperfGate(cast(DepthSession, session))
    result = gate._remeasure([4])
    assert session.reboots == reboots
    samples, seen_boots, client_bound = result[4]
    assert samples["agg_tok_s"] == [100.0, 90.0] and seen_boots == boots and client_bound is None


def test_confirmation_stays_in_the_boot_of_a_server_it_did_not_launch() -> None:
    """With --specperf-url (no server of ours) a fresh-boot confirmation re-measures in place."""
    session = FakeSession(confirm="fresh-boot", server=None)
    SpecperfGate(cast(DepthSession, session))._remeasure([4])
    assert session.reboots == 0
