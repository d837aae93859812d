"""gate.machines: a baseline merged across machines, and the floors it gives a fresh runner."""

from __future__ import annotations

import math

import msgspec
import pytest

from pytest_specperf.errors import BaselineError
from pytest_specperf.gate.decision import GateSettings, Reference, compare, compare_depth
from pytest_specperf.gate.machines import LabelledRun, merge_across_machines, spread_text
from pytest_specperf.gate.noise import noise_for
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.schema import DepthRun, PointMetrics, ServerSummary, Testbed
from tests.support.points import make_point


def machine_run(*aggs: float, uuid: str | None = None, tokens: int = 2048) -> DepthRun:
    samples: list[PointMetrics] = [
        make_point(64, agg, agg / 64, tokens=4000, wall_s=4.0) for agg in aggs
    ]
    return DepthRun(
        depth=3,
        profile="seed-class",
        backend="sglang",
        hardware="1x-h200",
        workload={"workload": "greedy-synthetic", "max_new_tokens": tokens},
        server=ServerSummary(url="http://x", max_total_num_tokens=10_000, max_running_requests=64),
        points=[merge_samples(samples)],
        planned_concurrency=[64],
        status="complete",
        testbed=Testbed(gpu_name="NVIDIA H200", gpu_uuid=uuid, driver="580"),
    )


def labelled(*runs: DepthRun) -> list[LabelledRun]:
    return [LabelledRun(f"run {i}", run) for i, run in enumerate(runs)]


def test_each_machines_samples_are_one_group_and_the_spread_is_between_them() -> None:
    """Three machines 1% apart, each with flat samples: the noise within a boot is near zero,
    and between machines it is the larger of their SD (1.0%) and MAD spread (1.48%)."""
    merged = merge_across_machines(
        labelled(
            machine_run(4400, 4401, uuid="GPU-a"),
            machine_run(4444, 4445, uuid="GPU-b"),
            machine_run(4356, 4357, uuid="GPU-c"),
        ),
        how_recorded="test",
    )
    noise = merged.points["64"].noise["agg_tok_s"]
    assert (noise.machines, noise.boots, noise.samples) == (3, 3, 6)
    assert noise.within_boot_cv is not None and noise.within_boot_cv < 0.001
    assert noise.boot_to_boot_cv == pytest.approx(0.01 * 1.4826, rel=0.05)
    assert merged.points["64"].boots == 3
    assert merged.machines is not None and merged.machines.count == 3
    assert [m.gpu_uuid for m in merged.machines.runs] == ["GPU-a", "GPU-b", "GPU-c"]


def test_two_runs_on_the_same_cards_count_as_one_machine() -> None:
    merged = merge_across_machines(
        labelled(
            machine_run(4400, 4401, uuid="GPU-a"),
            machine_run(4420, 4421, uuid="GPU-a"),
            machine_run(4444, 4445, uuid="GPU-b"),
        ),
        how_recorded="test",
    )
    assert merged.machines is not None and merged.machines.count == 2
    assert merged.points["64"].noise["agg_tok_s"].machines == 2


def test_runs_of_different_workloads_are_refused() -> None:
    with pytest.raises(BaselineError, match="measured different things"):
        merge_across_machines(
            labelled(machine_run(4400, uuid="GPU-a"), machine_run(4400, uuid="GPU-b", tokens=256)),
            how_recorded="test",
        )


def test_the_robust_spread_counts_when_the_random_effects_estimate_reads_lower() -> None:
    """Noisy samples within each machine can explain away the machines' differences in the
    random-effects estimate; the MAD of the machines' means, as the history spread reads
    them, still stands."""
    merged = merge_across_machines(
        labelled(
            machine_run(4300, 4500, uuid="GPU-a"),
            machine_run(4350, 4550, uuid="GPU-b"),
            machine_run(4250, 4450, uuid="GPU-c"),
        ),
        how_recorded="test",
    )
    noise = merged.points["64"].noise["agg_tok_s"]
    means = [math.log(math.sqrt(a * b)) for a, b in ((4300, 4500), (4350, 4550), (4250, 4450))]
    mad = 1.4826 * sorted(abs(m - sorted(means)[1]) for m in means)[1]
    assert noise.boot_to_boot_cv == pytest.approx(mad)


def test_the_gate_says_the_floor_comes_from_the_machines() -> None:
    merged = merge_across_machines(
        labelled(
            machine_run(4400, 4410, uuid="GPU-a"),
            machine_run(4444, 4450, uuid="GPU-b"),
            machine_run(4356, 4366, uuid="GPU-c"),
        ),
        how_recorded="test",
    )
    noise = noise_for(merged.points["64"].noise["agg_tok_s"])
    assert noise is not None
    assert noise.description.startswith("calibrated across 3 machines (6 samples over 3 machines")
    assert "between machines" in noise.description and "60% upper bound" in noise.description
    assert "how machines differ is not in it" not in noise.description


def test_fewer_than_three_machines_cannot_narrow_the_floor_below_five_percent() -> None:
    """Two machines that read alike say little about the next one: at least 5% between them."""
    two = merge_across_machines(
        labelled(machine_run(4400, 4401, uuid="GPU-a"), machine_run(4402, 4403, uuid="GPU-b")),
        how_recorded="test",
    )
    noise = noise_for(two.points["64"].noise["agg_tok_s"])
    assert noise is not None and noise.between == pytest.approx(0.05)
    assert "fewer than 3 machines cannot estimate it" in noise.description


def test_a_fresh_machine_within_the_spread_passes_and_five_percent_slower_fails() -> None:
    """Against three quiet machines about 1% apart, an unchanged build on a fourth passes and
    one 6% slower is a regression: the floor is under 5%."""
    merged = merge_across_machines(
        labelled(
            machine_run(4400, 4405, 4398, uuid="GPU-a"),
            machine_run(4444, 4440, 4446, uuid="GPU-b"),
            machine_run(4380, 4377, 4385, uuid="GPU-c"),
        ),
        how_recorded="test",
    )
    point = merged.points["64"]
    ref = Reference(
        figure=point.agg_tok_s or 0.0,
        samples=point.samples["agg_tok_s"],
        tolerance=0.1,
        published=False,
        noise=point.noise["agg_tok_s"],
        boots=point.boots,
    )
    settings = GateSettings()
    same = compare([4420, 4415, 4425], ref, alpha=0.008, settings=settings)
    slower = compare([4140, 4135, 4145], ref, alpha=0.008, settings=settings)
    assert not same.regression
    assert 1 - math.exp(-same.threshold) < 0.05
    assert slower.regression


def test_the_spread_text_names_the_machines_and_both_estimates() -> None:
    merged = merge_across_machines(
        labelled(machine_run(4400, uuid="GPU-a"), machine_run(4444, uuid="GPU-b")),
        how_recorded="test",
    )
    assert merged.machines is not None
    text = spread_text(merged.machines)
    assert text.startswith("2 machine(s) (NVIDIA H200): agg tok/s between machines")
    assert "(MAD)" in text and "(SD)" in text


def test_one_machine_is_recorded_repeats_not_a_calibration() -> None:
    """A first runner of a new hardware key: its repeats, held to the fixed tolerance until
    more machines join."""
    merged = merge_across_machines(
        labelled(machine_run(4000, 4010, uuid="GPU-h")), how_recorded="t"
    )
    noise = merged.points["64"].noise["agg_tok_s"]
    assert (noise.source, noise.machines) == ("recorded repeats", 1)
    assert noise_for(noise) is None


def test_the_pooled_floor_says_how_the_spread_between_machines_was_taken() -> None:
    """Agg and per-req noise differ in figures, so the depth's source is said short; the rule
    that set the width (two machines: at least 5%) is still in it."""
    two = merge_across_machines(
        labelled(machine_run(4400, 4480, uuid="GPU-a"), machine_run(4402, 4403, uuid="GPU-b")),
        how_recorded="test",
    )
    point = two.points["64"]
    agg = point.noise["agg_tok_s"]
    per_req = msgspec.structs.replace(point.noise["per_req_tok_s"], within_boot_cv=0.002)
    refs = [
        Reference(figure=100.0, samples=(100.0, 100.0), boots=2, noise=noise)
        for noise in (agg, per_req)
    ]
    pooled = compare_depth(
        [[([ref.figure] * 3, ref) for ref in refs]], alpha=0.008, settings=GateSettings()
    )
    assert pooled is not None
    assert pooled.noise_source == (
        "calibrated across 2 machines, between machines taken as at least 5% (fewer than 3 "
        "machines cannot estimate it), 1 point(s) pooled"
    )
