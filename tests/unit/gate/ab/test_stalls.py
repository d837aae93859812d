"""gate/ab/stalls.py: a sample that stalled is left out of an A/B's figures, and said."""

from __future__ import annotations

import math

from pytest_specperf.gate.ab.estimate import AbSettings, BootPoint, Pair
from pytest_specperf.gate.ab.stalls import Stall, Stalls, without_stalls
from pytest_specperf.gate.ab.verdict import look
from pytest_specperf.results.schema import AbStall
from pytest_specperf.run.ab.pairs import AbRun

# The lent H200's seed-class A/B of 2026-12-05 (C=16 and 64, 3 samples per boot): the first
# sample of pair 1's base boot stalled (its requests waited 1.3 s for a first token).
H200_SAMPLES = {
    (1, "base"): {16: [1674, 2786, 2955], 64: [5794, 6003, 5553]},
    (1, "head"): {16: [3015, 2823, 2952], 64: [5880, 5538, 5960]},
    (2, "base"): {16: [3091, 2870, 2631], 64: [6243, 5827, 6048]},
    (2, "head"): {16: [2936, 2944, 3036], 64: [6144, 6029, 5963]},
    (3, "base"): {16: [2944, 2841, 2895], 64: [5528, 6100, 6258]},
    (3, "head"): {16: [2752, 2912, 2767], 64: [5864, 6492, 5720]},
}


def _side(samples: dict[int, list[float]]) -> dict[int, BootPoint]:
    return {c: BootPoint(c, values, accept_length=3.2) for c, values in samples.items()}


def _pairs(samples: dict[tuple[int, str], dict[int, list[float]]]) -> list[Pair]:
    numbers = sorted({n for n, _ in samples})
    return [
        Pair(base=_side(samples[(n, "base")]), head=_side(samples[(n, "head")])) for n in numbers
    ]


def _with(number: int, side: str, concurrency: int, values: list[float]) -> list[Pair]:
    samples = {key: dict(points) for key, points in H200_SAMPLES.items()}
    samples[(number, side)][concurrency] = values
    return _pairs(samples)


def _where(stalls: tuple[Stall, ...]) -> list[tuple[int, str, int, float]]:
    return [(x.pair, x.side, x.concurrency, x.value) for x in stalls]


def test_the_h200_stall_is_left_out_and_its_boot_keeps_the_other_two_samples() -> None:
    pairs, stalls = without_stalls(_pairs(H200_SAMPLES), min_effect=0.05)
    assert _where(stalls.left_out) == [(1, "base", 16, 1674)] and stalls.kept == ()
    assert pairs[0].base[16].tok_s == [2786, 2955]
    assert pairs[0].base[64].tok_s == [5794, 6003, 5553]
    assert "41.7% under its boot's other samples" in stalls.left_out[0].text()


def test_with_the_stall_left_out_the_h200_comparison_is_decided_and_says_so() -> None:
    settings = AbSettings(max_pairs=3)
    found = look(3, _pairs(H200_SAMPLES), settings)
    assert found.outcome == "no-regression"
    assert "1 stalled sample(s) left out (pair 1 base C=16: 1,674.0 tok/s" in found.message(0.05)


def test_a_sample_fifteen_percent_under_its_boot_is_noise_not_a_stall() -> None:
    _, stalls = without_stalls(_with(2, "head", 64, [6144, 6029, 5100]), min_effect=0.05)
    assert [x for x in stalls.left_out + stalls.kept if x.concurrency == 64] == []


def test_a_fast_sample_is_never_a_stall() -> None:
    """A stall cannot make a sample faster; leaving a fast base sample out would flatter head."""
    _, stalls = without_stalls(_with(3, "base", 64, [5528, 9800, 6258]), min_effect=0.05)
    assert (3, "base", 64, 9800) not in _where(stalls.left_out + stalls.kept)


def test_a_stall_on_head_alone_is_kept_and_named_as_kept() -> None:
    """Head stalled, base did not: a change may cause it, so it stays in the figures."""
    samples = {key: dict(points) for key, points in H200_SAMPLES.items()}
    samples[(1, "base")][16] = [2870, 2786, 2955]
    samples[(2, "head")][16] = [1700, 2944, 3036]
    pairs, stalls = without_stalls(_pairs(samples), min_effect=0.05)
    assert stalls.left_out == () and _where(stalls.kept) == [(2, "head", 16, 1700)]
    assert pairs[1].head[16].tok_s == [1700, 2944, 3036]
    assert "1 stalled sample(s) of head kept (pair 2 head C=16: 1,700.0 tok/s" in stalls.text()


def test_head_stalls_are_left_out_only_as_often_as_base_stalled() -> None:
    """One base stall lets one head stall go (the furthest); the second head stall stays."""
    samples = {key: dict(points) for key, points in H200_SAMPLES.items()}
    samples[(2, "head")][64] = [3000, 6029, 5963]
    samples[(3, "head")][64] = [5864, 3200, 5720]
    pairs, stalls = without_stalls(_pairs(samples), min_effect=0.05)
    assert _where(stalls.left_out) == [(1, "base", 16, 1674), (2, "head", 64, 3000)]
    assert _where(stalls.kept) == [(3, "head", 64, 3200)]
    assert pairs[2].head[64].tok_s == [5864, 3200, 5720]


def test_at_most_one_sample_per_boot_and_point_is_left_out() -> None:
    """The slowest of two slow samples goes; the other stays, as does the boot's majority."""
    pairs, stalls = without_stalls(
        _with(2, "base", 64, [6243, 3000, 2900, 6100, 6000]), min_effect=0.05
    )
    assert [x.value for x in stalls.left_out if x.pair == 2] == [2900]
    assert pairs[1].base[64].tok_s == [6243, 3000, 6100, 6000]


def test_two_samples_per_boot_are_never_judged() -> None:
    two = {
        key: {c: values[1:] for c, values in points.items()} for key, points in H200_SAMPLES.items()
    }
    two[(1, "base")][16] = [1674, 2955]
    pairs, stalls = without_stalls(_pairs(two), min_effect=0.05)
    assert stalls == Stalls()
    assert pairs[0].base[16].tok_s == [1674, 2955]


def test_too_few_boots_say_nothing_of_a_typical_distance() -> None:
    one_pair = {key: points for key, points in H200_SAMPLES.items() if key[0] == 1}
    _, stalls = without_stalls(_pairs(one_pair), min_effect=0.05)
    assert stalls == Stalls()


def test_a_point_with_a_zero_or_endless_sample_is_not_judged_for_stalls() -> None:
    for broken in (0.0, math.inf):
        pairs, stalls = without_stalls(_with(1, "head", 64, [5880, broken, 5960]), 0.05)
        assert (1, "head", 64) not in [(x.pair, x.side, x.concurrency) for x in stalls.left_out]
        assert pairs[0].head[64].tok_s == [5880, broken, 5960]


def test_a_point_measured_on_one_side_only_is_not_judged_for_stalls() -> None:
    samples = {key: dict(points) for key, points in H200_SAMPLES.items()}
    for key in samples:
        samples[key][4] = [500.0, 510.0, 505.0]
    del samples[(1, "head")][4]
    samples[(1, "base")][4] = [100.0, 510.0, 505.0]
    _, stalls = without_stalls(_pairs(samples), min_effect=0.05)
    assert (1, "base", 4) not in [(x.pair, x.side, x.concurrency) for x in stalls.left_out]


def test_results_json_keeps_what_was_left_out_and_the_pairs_changes_without_it() -> None:
    settings = AbSettings(max_pairs=3)
    run = AbRun(depth=3, settings=settings, pairs=_pairs(H200_SAMPLES))
    run.last = look(3, run.pairs, settings)
    comparison = run.comparison()
    assert comparison.stalls == [
        AbStall(
            pair=1, side="base", concurrency=16, tok_s=1674, others_median=2870.5, left_out=True
        )
    ]
    assert "stalled sample(s) left out" in comparison.message
    # Pair 1's pooled change from the base boot's two other samples at C=16: about +1%, where
    # the stalled sample in it would make about +10%.
    assert abs(comparison.pair_changes[0].change) < 0.03


def test_with_the_runners_prior_the_look_judges_the_pairs_without_the_stall() -> None:
    from pytest_specperf.gate.ab.prior import PairPrior

    settings = AbSettings(max_pairs=3)
    prior = PairPrior(0.03, 10, "a test history")
    found = look(3, _pairs(H200_SAMPLES), settings, prior)
    assert found.judged_pairs[0].base[16].tok_s == [2786, 2955]
    message = found.message(0.05)
    assert "with the runner's prior pair spread 3.0%" in message
    assert "1 stalled sample(s) left out (pair 1 base C=16" in message
