"""pytest_specperf.gate.floors: measured figures against floors derived from a baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_specperf.gate.baselines import (
    BASELINE_SCHEMA_VERSION,
    Baseline,
    BaselinePoint,
    KvCapacity,
    Tolerance,
)
from pytest_specperf.gate.decision import GateSettings, judge_depth
from pytest_specperf.gate.floors import (
    accept_length_failure,
    backend_mismatch,
    failure_lines,
    floor,
    kv_failures,
    point_input,
    position_accept_failures,
    speedup_failures,
    success_failure,
    version_drift,
    workload_mismatch,
)
from pytest_specperf.results.acceptance import SamplingBound
from pytest_specperf.results.schema import (
    ClientHealth,
    PointMetrics,
    ServerSummary,
    Speedup,
    Verdict,
)
from tests.support import points

PATH = Path("baselines/prof/2x-h200/steps-3.json")


def make_baseline(**changes: object) -> Baseline:
    values: dict[str, object] = {
        "schema_version": BASELINE_SCHEMA_VERSION,
        "profile": "prof",
        "hardware": "2x-h200",
        "depth": 3,
        "backend": "sglang",
        "recorded_at": "2025-01-01T00:00:00+00:00",
        "recorded_by": "published",
        "how_recorded": "unit test",
        "sglang_version": "0.5.12",
        "tolerance": Tolerance(throughput=0.10, accept_length=0.05),
        "workload": {"max_new_tokens": 1000, "temperature": 0.0},
        "kv": KvCapacity(max_total_num_tokens=1000, max_running_requests=48),
        "accept_length": 3.0,
        "points": {"4": BaselinePoint(agg_tok_s=1000.0, per_req_tok_s=200.0)},
    }
    values.update(changes)
    return Baseline(**values)  # type: ignore[arg-type]


def make_point(
    agg: float = 1000.0,
    per_req: float | None = 200.0,
    *,
    concurrency: int = 4,
    ok: int = 8,
    errors: dict[str, int] | None = None,
) -> PointMetrics:
    return points.make_point(
        concurrency,
        agg,
        per_req,
        requests=8,
        failed=8 - ok,
        errors=errors or {},
        tokens=8000,
        wall_s=8.0,
    )


def judge(point: PointMetrics, baseline: Baseline | None = None) -> list[Verdict]:
    return judge_depth(
        3,
        [point_input(point, baseline or make_baseline())],
        GateSettings(),
        path=str(PATH),
        refresh_hint="cmd",
    )


def throughput_failures(point: PointMetrics, baseline: Baseline) -> list[str]:
    return [v.message for v in judge(point, baseline) if v.outcome == "regression"]


def test_throughput_failure_names_steps_c_metric_measured_floor_and_path() -> None:
    """A drop below a published floor is reported with depth, C, metric, measured, floor and
    file, and says that the figure is a published one."""
    failures = throughput_failures(make_point(agg=800.0), make_baseline())
    assert len(failures) == 1
    message = failures[0]
    for part in ("steps=3", "C=4", "agg tok/s", "800.0", "floor 900.0", "- 10%", str(PATH)):
        assert part in message
    assert "published figure" in message


def test_throughput_passes_at_exactly_the_floor() -> None:
    """Measured figures equal to the floors pass."""
    point = make_point(agg=floor(1000.0, 0.10), per_req=floor(200.0, 0.10))
    assert throughput_failures(point, make_baseline()) == []


def test_throughput_fails_per_request_rate_separately() -> None:
    """A per-request decode rate below its floor fails on its own."""
    failures = throughput_failures(make_point(per_req=150.0), make_baseline())
    assert len(failures) == 1 and "per-req tok/s" in failures[0]


def test_throughput_unmeasured_per_request_rate_fails() -> None:
    """A baseline figure the run did not measure is a failure, not a pass."""
    failures = throughput_failures(make_point(per_req=None), make_baseline())
    assert len(failures) == 1 and "not measured" in failures[0]


def test_throughput_without_baseline_point_has_no_failures() -> None:
    """A concurrency the baseline does not cover is not gated."""
    point = make_point(agg=1.0, per_req=1.0, concurrency=64)
    assert throughput_failures(point, make_baseline()) == []


def test_client_bound_point_is_not_judged() -> None:
    """A point the load generator bounded gets an unjudged verdict naming the reason."""
    point = make_point(agg=1.0)
    point.client_bound = "event loop lag p99 80 ms"
    verdicts = judge_depth(
        3, [point_input(point, make_baseline())], GateSettings(), path="p", refresh_hint="c"
    )
    assert {v.outcome for v in verdicts} == {"unjudged"}
    assert "not judged (neither pass nor fail)" in verdicts[0].message
    assert "event loop lag p99 80 ms" in verdicts[0].message
    assert "--specperf-client-procs" in verdicts[0].message  # what to do


def test_kv_capacity_one_token_less_fails() -> None:
    """KV capacity has no tolerance: one token below the baseline fails."""
    server = ServerSummary(url="u", max_total_num_tokens=999, max_running_requests=48)
    failures = kv_failures(server, make_baseline(), 3, PATH)
    assert len(failures) == 1
    assert "max_total_num_tokens" in failures[0] and "lost: 1" in failures[0]
    assert str(PATH) in failures[0]


def test_kv_capacity_equal_passes() -> None:
    """KV capacity equal to the baseline passes."""
    server = ServerSummary(url="u", max_total_num_tokens=1000, max_running_requests=48)
    assert kv_failures(server, make_baseline(), 3, PATH) == []


def test_kv_capacity_not_reported_fails() -> None:
    """A server that does not report KV capacity fails against a baseline that has it."""
    server = ServerSummary(url="u", max_total_num_tokens=None, max_running_requests=48)
    failures = kv_failures(server, make_baseline(), 3, PATH)
    assert len(failures) == 1 and "reported no max_total_num_tokens" in failures[0]


def test_accept_length_below_floor_fails() -> None:
    """An accept length below baseline x (1 - tolerance) fails, naming the file."""
    message = accept_length_failure(2.8, make_baseline(), 3, PATH)
    assert message is not None and "accept length" in message and str(PATH) in message


def test_accept_length_at_floor_passes() -> None:
    """An accept length at the floor passes."""
    assert accept_length_failure(floor(3.0, 0.05), make_baseline(), 3, PATH) is None


def test_accept_length_below_floor_within_its_samples_spread_passes() -> None:
    """A shortfall that the samples' own upper bound still covers is not a regression."""
    upper = SamplingBound(value=2.9, confidence=0.99, samples=9)
    assert accept_length_failure(2.8, make_baseline(), 3, PATH, upper=upper) is None


def test_accept_length_below_floor_beyond_its_samples_spread_fails_saying_so() -> None:
    """When even the samples' upper bound is under the floor, the message gives that bound."""
    upper = SamplingBound(value=2.82, confidence=0.99, samples=9)
    message = accept_length_failure(2.8, make_baseline(), 3, PATH, upper=upper)
    assert message is not None
    assert "beyond the spread of its 9 samples (upper 99% bound 2.82)" in message


def test_accept_length_without_baseline_figure_passes() -> None:
    """A baseline without an accept length does not gate it."""
    assert accept_length_failure(1.0, make_baseline(accept_length=None), 3, PATH) is None


def test_success_failure_lists_failure_reasons() -> None:
    """A point below the success rate lists each failure reason with its count."""
    point = make_point(ok=5, errors={"HTTP 500": 2, "timeout": 1})
    message = success_failure(point, 1.0, 3)
    assert message is not None
    assert "5/8" in message and "HTTP 500: 2" in message and "timeout: 1" in message


def test_success_at_required_rate_passes() -> None:
    """A point whose success rate meets the requirement passes."""
    assert success_failure(make_point(ok=6, errors={"timeout": 2}), 0.75, 3) is None


def test_version_drift_names_both_versions() -> None:
    """A server version other than the baseline's is reported with both versions."""
    message = version_drift(ServerSummary(url="u", version="0.5.13"), make_baseline())
    assert message is not None and "0.5.13" in message and "0.5.12" in message


@pytest.mark.parametrize("version", ["0.5.12", None])
def test_version_drift_silent_for_same_or_unknown_version(version: str | None) -> None:
    """The same version, or an unknown one, is no drift."""
    assert version_drift(ServerSummary(url="u", version=version), make_baseline()) is None


def test_backend_mismatch_names_both_backends() -> None:
    """Simulator figures are not judged against a baseline measured on SGLang."""
    message = backend_mismatch("sim", make_baseline(backend="sglang"))
    assert message is not None and "backend sglang" in message and "backend sim" in message


@pytest.mark.parametrize(
    ("run", "recorded"),
    [("sglang", "sglang"), ("sim", "sim"), (None, "sglang"), ("sim", None), ("sim", "external")],
)
def test_backend_mismatch_silent_for_same_or_unknown_backend(
    run: str | None, recorded: str | None
) -> None:
    """The same backend, or one not known (an old file, a server at --specperf-url), is judged."""
    assert backend_mismatch(run, make_baseline(backend=recorded)) is None


def test_workload_mismatch_ignores_fields_only_one_side_has() -> None:
    """Fields the baseline does not record are not compared."""
    run = {"max_new_tokens": 1000, "temperature": 0.0, "endpoint": "generate"}
    assert workload_mismatch(run, make_baseline()) is None


def test_workload_mismatch_names_differing_common_field() -> None:
    """A common field with different values is reported with both values."""
    message = workload_mismatch({"max_new_tokens": 500, "temperature": 0.0}, make_baseline())
    assert message is not None and "max_new_tokens" in message
    assert "1000" in message and "500" in message and "temperature" not in message


def _client(lag_p99_s: float) -> ClientHealth:
    return ClientHealth(
        cpu_s=1.0, wall_s=10.0, loop_lag_p50_s=0.0, loop_lag_p99_s=lag_p99_s,
        loop_lag_max_s=lag_p99_s, samples=100,
    )  # fmt: skip


def test_throughput_failure_notes_a_client_that_fell_behind() -> None:
    """A floor failure measured by a lagging client says so after the failures."""
    point = make_point(agg=800.0)
    point.client = _client(0.2)
    failures = failure_lines(judge(point), point)
    assert len(failures) == 2
    assert failures[1].startswith("note: the load generator fell behind")


def test_passing_point_gets_no_client_note() -> None:
    """A lagging client alone fails nothing: the note only comes with a floor failure."""
    point = make_point()
    point.client = _client(0.2)
    assert failure_lines(judge(point), point) == []


def test_speedup_below_its_floor_fails_naming_the_ratio() -> None:
    """A speedup over the control under baseline x (1 - tolerance) is one failure line."""
    baseline = make_baseline(
        points={"4": BaselinePoint(agg_tok_s=1.0, agg_speedup=2.0, per_req_speedup=2.5)}
    )
    failures = speedup_failures(
        [Speedup(depth=3, concurrency=4, agg=1.7, per_req=2.4)], baseline, 3, PATH
    )
    assert failures == [
        f"steps=3 C=4: agg speedup over steps=0 1.70x < floor 1.80x (baseline 2.00x - 10%) [{PATH}]"
    ]


def test_speedup_without_recorded_figures_is_not_judged() -> None:
    """A baseline recorded without the control has no speedup floors."""
    failures = speedup_failures(
        [Speedup(depth=3, concurrency=4, agg=0.1, per_req=0.1)], make_baseline(), 3, PATH
    )
    assert failures == []


def test_position_acceptance_below_floor_fails_per_position() -> None:
    """Each draft position is held to its own floor; missing positions fail too."""
    baseline = make_baseline(position_accept_rate=[0.9, 0.8, 0.7])
    failures = position_accept_failures([0.95, 0.70], baseline, 3, PATH)
    assert len(failures) == 2
    assert "draft position 2 0.700 < floor 0.760" in failures[0]
    assert "draft position 3 not measured" in failures[1]


def test_position_acceptance_is_judged_against_each_positions_own_bound() -> None:
    """A position whose samples' upper bound reaches its floor passes; one whose bound does
    not fails (the seed-class H200 case: 0.175 against a 0.177 floor, bound 0.199)."""
    baseline = make_baseline(position_accept_rate=[1.0, 0.186])
    uppers = [None, SamplingBound(value=0.199, confidence=0.99, samples=9)]
    assert position_accept_failures([1.0, 0.175], baseline, 3, PATH, uppers) == []
    uppers = [None, SamplingBound(value=0.135, confidence=0.99, samples=9)]
    failures = position_accept_failures([1.0, 0.117], baseline, 3, PATH, uppers)
    assert len(failures) == 1 and "draft position 2 0.117 < floor 0.177" in failures[0]
