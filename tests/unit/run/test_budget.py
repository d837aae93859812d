"""run/budget.py: a run's estimated time before anything boots, and the time budget's refusal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.errors import UsageError
from pytest_specperf.gate.baselines import Baseline, BaselinePoint
from pytest_specperf.measure.arrivals import rate_offsets
from pytest_specperf.run.budget import SAMPLE_OVERHEAD_S, check_budget, estimate


def settings(tmp_path: Path, **options: object) -> Settings:
    values: dict[str, object] = {
        "backend": "sim",
        "spec_steps": "3",
        "concurrency": "1,4",
        "max_new_tokens": "100",
        "min_point_seconds": "2",
        "boot_estimate": "50",
        **options,
    }
    return build_settings(lambda key: values.get(key), tmp_path)


def baseline(agg: dict[int, float], per_req: float = 100.0) -> Baseline:
    return Baseline(
        schema_version=2,
        profile="p",
        hardware="sim-x5",
        depth=3,
        backend="sim",
        recorded_at="",
        recorded_by="measured",
        how_recorded="",
        points={str(c): BaselinePoint(agg_tok_s=a, per_req_tok_s=per_req) for c, a in agg.items()},
    )


def test_without_a_baseline_samples_count_at_their_minimum_length(tmp_path: Path) -> None:
    found = estimate(settings(tmp_path, repeats="3"), {})
    assert found.lower_bound and found.boots == 1 and found.samples == 6
    # A boot, its warm-up (3 rounds x 2 points x 2 s) and 6 samples of 2 s.
    assert found.total_s == pytest.approx(50 + 12 + 6 * (2 + SAMPLE_OVERHEAD_S))
    assert found.line().startswith("estimated run time: at least ")


def test_a_baseline_gives_each_sample_and_warmup_round_its_length(tmp_path: Path) -> None:
    # C=1: 4 requests x 100 tokens at 50 tok/s = 8 s; C=4: 8 x 100 at 800 tok/s = 1 s -> 2 s.
    # Each sample's short warm-up: 32 tokens at 100 tok/s per request = 0.32 s.
    found = estimate(settings(tmp_path, warmup_rounds="3"), {3: baseline({1: 50.0, 4: 800.0})})
    assert not found.lower_bound
    assert found.measure_s == pytest.approx(8 + 2 + 2 * (0.32 + SAMPLE_OVERHEAD_S))
    # A warm-up round measures each point as a sample does: 8 s + 2 s, three rounds.
    assert found.warmup_s == pytest.approx(30.0)


def test_calibration_boots_every_depth_that_many_times(tmp_path: Path) -> None:
    found = estimate(
        settings(tmp_path, spec_steps="0,3", calibrate="1", calibrate_boots="3", repeats="2"), {}
    )
    assert found.boots == 6 and found.samples == 2 * 3 * 2 * 2


def test_a_given_url_boots_nothing(tmp_path: Path) -> None:
    values = {"url": "http://127.0.0.1:1", "spec_steps": "3", "min_point_seconds": "2"}
    found = estimate(build_settings(lambda key: values.get(key), tmp_path), {})
    assert found.boots == 0 and found.total_s > 0


def test_ab_mode_counts_every_pair_both_sides_boot_and_sweep(tmp_path: Path) -> None:
    found = estimate(
        settings(tmp_path, base_server_arg=["--sim-seed=1"], ab_max_pairs="4", repeats="2"), {}
    )
    # 4 pairs x (base, head): 8 boots, 8 warm-ups, 8 sweeps x 2 points x 2 repeats.
    assert (found.boots, found.sweeps, found.samples) == (8, 8, 32)
    assert found.total_s == pytest.approx(8 * 50 + 8 * 12 + 32 * (2 + SAMPLE_OVERHEAD_S))


def test_ab_mode_says_how_long_a_verdict_at_the_first_look_takes(tmp_path: Path) -> None:
    ab = settings(tmp_path, base_server_arg=["--sim-seed=1"], ab_max_pairs="8")
    found = estimate(ab, {})
    three_pairs = estimate(replace(ab, ab_max_pairs=3), {})
    assert found.first_look_s == pytest.approx(three_pairs.total_s)
    assert found.first_look_s < found.total_s
    assert f"first look (3 pairs) takes at least {three_pairs.total_s:,.0f} s" in found.line()
    # At most 3 pairs, the first look is the last: nothing more to say.
    assert three_pairs.first_look_s is None and "A/B" not in three_pairs.line()


def test_an_ab_base_given_by_url_is_not_booted(tmp_path: Path) -> None:
    found = estimate(
        settings(tmp_path, base_url="http://127.0.0.1:1", ab_max_pairs="3", repeats="1"), {}
    )
    assert (found.boots, found.sweeps, found.samples) == (3, 6, 12)


def test_an_ab_run_over_the_budget_is_told_how_many_pairs_fit(tmp_path: Path) -> None:
    # A pair: 2 x (50 s + 12 s warm-up + 2 points x 2.5 s) = 134 s; 8 pairs 1,072 s.
    over = settings(
        tmp_path,
        base_server_arg=["--sim-seed=1"],
        ab_max_pairs="8",
        repeats="1",
        time_budget="700",
    )
    with pytest.raises(UsageError) as caught:
        check_budget(over, {})
    assert "--specperf-ab-max-pairs 5 (~670 s)" in str(caught.value)


def test_the_profiles_boot_estimate_is_used_when_no_option_gives_one(tmp_path: Path) -> None:
    values = {"profile": "smoke-tiny-qwen3next-mtp", "spec_steps": "3"}
    found = estimate(build_settings(lambda key: values.get(key), tmp_path), {})
    assert found.boot_s == 150 and "smoke-tiny-qwen3next-mtp" in found.boot_from


def test_boots_after_the_first_take_the_profiles_later_boot_figure(tmp_path: Path) -> None:
    """The seed-class profile: a first boot of 240 s, later ones of 90 s (its kernels cached)."""
    values = {
        "profile": "qwen3-next-real-width-fp8-mtp",
        "backend": "sglang",
        "spec_steps": "1,2,3",
        "concurrency": "64",
    }
    found = estimate(build_settings(lambda key: values.get(key), tmp_path), {})
    assert (found.boots, found.boot_s, found.later_boot_s) == (3, 240, 90)
    assert found.boots_s == 240 + 2 * 90
    assert "3 boot(s), the first 240 s and 2 later x 90 s (profile qwen3-next-real" in found.line()
    given = estimate(
        build_settings(lambda key: {**values, "boot_estimate": "100"}.get(key), tmp_path), {}
    )
    assert (given.boots_s, given.later_boot_s) == (300, None)


def test_a_run_within_the_budget_passes(tmp_path: Path) -> None:
    assert check_budget(settings(tmp_path, time_budget="1000"), {}).total_s < 1000


def test_a_run_over_the_budget_is_refused_saying_what_would_fit(tmp_path: Path) -> None:
    # 2 boots x (50 s + warm-up 3 rounds x 2 points x 2 s) + 2 x 3 repeats x 2 points x 2.5 s
    # = 154 s; R=2: 144 s; C=1 only: 127 s; one boot: 77 s; one warm-up round: 138 s.
    over = settings(tmp_path, calibrate="1", calibrate_boots="2", repeats="3", time_budget="145")
    with pytest.raises(UsageError) as caught:
        check_budget(over, {})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("--specperf-time-budget: the run is estimated at 154 s")
    assert "--specperf-repeats 2 (~144 s)" in message
    assert "--specperf-concurrency 1 (~127 s)" in message
    assert "--specperf-calibrate-boots 1 (~77 s)" in message
    assert "--specperf-warmup-rounds 1 (~138 s)" in message


def test_nothing_fits_when_the_boots_alone_exceed_the_budget(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="nothing smaller fits either"):
        check_budget(settings(tmp_path, time_budget="10"), {})


def test_the_simulator_ignores_the_profiles_boot_estimate(tmp_path: Path) -> None:
    values = {"profile": "smoke-tiny-qwen3next-mtp", "backend": "sim", "spec_steps": "3"}
    found = estimate(build_settings(lambda key: values.get(key), tmp_path), {})
    assert found.boot_s == 5 and found.boot_from == "default"


def test_the_line_says_what_a_borderline_verdicts_fresh_boot_adds_at_most(
    tmp_path: Path,
) -> None:
    """A boot (50 s), its warm-up (3 rounds of 8 s + 2 s) and each point's 3 samples again."""
    found = estimate(
        settings(tmp_path, warmup_rounds="3", repeats="3"), {3: baseline({1: 50.0, 4: 800.0})}
    )
    samples = 3 * (8 + 0.32 + SAMPLE_OVERHEAD_S) + 3 * (2 + 0.32 + SAMPLE_OVERHEAD_S)
    assert found.confirm_s == pytest.approx(50 + 30 + samples)
    assert f"a borderline verdict re-measured adds up to {found.confirm_s:,.0f} s" in found.line()


def test_a_same_boot_confirmation_adds_only_its_samples(tmp_path: Path) -> None:
    found = estimate(
        settings(tmp_path, confirm="same-boot", repeats="3"), {3: baseline({1: 50.0, 4: 800.0})}
    )
    assert found.confirm_s == pytest.approx(
        3 * (8 + 0.32 + SAMPLE_OVERHEAD_S) + 3 * (2 + 0.32 + SAMPLE_OVERHEAD_S)
    )


def test_nothing_to_confirm_without_a_baseline_or_with_confirmation_off(tmp_path: Path) -> None:
    assert estimate(settings(tmp_path), {}).confirm_s is None
    off = estimate(settings(tmp_path, confirm="off"), {3: baseline({1: 50.0, 4: 800.0})})
    assert off.confirm_s is None and "borderline" not in off.line()


def test_a_rate_point_lasts_its_seeded_schedules_span(tmp_path: Path) -> None:
    # 4 requests a second for 5 s of arrivals: 20 requests on the run's own seeded schedule
    # (its last send 2.9 s after the first); twice (two repeats).
    closed = estimate(settings(tmp_path, repeats="2"), {})
    found = estimate(
        settings(tmp_path, repeats="2", request_rate="4", rate_seconds="5"),
        {},
    )
    span = rate_offsets(4.0, 20)[-1]
    assert 0 < span < 10
    assert found.samples == closed.samples + 2
    assert found.measure_s - closed.measure_s == pytest.approx(2 * (span + SAMPLE_OVERHEAD_S))


def test_a_trace_replay_lasts_at_least_its_span_at_the_replay_speed(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"timestamp": 0, "input_length": 10, "output_length": 5}\n'
        '{"timestamp": 30000, "input_length": 10, "output_length": 5}\n'
    )
    found = estimate(settings(tmp_path, workload=f"trace:{trace}", trace_speed="2"), {})
    # The closed-loop points at their 2 s minimum each, the 30 s trace at twice its speed.
    closed_s = 2 * (2 + SAMPLE_OVERHEAD_S)
    assert found.measure_s == pytest.approx(closed_s + 15 + SAMPLE_OVERHEAD_S)


def test_calibrating_boots_measure_an_open_loop_point_once_a_depth(tmp_path: Path) -> None:
    """The sweep repeats on every calibration boot; a rate point is measured once a depth."""
    once = estimate(settings(tmp_path, request_rate="4", rate_seconds="5"), {})
    without = estimate(settings(tmp_path), {})
    calibrated = estimate(
        settings(tmp_path, request_rate="4", rate_seconds="5", calibrate="1", calibrate_boots="3"),
        {},
    )
    calibrated_without = estimate(settings(tmp_path, calibrate="1", calibrate_boots="3"), {})
    assert calibrated.measure_s - calibrated_without.measure_s == pytest.approx(
        once.measure_s - without.measure_s
    )
