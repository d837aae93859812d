"""pytest_specperf.gate.decision: summaries, noise estimates and the verdict of one figure."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.gate.decision import (
    Comparison,
    GateSettings,
    PointInput,
    Reference,
    Remeasured,
    compare,
    depth_verdict,
    judge_depth,
    points_to_confirm,
    summarize,
    verdict,
)
from pytest_specperf.gate.noise import (
    PRIOR_BOOT_CV,
    MetricNoise,
    boot_noise_upper_bound,
    estimate_noise,
)
from pytest_specperf.results.formats import relative_change
from pytest_specperf.results.schema import Verdict
from pytest_specperf.results.verdict_report import verdict_markdown
from tests.unit.results_samples import sample_run

positive = st.floats(min_value=1.0, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_summarize_one_sample_has_no_interval() -> None:
    """One sample is its own median and says nothing about its spread."""
    assert summarize([123.0]) == (123.0, None)


def test_summarize_reports_median_and_level() -> None:
    """Several samples: the median, and a 95% interval naming its method."""
    median, interval = summarize([90.0, 100.0, 130.0])
    assert median == 100.0
    assert interval is not None and interval.level == 0.95 and "t interval" in interval.method


@given(st.lists(positive, min_size=2, max_size=12))
def test_summarize_interval_brackets_the_geometric_mean(samples: list[float]) -> None:
    """The interval is around the geometric mean of the samples, low <= high."""
    _, interval = summarize(samples)
    geometric = math.exp(sum(math.log(x) for x in samples) / len(samples))
    assert interval is not None
    assert interval.low <= geometric * (1 + 1e-9) and geometric <= interval.high * (1 + 1e-9)


def test_summarize_interval_narrows_with_more_samples() -> None:
    """The same spread over more samples gives a narrower interval."""
    _, few = summarize([95.0, 105.0] * 2)
    _, many = summarize([95.0, 105.0] * 8)
    assert few is not None and many is not None
    assert many.high - many.low < few.high - few.low


def test_summarize_refuses_non_positive_samples() -> None:
    """A throughput of zero has no log: refused rather than silently dropped."""
    with pytest.raises(ValueError, match="positive"):
        summarize([100.0, 0.0])


def test_estimate_noise_one_boot_has_no_boot_to_boot_figure() -> None:
    """One boot gives the within-boot noise only."""
    noise = estimate_noise([[100.0, 102.0, 98.0]], "recorded repeats")
    assert noise.boot_to_boot_cv is None and noise.within_boot_cv == pytest.approx(0.02, rel=0.01)


def test_estimate_noise_identical_boots_have_zero_boot_to_boot() -> None:
    """Boots whose means agree give a boot-to-boot noise of zero, never negative."""
    noise = estimate_noise([[99.0, 101.0], [101.0, 99.0]], "calibrated")
    assert noise.boot_to_boot_cv == 0.0 and noise.samples == 4 and noise.boots == 2


def calibrated(within: float = 0.03, between: float | None = 0.01) -> MetricNoise:
    return MetricNoise(
        source="calibrated",
        within_boot_cv=within,
        boot_to_boot_cv=between,
        samples=25,
        boots=5,
    )


def reference(noise: MetricNoise | None = None, *, published: bool = False) -> Reference:
    samples = () if published else tuple([100.0] * 25)
    return Reference(
        figure=100.0, samples=samples, boots=5, noise=noise or calibrated(), published=published
    )


SETTINGS = GateSettings()


def test_compare_published_figure_uses_fixed_tolerance() -> None:
    """A published figure is held to baseline x (1 - tolerance), and says so."""
    result = compare([89.0], reference(published=True), alpha=0.01, settings=SETTINGS)
    assert result.regression and result.se is None
    assert "published figure: fixed tolerance 10%" in result.noise_source
    assert not compare([91.0], reference(published=True), alpha=0.01, settings=SETTINGS).regression


def test_compare_recorded_repeats_keep_the_fixed_tolerance() -> None:
    """Noise from one boot's repeats is not calibrated: the fixed rule applies to the mean."""
    noise = MetricNoise(source="recorded repeats", within_boot_cv=0.001, samples=5, boots=1)
    result = compare([95.0] * 5, reference(noise), alpha=0.01, settings=SETTINGS)
    assert not result.regression and "not calibrated" in result.noise_source


def test_compare_calibrated_threshold_grows_with_noise() -> None:
    """More noise, wider threshold: the same drop fails under small noise, passes under large."""
    drop = [93.0] * 5
    quiet = compare(drop, reference(calibrated(0.01, 0.005)), alpha=0.01, settings=SETTINGS)
    loud = compare(drop, reference(calibrated(0.10, 0.05)), alpha=0.01, settings=SETTINGS)
    assert quiet.regression and not loud.regression and loud.threshold > quiet.threshold


def test_compare_small_drop_never_fails_however_clear() -> None:
    """Below the minimum effect, a drop passes even when the noise is tiny."""
    tiny = calibrated(0.001, 0.0005)
    assert not compare([98.0] * 5, reference(tiny), alpha=0.01, settings=SETTINGS).regression


def test_compare_unknown_boot_noise_keeps_the_explicit_tolerance() -> None:
    """One calibration boot: the threshold is at least the baseline's tolerance."""
    result = compare([93.0] * 5, reference(calibrated(0.01, None)), alpha=0.01, settings=SETTINGS)
    assert not result.regression and "tolerance 10% kept" in result.noise_source


def _points(values: dict[int, float], noise: MetricNoise | None = None) -> list[PointInput]:
    return [
        PointInput(
            concurrency=c,
            samples={"agg_tok_s": [v] * 5},
            references={"agg_tok_s": reference(noise)},
        )
        for c, v in values.items()
    ]


def test_depth_test_catches_a_drop_shared_by_every_point() -> None:
    """A 5% drop at five points fails the pooled depth test, though no single point fails."""
    verdicts = judge_depth(
        3, _points(dict.fromkeys((1, 4, 16, 32, 64), 95.0)), SETTINGS, path="p", refresh_hint="r"
    )
    by_kind = {(v.concurrency is None, v.outcome) for v in verdicts}
    assert (True, "regression") in by_kind and (False, "regression") not in by_kind


def test_improvement_is_reported_with_the_refresh_command_and_never_fails() -> None:
    """A clear improvement is an 'improvement' verdict naming the command that re-records."""
    verdicts = judge_depth(3, _points({1: 130.0}), SETTINGS, path="p", refresh_hint="REC")
    assert {v.outcome for v in verdicts} == {"improvement"}
    assert all("REC" in v.message and v.refresh_command == "REC" for v in verdicts)


def test_only_improvements_carry_the_refresh_command() -> None:
    """A pass or a regression has no command to re-record: the baseline stays."""
    verdicts = judge_depth(3, _points({1: 100.0, 4: 60.0}), SETTINGS, path="p", refresh_hint="REC")
    assert {v.outcome for v in verdicts} >= {"pass", "regression"}
    assert all(v.refresh_command is None for v in verdicts if v.outcome != "improvement")


def judge_confirmed(
    points: list[PointInput], remeasure: Callable[[list[int]], dict[int, Remeasured]]
) -> list[Verdict]:
    """What the suite does: ask which points to confirm, measure them, judge again."""
    again = points_to_confirm(points, SETTINGS)
    confirmed = remeasure(again) if again else None
    return judge_depth(3, points, SETTINGS, path="p", refresh_hint="r", confirmed=confirmed)


def test_a_clear_result_asks_for_no_confirmation() -> None:
    assert points_to_confirm(_points({1: 130.0, 4: 60.0}), SETTINGS) == []


def test_judging_with_confirmation_changes_none_of_its_inputs() -> None:
    points = _points(dict.fromkeys((1, 4, 16), 96.0))
    before = [(p.samples, p.boots, p.client_bound) for p in points]
    again = points_to_confirm(points, SETTINGS)
    assert again
    judge_depth(
        3,
        points,
        SETTINGS,
        path="p",
        refresh_hint="r",
        confirmed={c: Remeasured({"agg_tok_s": [96.0] * 10}, 2, "saturated") for c in again},
    )
    assert [(p.samples, p.boots, p.client_bound) for p in points] == before


def test_borderline_failure_is_re_measured_and_can_be_confirmed() -> None:
    """A result near the threshold asks for more samples once; a drop that holds is confirmed."""
    asked: list[list[int]] = []

    def remeasure(concurrencies: list[int]) -> dict[int, Remeasured]:
        asked.append(concurrencies)
        return {c: Remeasured({"agg_tok_s": [96.0] * 10}, 2) for c in concurrencies}

    verdicts = judge_confirmed(_points(dict.fromkeys((1, 4, 16, 32, 64), 96.0)), remeasure)
    depth = next(v for v in verdicts if v.concurrency is None)
    assert len(asked) == 1 and depth.outcome == "regression" and depth.confirmed
    assert depth.remeasured
    assert "confirmed by re-measuring" in depth.message


def test_borderline_failure_that_does_not_hold_passes() -> None:
    """When the new samples show no drop, the borderline result is not confirmed and passes."""

    def remeasure(concurrencies: list[int]) -> dict[int, Remeasured]:
        return {c: Remeasured({"agg_tok_s": [96.0] * 5 + [104.0] * 5}, 2) for c in concurrencies}

    verdicts = judge_confirmed(_points(dict.fromkeys((1, 4, 16, 32, 64), 96.0)), remeasure)
    depth = next(v for v in verdicts if v.concurrency is None)
    assert depth.outcome == "pass" and not depth.confirmed and "not confirmed" in depth.message
    assert depth.remeasured


def test_point_whose_confirmation_sample_was_client_bound_is_not_judged() -> None:
    """A borderline point re-measured with a client-bound sample is unjudged, not confirmed,
    and the depth pools only the points still judged."""

    def remeasure(concurrencies: list[int]) -> dict[int, Remeasured]:
        return {
            c: Remeasured(
                {"agg_tok_s": [96.0] * 10}, 2, "sample 7 of 10: saturated" if c == 4 else None
            )
            for c in concurrencies
        }

    verdicts = judge_confirmed(_points(dict.fromkeys((1, 4, 16), 96.0)), remeasure)
    at_4 = [v for v in verdicts if v.concurrency == 4]
    depth = next(v for v in verdicts if v.concurrency is None)
    assert [v.outcome for v in at_4] == ["unjudged"] and "sample 7 of 10" in at_4[0].message
    assert "2 points pooled, 1 client-bound left out" in depth.message


def test_regression_message_keeps_the_old_shape_and_adds_the_evidence() -> None:
    """'steps=3 C=16: agg tok/s X < floor Y (baseline Z - T%) [path]' then median, interval,
    samples and noise source."""
    point = PointInput(
        concurrency=16,
        samples={"agg_tok_s": [70.0, 71.0, 69.0]},
        references={"agg_tok_s": reference()},
    )
    verdicts = judge_depth(3, [point], SETTINGS, path="base.json", refresh_hint="r")
    message = next(v for v in verdicts if v.concurrency == 16).message
    assert message.startswith("steps=3 C=16: agg tok/s 70.0 < floor ")
    for part in (
        "(baseline 100.0 - ",
        "%) [base.json]",
        "geometric mean of 3 samples",
        "median 70.0",
    ):
        assert part in message
    assert "95% interval" in message and "noise: calibrated" in message


def _calibrated(boots: int, within: float = 0.03, between: float = 0.0) -> Reference:
    """A baseline calibrated over ``boots`` boots of 3 samples each, all at 100 tok/s."""
    noise = MetricNoise(
        source="calibrated",
        within_boot_cv=within,
        boot_to_boot_cv=between,
        samples=3 * boots,
        boots=boots,
    )
    return Reference(figure=100.0, samples=tuple([100.0] * 3 * boots), boots=boots, noise=noise)


def test_two_boots_never_claim_no_noise_between_boots() -> None:
    """Calibrated over 2 boots with 0.0% between them: the prior stands in, and says so."""
    result = compare([90.0] * 3, _calibrated(2), alpha=0.002, settings=SETTINGS)
    assert "boot-to-boot 0.0% from 2 boots, taken as at least 5%" in result.noise_source
    assert result.se is not None and result.se > PRIOR_BOOT_CV
    assert not result.regression  # a 10% drop is within what two boots can tell apart


def test_three_boots_take_the_upper_bound_of_their_boot_noise() -> None:
    result = compare([91.4] * 3, _calibrated(3, within=0.043), alpha=0.002, settings=SETTINGS)
    assert "boot-to-boot 0.0% from 3 boots, taken as 2.4%" in result.noise_source
    assert not result.regression  # red with the 0.0% estimate on the H200 (seed-class profile)


def test_five_boots_use_their_estimate_and_say_from_how_many_boots() -> None:
    result = compare([100.0] * 3, _calibrated(5), alpha=0.002, settings=SETTINGS)
    assert "boot-to-boot 0.0% from 5 boots)" in result.noise_source


def test_the_boot_noise_bound_stays_near_a_quiet_deployments_own_noise() -> None:
    bound = boot_noise_upper_bound(0.0, 0.001, boots=3, per_boot=3)
    assert 0 < bound < 0.001


def test_an_improvement_line_reads_the_change_report_md_shows() -> None:
    """Issue 49's case: 1,162.3 against 613.9 is +89.3% in the failing line and in report.md's
    change column alike, never the log ratio (63.8%) as a percent."""
    ref = Reference(figure=613.9, samples=(613.9,) * 25, boots=5, noise=calibrated())
    point = PointInput(1, {"agg_tok_s": [1162.3] * 5}, {"agg_tok_s": ref})
    verdicts = judge_depth(3, [point], SETTINGS, path="p", refresh_hint="r")
    line = next(v for v in verdicts if v.concurrency == 1)
    report = verdict_markdown([sample_run(3, verdicts=verdicts)])
    assert "agg tok/s 1,162.3 is 89.3% better than baseline 613.9" in line.message
    assert f"| {relative_change(line.measured / line.baseline)} |" in report
    assert "| +89.3% |" in report


def test_a_re_measured_verdict_reads_its_changes_from_their_ratios() -> None:
    """The confirmation says each look's change as the ratio reads (-20.0%, not log -22.3%)."""
    first = Comparison(math.log(0.8), 0.05, 0.04, True, "n", 80.0, 100.0)
    second = Comparison(math.log(0.75), 0.05, 0.02, False, "n", 75.0, 100.0)
    point = verdict(3, 1, "agg_tok_s", [75.0] * 4, second, path="p", refresh_hint="r", first=first)
    depth = depth_verdict(3, second, points=1, path="p", refresh_hint="r", first=first)
    assert "(-20.0% first, -25.0% with the new samples)" in point.message
    assert "every point (-20.0% first, -25.0% with the new samples)" in depth.message
    assert "throughput -25.0% vs baseline" in depth.message


def test_a_point_the_baseline_has_no_figures_for_gets_a_no_baseline_verdict_naming_it() -> None:
    """C=2 measured, absent from the baseline: not passed over in silence, but a no-baseline
    verdict whose line names the point and the file; the judged point keeps its verdicts."""
    lacking = PointInput(concurrency=2, samples={"agg_tok_s": [100.0] * 5}, references={})
    verdicts = judge_depth(
        3, [*_points({1: 100.0}), lacking], SETTINGS, path="b.json", refresh_hint="r"
    )
    (no_baseline,) = [v for v in verdicts if v.outcome == "no-baseline"]
    assert (no_baseline.depth, no_baseline.concurrency) == (3, 2)
    assert no_baseline.message == "steps=3 C=2: not judged: no baseline point [b.json]"
    assert {v.outcome for v in verdicts if v.concurrency == 1} == {"pass"}


def test_an_open_loop_point_the_baseline_lacks_is_named_by_its_load() -> None:
    lacking = PointInput(
        concurrency=0, samples={"agg_tok_s": [100.0]}, references={}, load="rate=4"
    )
    (verdict,) = judge_depth(3, [lacking], SETTINGS, path="b.json", refresh_hint="r")
    assert verdict.outcome == "no-baseline" and verdict.load == "rate=4"
    assert verdict.message.startswith("steps=3 rate=4: not judged: no baseline point")
