"""gate/ab_stalls.py: a sample that stalled is left out of an A/B's figures, and said."""

from __future__ import annotations

from pytest_specperf.gate.ab import AbRun, look
from pytest_specperf.gate.ab_pairs import AbSettings, BootPoint, Pair
from pytest_specperf.gate.ab_stalls import without_stalls

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


def test_the_h200_stall_is_left_out_and_its_boot_keeps_the_other_two_samples() -> None:
    pairs, left_out = without_stalls(_pairs(H200_SAMPLES), min_effect=0.05)
    assert [(x.pair, x.side, x.concurrency, x.value) for x in left_out] == [(1, "base", 16, 1674)]
    assert pairs[0].base[16].tok_s == [2786, 2955]
    assert pairs[0].base[64].tok_s == [5794, 6003, 5553]
    assert "42% under its boot's other samples" in left_out[0].text()


def test_with_the_stall_left_out_the_h200_comparison_is_decided_and_says_so() -> None:
    settings = AbSettings(max_pairs=3)
    found = look(3, _pairs(H200_SAMPLES), settings)
    assert found.outcome == "no-regression"
    assert "1 stalled sample(s) left out (pair 1 base C=16: 1,674.0 tok/s" in found.message(0.05)


def test_a_sample_fifteen_percent_off_its_boot_is_noise_not_a_stall() -> None:
    pairs = _with(2, "head", 64, [6144, 6029, 5100])
    _, left_out = without_stalls(pairs, min_effect=0.05)
    assert [x for x in left_out if x.concurrency == 64] == []


def test_a_fast_outlier_is_left_out_as_a_slow_one_is() -> None:
    pairs = _with(3, "head", 64, [5864, 9800, 5720])
    _, left_out = without_stalls(pairs, min_effect=0.05)
    assert (3, "head", 64, 9800) in [(x.pair, x.side, x.concurrency, x.value) for x in left_out]


def test_at_most_one_sample_per_boot_and_point_is_left_out() -> None:
    pairs = _with(2, "base", 64, [6243, 3000, 2900, 6100, 6000])
    cleaned, left_out = without_stalls(pairs, min_effect=0.05)
    assert len([x for x in left_out if (x.pair, x.side, x.concurrency) == (2, "base", 64)]) <= 1
    assert len(cleaned[1].base[64].tok_s) >= 4


def test_two_samples_per_boot_are_never_judged() -> None:
    two = {
        key: {c: values[1:] for c, values in points.items()} for key, points in H200_SAMPLES.items()
    }
    two[(1, "base")][16] = [1674, 2955]
    pairs, left_out = without_stalls(_pairs(two), min_effect=0.05)
    assert left_out == []
    assert pairs[0].base[16].tok_s == [1674, 2955]


def test_too_few_boots_say_nothing_of_a_typical_distance() -> None:
    one_pair = {key: points for key, points in H200_SAMPLES.items() if key[0] == 1}
    _, left_out = without_stalls(_pairs(one_pair), min_effect=0.05)
    assert left_out == []


def test_results_json_keeps_what_was_left_out_and_the_pairs_changes_without_it() -> None:
    settings = AbSettings(max_pairs=3)
    run = AbRun(depth=3, settings=settings, pairs=_pairs(H200_SAMPLES))
    run.last = look(3, run.pairs, settings)
    comparison = run.comparison()
    assert comparison.left_out == [
        "pair 1 base C=16: 1,674.0 tok/s, 42% under its boot's other samples"
    ]
    assert "stalled sample(s) left out" in comparison.message
    # Pair 1's pooled change from the base boot's two other samples at C=16: about +1%, where
    # the stalled sample in it would make about +10%.
    assert abs(comparison.pair_changes[0].change) < 0.03
