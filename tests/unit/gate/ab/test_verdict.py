"""gate/ab/verdict.py (and undecided.py's advice): paired boots judged after every pair."""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import replace
from typing import Any

import pytest

from pytest_specperf.gate.ab.estimate import (
    AbSettings,
    BootPoint,
    Pair,
    boot_point,
    estimate,
    pooled_change,
)
from pytest_specperf.gate.ab.undecided import (
    noise_split,
    pairs_needed,
    reachable_effect,
    undecided_advice,
)
from pytest_specperf.gate.ab.verdict import (
    AbLook,
    decided_by,
    look,
    outcome_of,
    pair_record,
    pair_spread_line,
)
from pytest_specperf.results.formats import change_interval, relative_change
from pytest_specperf.results.schema import AbPair, PointMetrics, ServerCpu
from tests.support.points import make_point

POINTS = (1, 4, 16)


def _pair(
    rng: random.Random,
    *,
    change: float = 0.0,
    accept_change: float = 0.0,
    boot_cv: float = 0.01,
    within_cv: float = 0.02,
    head_rates: tuple[float, ...] = (0.9, 0.7, 0.6),
    cpu: ServerCpu | None = None,
) -> Pair:
    def side(factor: float, accept: float, rates: tuple[float, ...]) -> dict[int, BootPoint]:
        boot = math.exp(rng.gauss(0, boot_cv))
        return {
            c: BootPoint(
                c,
                [1000.0 * c * factor * boot * math.exp(rng.gauss(0, within_cv)) for _ in range(3)],
                accept_length=accept,
                position_accept_rate=rates,
                cpu=cpu,
            )
            for c in POINTS
        }

    return Pair(
        base=side(1.0, 3.0, (0.9, 0.7, 0.6)),
        head=side(1 + change, 3.0 * (1 + accept_change), head_rates),
    )


def _first_decision(rng: random.Random, settings: AbSettings, **kwargs: float) -> tuple[str, int]:
    pairs: list[Pair] = []
    for _ in range(settings.max_pairs):
        pairs.append(_pair(rng, **kwargs))  # type: ignore[arg-type]
        if len(pairs) >= 2:
            found = look(3, pairs, settings)
            if found.outcome != "continue":
                return found.outcome, found.pairs
    raise AssertionError("the last look must decide")


def test_no_change_comes_out_no_regression() -> None:
    outcome, _ = _first_decision(random.Random(1), AbSettings())
    assert outcome == "no-regression"


def _four_pairs(seed: int, **change: Any) -> AbLook:
    rng = random.Random(seed)
    return look(3, [_pair(rng, **change) for _ in range(4)], AbSettings())


def test_a_ten_percent_step_time_regression_is_red_and_named_step_time() -> None:
    found = _four_pairs(2, change=-0.10)
    assert found.outcome == "regression"
    assert found.pooled.attribution.cause == "step time"
    assert "REGRESSION (moved by step time)" in found.message(0.05)


def test_a_lower_acceptance_is_named_acceptance_with_the_position_that_fell() -> None:
    found = _four_pairs(3, change=-0.10, accept_change=-0.10, head_rates=(0.9, 0.7, 0.45))
    assert found.outcome == "regression"
    assert found.pooled.attribution.cause == "acceptance"
    assert "(position 3: 0.60 -> 0.45)" in found.message(0.05)


def test_an_improvement_is_called_an_improvement() -> None:
    found = _four_pairs(4, change=0.15)
    assert found.outcome == "improvement"


def test_one_pair_is_never_decided() -> None:
    found = look(3, [_pair(random.Random(5), change=-0.5)], AbSettings())
    assert found.outcome == "continue"
    assert found.pooled.estimate.wide is None


def test_noise_too_large_for_the_pairs_ends_undecided() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    pairs = [_pair(rng, change=-0.03, boot_cv=0.2) for _ in range(3)]
    assert look(3, pairs, settings).outcome == "undecided"


def test_a_clear_change_under_the_minimum_effect_but_over_half_of_it_is_a_regression() -> None:
    settings = AbSettings()
    values = [-0.03 + 0.001 * (i % 3 - 1) for i in range(10)]
    assert outcome_of(estimate(values, settings), settings) == "regression"


def test_a_clear_change_under_half_the_minimum_effect_fails_no_build() -> None:
    """The simulator's A/A with two seeds: -0.5%, its interval just below zero."""
    settings = AbSettings()
    values = [-0.005 + 0.001 * (i % 3 - 1) for i in range(10)]
    pooled = estimate(values, settings)
    assert pooled.wide is not None and pooled.wide[1] < 0
    assert outcome_of(pooled, settings) == "no-regression"


def test_a_small_change_within_a_narrow_interval_is_no_regression() -> None:
    settings = AbSettings()
    values = [0.004 * (i % 3 - 1) for i in range(10)]
    assert outcome_of(estimate(values, settings), settings) == "no-regression"


def test_a_possible_large_improvement_does_not_hold_back_no_regression() -> None:
    """Only the slow side is bounded: the upper bound may lie past +min effect."""
    settings = AbSettings()
    values = [0.03 + 0.03 * (i % 3 - 1) for i in range(6)]
    pooled = estimate(values, settings)
    assert pooled.narrow is not None and pooled.narrow[1] > math.log(1 + settings.min_effect)
    assert pooled.narrow[0] > -settings.margin
    assert outcome_of(pooled, settings) == "no-regression"


def test_a_slowdown_of_the_minimum_effect_not_ruled_out_goes_on() -> None:
    settings = AbSettings()
    values = [-0.01 + 0.05 * (i % 3 - 1) for i in range(6)]
    pooled = estimate(values, settings)
    assert pooled.narrow is not None and pooled.narrow[0] < -settings.margin
    assert outcome_of(pooled, settings) == "continue"


def test_the_interval_is_over_pairs_so_boot_noise_widens_it() -> None:
    settings = AbSettings()
    quiet = estimate([-0.01, 0.01, 0.0, 0.005], settings)
    noisy = estimate([-0.1, 0.1, 0.0, 0.05], settings)
    assert quiet.wide is not None and noisy.wide is not None
    assert noisy.wide[1] - noisy.wide[0] > 5 * (quiet.wide[1] - quiet.wide[0])


def test_points_measured_on_one_side_only_are_left_out_of_the_pool() -> None:
    pair = Pair(
        base={1: BootPoint(1, [100.0]), 4: BootPoint(4, [400.0])},
        head={1: BootPoint(1, [90.0])},
    )
    pooled = pooled_change(pair)
    assert pooled is not None and pooled.total == pytest.approx(math.log(0.9))
    assert pooled.acceptance is None


def test_a_measured_point_becomes_one_boots_side_with_every_repeat() -> None:
    def metrics(agg: float) -> PointMetrics:
        return make_point(4, agg, None, requests=1, tokens=1)

    point = metrics(101.0)
    point.samples = [metrics(100.0), metrics(101.0), metrics(103.0)]
    point.accept_length = 2.5
    side = boot_point(point)
    assert list(side.tok_s) == [100.0, 101.0, 103.0] and side.accept_length == 2.5


@pytest.mark.parametrize("bad", [{"alpha": 0.0}, {"min_effect": 0.6}, {"max_pairs": 1}])
def test_settings_out_of_range_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        AbSettings(**bad)  # type: ignore[arg-type]


def test_undecided_from_boots_that_disagree_asks_for_pairs_not_repeats() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    pairs = [_pair(rng, change=-0.03, boot_cv=0.08, within_cv=0.01) for _ in range(3)]
    advice = undecided_advice(pairs, settings)
    assert "the noise is between boots, so more repeats will not help" in advice
    split = noise_split(pairs, settings)
    assert split is not None and split.between_boots
    assert f"needs about {split.pairs_needed} pairs" in advice
    assert split.pairs_needed > settings.max_pairs


def test_undecided_with_every_boots_server_flat_out_on_a_core_says_so() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    scheduler = ServerCpu(process="sglang::scheduler", share=0.97)
    pairs = [_pair(rng, boot_cv=0.08, within_cv=0.01, cpu=scheduler) for _ in range(3)]
    assert (
        "in every boot the server's sglang::scheduler held 97%-97% of one core: the throughput "
        "follows the speed of one core of this runner" in undecided_advice(pairs, settings)
    )


def test_one_boot_not_cpu_bound_leaves_the_cpu_out_of_the_advice() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    busy = ServerCpu(process="sglang::scheduler", share=0.97)
    pairs = [_pair(rng, boot_cv=0.08, within_cv=0.01, cpu=busy) for _ in range(2)]
    pairs.append(_pair(rng, boot_cv=0.08, within_cv=0.01, cpu=ServerCpu(process="x", share=0.5)))
    assert "of one core" not in undecided_advice(pairs, settings)


def test_a_full_core_beside_a_gpu_bound_point_leaves_the_cpu_out_of_the_advice() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    spinning = ServerCpu(process="sglang::scheduler", share=1.0)
    pairs = [_pair(rng, boot_cv=0.08, within_cv=0.01, cpu=spinning) for _ in range(3)]
    assert "of one core" in undecided_advice(pairs, settings)
    waiting = Pair(
        base={**pairs[0].base, 16: replace(pairs[0].base[16], bound="gpu-bound")},
        head=pairs[0].head,
    )
    assert "of one core" not in undecided_advice([waiting, *pairs[1:]], settings)


def test_undecided_cpu_bound_advice_gives_the_vcpu_speeds_of_the_boots() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=3)
    slow = ServerCpu(process="sglang::scheduler", share=1.0, core=15, core_speed=4.5)
    fast = ServerCpu(process="sglang::scheduler", share=1.0, core=6, core_speed=7.2)
    pairs = [_pair(rng, boot_cv=0.08, within_cv=0.01, cpu=c) for c in (slow, fast, slow)]
    assert undecided_advice(pairs, settings).endswith(
        "its vCPU ran a single-thread probe at 4.5-7.2 M loops/s over 6 boots, the fastest 1.6x "
        "the slowest: this runner's cores do not all run at one speed"
    )


def test_each_pair_is_recorded_with_its_parts_and_its_sides_vcpu_speeds() -> None:
    slow = ServerCpu(process="sglang::scheduler", share=1.0, core=15, core_speed=4.5)
    fast = ServerCpu(process="sglang::scheduler", share=1.0, core=6, core_speed=7.2)
    base = {c: BootPoint(c, [1000.0 * c] * 3, accept_length=3.0, cpu=fast) for c in POINTS}
    head = {c: BootPoint(c, [800.0 * c] * 3, accept_length=3.0, cpu=slow) for c in POINTS}
    record = pair_record(2, Pair(base=base, head=head))
    assert record is not None
    assert (record.pair, record.base_core_speed, record.head_core_speed) == (2, 7.2, 4.5)
    assert record.change == pytest.approx(-0.2)
    assert record.acceptance_change == pytest.approx(0.0)
    assert record.step_time_change == pytest.approx(-0.2)


def test_a_measured_points_server_cpu_goes_with_its_boots_side() -> None:
    point = make_point(4, 100.0, None, requests=1, tokens=1)
    point.server_cpu = ServerCpu(process="sglang::scheduler", share=1.0)
    point.bound = "cpu-bound"
    assert boot_point(point).cpu == point.server_cpu
    assert boot_point(point).bound == "cpu-bound"


def test_undecided_from_noisy_samples_in_quiet_boots_asks_for_repeats() -> None:
    rng = random.Random(7)
    settings = AbSettings(max_pairs=6)
    pairs = [_pair(rng, boot_cv=0.0001, within_cv=0.2) for _ in range(6)]
    split = noise_split(pairs, settings)
    assert split is not None and not split.between_boots
    assert "raise --specperf-repeats" in undecided_advice(pairs, settings)


def test_one_sample_a_point_leaves_the_within_boot_part_unknown() -> None:
    one = Pair(base={1: BootPoint(1, [100.0])}, head={1: BootPoint(1, [90.0])})
    other = Pair(base={1: BootPoint(1, [100.0])}, head={1: BootPoint(1, [120.0])})
    split = noise_split([one, other], AbSettings())
    assert split is not None and split.within_sd is None and split.between_boots


def test_the_pairs_needed_grow_with_the_spread() -> None:
    settings = AbSettings()
    assert pairs_needed(0.02, settings) < pairs_needed(0.07, settings) < pairs_needed(0.2, settings)


def test_undecided_advice_names_a_minimum_effect_the_pairs_could_decide() -> None:
    rng = random.Random(6)
    settings = AbSettings(max_pairs=8)
    pairs = [_pair(rng, boot_cv=0.08, within_cv=0.01) for _ in range(8)]
    split = noise_split(pairs, settings)
    assert split is not None
    effect = reachable_effect(split.pair_sd, settings)
    assert effect is not None and effect > settings.min_effect
    wider = AbSettings(max_pairs=8, min_effect=effect)
    assert pairs_needed(split.pair_sd, wider) <= 8
    assert f"--specperf-min-effect={effect:.2f} would be decided within 8 pairs" in (
        undecided_advice(pairs, settings)
    )


def test_no_reachable_minimum_effect_for_boots_far_apart() -> None:
    assert reachable_effect(1.0, AbSettings(max_pairs=3)) is None


def test_a_regression_is_decided_by_the_pooled_repeated_interval_at_its_look() -> None:
    found = _four_pairs(2, change=-0.10)
    wide = found.pooled.estimate.wide
    assert found.outcome == "regression" and wide is not None
    low, high = (math.exp(x) for x in wide)
    assert decided_by(found, AbSettings()).startswith(
        f"decided by the pooled change's 98% repeated interval {change_interval(low, high)} at "
        "the look after pair 4 (pocock spending over looks after pairs 3..12): below 0"
    )


def test_no_regression_is_decided_by_the_one_sided_lower_bound() -> None:
    found = _four_pairs(1)
    narrow = found.pooled.estimate.narrow
    assert found.outcome == "no-regression" and narrow is not None
    assert decided_by(found, AbSettings()) == (
        "decided by the pooled change's 95% repeated lower bound at the look after pair 4 "
        "(pocock spending over looks after pairs 3..12): "
        f"{relative_change(math.exp(narrow[0]))} is above -5%"
    )


def test_before_the_first_look_no_interval_decides() -> None:
    found = look(3, [_pair(random.Random(5), change=-0.5)], AbSettings())
    assert decided_by(found, AbSettings()) == (
        "no interval yet after 1 pair: the first look is after pair 3"
    )


def test_the_pair_spread_is_the_standard_deviation_of_the_log_changes() -> None:
    """The H200's seed-class A/B of 2026-12-05 (docs/runs/2026-12-05-ladder-slow10-h200)."""
    pairs = [
        AbPair(pair=1, change=-0.095),
        AbPair(pair=2, change=-0.149),
        AbPair(pair=3, change=-0.142),
    ]
    line = pair_spread_line(pairs)
    expected = statistics.stdev(math.log1p(pair.change) for pair in pairs)
    assert line == (
        f"pair changes: -9.5%, -14.9%, -14.2%; their spread {expected:.1%} "
        "(standard deviation, log scale)"
    )


def test_one_pair_has_no_spread() -> None:
    line = pair_spread_line([AbPair(pair=1, change=-0.05)])
    assert line == "pair changes: -5.0% (a spread needs 2 pairs or more)"
