"""pytest_specperf.plugin.gate: confirmation re-measures through the depth's session."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_specperf.plugin.gate import SpecperfGate
from pytest_specperf.results.schema import PointMetrics
from pytest_specperf.run.depth_session import DepthSession
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


def _gate_against(tmp_path: Any, recorded_on: str) -> SpecperfGate:
    """A sim run's gate at steps=3, whose baseline file was recorded on ``recorded_on``."""
    from pytest_specperf.config.settings import build_settings
    from pytest_specperf.gate.baselines import baseline_path, encode_baseline
    from tests.unit.gate.test_floors import make_baseline

    values = {"backend": "sim", "concurrency": "4", "baselines": str(tmp_path / "baselines")}
    settings = build_settings(lambda key: values.get(key), tmp_path)
    path = baseline_path(settings.baselines_dir, settings.profile.name, "2x-h200", 3)
    path.parent.mkdir(parents=True)
    baseline = make_baseline(profile=settings.profile.name, backend=recorded_on, workload={})
    path.write_bytes(encode_baseline(baseline))
    session = SimpleNamespace(settings=settings, depth=3, hardware="2x-h200", summary=None)
    return SpecperfGate(cast(DepthSession, session))


def test_a_sim_run_fails_against_a_baseline_recorded_on_sglang(tmp_path: Any) -> None:
    """Not judged as an improvement: the depth fails, naming both backends and what to run."""
    gate = _gate_against(tmp_path, "sglang")
    with pytest.raises(pytest.fail.Exception) as failed:
        gate.baseline()
    message = str(failed.value)
    assert "recorded on backend sglang" in message and "this run uses backend sim" in message
    assert "--specperf-baselines=" in message and "--specperf-backend=sglang" in message


def test_a_sim_run_is_judged_against_a_baseline_recorded_on_sim(tmp_path: Any) -> None:
    """The same backend: the baseline is the one to judge against."""
    path, baseline = _gate_against(tmp_path, "sim").baseline()
    assert baseline.backend == "sim" and path.name == "steps-3.json"
