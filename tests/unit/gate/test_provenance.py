"""gate/provenance.py: what replacing a baseline would lose."""

from __future__ import annotations

import msgspec

from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.gate.provenance import downgrade_reasons, provenance_of
from tests.unit.run.test_advice import SHIPPED_CALIBRATED


def _calibrated() -> Baseline:
    baseline = load_baseline(SHIPPED_CALIBRATED)
    assert baseline is not None
    return baseline


def _one_sample_of(baseline: Baseline, *, keep: tuple[str, ...] = ("1", "4")) -> Baseline:
    """The same baseline reduced to one recorded sample per point, at fewer concurrencies."""
    points = {}
    for key in keep:
        point = baseline.points[key]
        noise = {
            m: msgspec.structs.replace(n, source="recorded repeats", samples=1, boots=1)
            for m, n in point.noise.items()
        }
        samples = {m: values[:1] for m, values in point.samples.items()}
        points[key] = msgspec.structs.replace(point, samples=samples, boots=1, noise=noise)
    return msgspec.structs.replace(baseline, points=points)


def test_the_shipped_calibrated_baseline_reads_as_calibrated_3_boots_9_samples() -> None:
    found = provenance_of(_calibrated())
    assert (found.source, found.boots, found.samples) == ("calibrated", 3, 9)
    assert found.describe().startswith("calibrated, 3 boots, 9 samples per point, workload ")


def test_one_run_of_fewer_points_downgrades_a_calibrated_baseline() -> None:
    old = _calibrated()
    reasons = downgrade_reasons(old, _one_sample_of(old))
    assert reasons == [
        "a calibrated baseline would become an uncalibrated one",
        "fewer boots (1 < 3)",
        "fewer samples per point (1 < 9)",
        "another sweep (C=16,32,64 would be dropped)",
    ]


def test_another_workload_is_a_downgrade() -> None:
    old = _calibrated()
    new = msgspec.structs.replace(old, workload={**old.workload, "max_new_tokens": 200})
    assert downgrade_reasons(old, new) == ["another workload (max_new_tokens differ)"]


def test_the_same_provenance_or_more_is_no_downgrade() -> None:
    old = _calibrated()
    assert downgrade_reasons(old, old) == []
    assert downgrade_reasons(_one_sample_of(old), old) == []
