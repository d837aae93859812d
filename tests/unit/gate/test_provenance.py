"""gate/provenance.py: what replacing a baseline would lose."""

from __future__ import annotations

import msgspec

from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.gate.provenance import downgrade_reasons, provenance_of, refusal
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


def test_the_refusal_names_the_points_and_samples_it_would_lose_in_one_line() -> None:
    old = _calibrated()
    line = refusal("bl/steps-3.json", old, _one_sample_of(old))
    assert line == (
        "refusing to replace bl/steps-3.json: it would drop C=16, 32, 64, lower samples per "
        "point 9 -> 1, lower boots 3 -> 1 and lose its calibration"
    )


def test_the_refusal_names_the_workload_field_it_would_change() -> None:
    old = _calibrated()
    new = msgspec.structs.replace(old, workload={**old.workload, "max_new_tokens": 128})
    assert refusal("p", old, new) == (
        "refusing to replace p: it would replace its workload (max_new_tokens 1000 -> 128)"
    )


def test_nothing_lost_is_no_refusal() -> None:
    old = _calibrated()
    assert refusal("p", old, old) is None
    assert refusal("p", _one_sample_of(old), old) is None


def test_filling_in_workload_fields_an_older_baseline_lacks_is_no_refusal() -> None:
    """A file written before ``workload`` and ``prompt_words`` existed loses nothing when a
    recording at the fields it does record fills them in."""
    new = _calibrated()
    old = msgspec.structs.replace(
        new,
        workload={k: v for k, v in new.workload.items() if k not in ("workload", "prompt_words")},
    )
    assert refusal("p", old, new) is None
    assert downgrade_reasons(old, new) == []


def test_dropping_a_workload_field_the_baseline_records_is_a_refusal() -> None:
    new = _calibrated()
    old = msgspec.structs.replace(new, workload={**new.workload, "top_p": 0.9})
    assert refusal("p", old, new) == (
        "refusing to replace p: it would replace its workload (top_p 0.9 -> None)"
    )


def test_replacing_a_gpu_baseline_with_simulator_figures_is_a_refusal() -> None:
    old = msgspec.structs.replace(_calibrated(), backend="sglang")
    new = msgspec.structs.replace(old, backend="sim")
    assert refusal("p", old, new) == (
        "refusing to replace p: it would replace its sglang figures with sim ones"
    )
    assert downgrade_reasons(old, new) == ["another backend (sglang -> sim)"]


def test_a_baseline_without_a_backend_or_an_external_one_changes_no_backend() -> None:
    new = msgspec.structs.replace(_calibrated(), backend="sim")
    for recorded in (None, "external"):
        old = msgspec.structs.replace(new, backend=recorded)
        assert refusal("p", old, new) is None
        assert downgrade_reasons(old, new) == []
