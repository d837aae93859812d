"""pytest_specperf.gate.baselines: self-describing, atomic, key-checked baseline files."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pytest_specperf.errors import BaselineError
from pytest_specperf.gate.baselines import (
    BASELINE_SCHEMA_VERSION,
    Baseline,
    BaselinePoint,
    KvCapacity,
    Tolerance,
    baseline_from_run,
    baseline_from_runs,
    baseline_path,
    encode_baseline,
    load_baseline,
    migrate_file,
    save_baseline,
    with_calibrated_noise,
)
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD
from pytest_specperf.results.schema import (
    DepthRun,
    Goodput,
    Percentiles,
    PointMetrics,
    ServerSummary,
    Slo,
)
from tests.support.points import make_point

REPO_BASELINES = Path(__file__).resolve().parents[3] / "baselines"


def make_baseline(profile: str = "prof", hardware: str = "2x-h200", depth: int = 3) -> Baseline:
    return Baseline(
        schema_version=BASELINE_SCHEMA_VERSION,
        profile=profile,
        hardware=hardware,
        depth=depth,
        backend="sglang",
        recorded_at="2025-01-01T00:00:00+00:00",
        recorded_by="measured",
        how_recorded="unit test",
        sglang_version="0.5.12",
        workload={"max_new_tokens": 1000, "temperature": 0.0},
        kv=KvCapacity(max_total_num_tokens=28951187, max_running_requests=48),
        accept_length=2.5,
        points={"1": BaselinePoint(agg_tok_s=100.0, per_req_tok_s=100.0)},
    )


def baseline_dict(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(make_baseline())
    data.update(changes)
    return data


def write_json(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "steps-3.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    """A saved baseline loads back equal to what was saved."""
    baseline = make_baseline()
    path = save_baseline(tmp_path, baseline)
    assert load_baseline(path) == baseline


def test_a_baseline_without_a_backend_loads_as_unknown(tmp_path: Path) -> None:
    """An old file that does not name its backend still loads; its backend is None."""
    data = baseline_dict()
    del data["backend"]
    baseline = load_baseline(write_json(tmp_path, data))
    assert baseline is not None and baseline.backend is None


def test_save_uses_profile_hardware_steps_layout(tmp_path: Path) -> None:
    """Baselines are filed as <root>/<profile>/<hardware>/steps-<N>.json."""
    path = save_baseline(tmp_path, make_baseline("prof", "2x-h200", 4))
    assert path == (tmp_path / "prof" / "2x-h200" / "steps-4.json").resolve()
    assert path.is_file()


def test_saved_file_is_indented_sorted_json_ending_in_newline(tmp_path: Path) -> None:
    """The file is indented, key-sorted JSON with a final newline, so diffs read line by line."""
    path = save_baseline(tmp_path, make_baseline())
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text.endswith("}\n")
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert list(data) == sorted(data)


def test_save_leaves_no_temporary_or_lock_files(tmp_path: Path) -> None:
    """After a save, the directory holds only the baseline file."""
    path = save_baseline(tmp_path, make_baseline())
    assert [item.name for item in path.parent.iterdir()] == [path.name]


def test_load_missing_file_returns_none(tmp_path: Path) -> None:
    """No file means no baseline, not an error."""
    assert load_baseline(tmp_path / "steps-1.json") is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"schema_version": 1, "profile": "p', "not valid JSON"),
        (b"\xff\xfe\x00", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"profile": "p"}', "schema_version"),
        (b'{"schema_version": "1"}', "schema_version"),
        (b'{"schema_version": true}', "schema_version"),
        (b'{"schema_version": 0}', "invalid schema_version"),
    ],
)
def test_load_bad_content_raises_baseline_error_naming_file(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    """Corrupt, truncated or foreign content is a BaselineError naming the file and problem."""
    path = tmp_path / "steps-3.json"
    path.write_bytes(content)
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_load_truncated_saved_file_raises_baseline_error(tmp_path: Path) -> None:
    """A real baseline file cut in half is a BaselineError."""
    path = save_baseline(tmp_path, make_baseline())
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(BaselineError, match="corrupt or truncated"):
        load_baseline(path)


def test_load_future_schema_version_says_upgrade(tmp_path: Path) -> None:
    """A newer schema is refused with advice to upgrade pytest-specperf."""
    path = write_json(tmp_path, baseline_dict(schema_version=BASELINE_SCHEMA_VERSION + 1))
    with pytest.raises(BaselineError, match="upgrade") as info:
        load_baseline(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("depth", "3"),
        ("accept_length", "fast"),
        ("points", [1, 2]),
        ("kv", {"max_total_num_tokens": "many"}),
        ("recorded_by", "guessed"),
    ],
)
def test_load_wrong_field_type_names_file_and_field(tmp_path: Path, field: str, value: Any) -> None:
    """A field of the wrong type is a BaselineError naming the file and the field."""
    path = write_json(tmp_path, baseline_dict(**{field: value}))
    with pytest.raises(BaselineError, match="baseline schema") as info:
        load_baseline(path)
    assert str(path) in str(info.value) and field in str(info.value)


def test_load_directory_raises_baseline_error(tmp_path: Path) -> None:
    """A directory where the file should be is a BaselineError, not an OSError."""
    path = tmp_path / "steps-3.json"
    path.mkdir()
    with pytest.raises(BaselineError, match="cannot read"):
        load_baseline(path)


def test_load_deeply_nested_json_raises_baseline_error(tmp_path: Path) -> None:
    """Pathologically nested JSON is a BaselineError like any other corrupt file."""
    path = tmp_path / "steps-3.json"
    path.write_bytes(b"[" * 100_000)
    with pytest.raises(BaselineError):
        load_baseline(path)


@pytest.mark.parametrize(
    ("profile", "hardware"),
    [("..", "h"), ("a/b", "h"), ("", "h"), (".", "h"), ("p", ".."), ("p", "a\\b"), ("p", "")],
)
def test_baseline_path_rejects_unsafe_components(
    tmp_path: Path, profile: str, hardware: str
) -> None:
    """Components that are not one safe path segment are refused."""
    with pytest.raises(BaselineError, match="cannot be used"):
        baseline_path(tmp_path, profile, hardware, 1)


def test_baseline_path_cannot_escape_root_through_symlink(tmp_path: Path) -> None:
    """A profile directory that links outside the root is refused."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "prof").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(BaselineError, match="escapes"):
        baseline_path(root, "prof", "h", 1)


def test_baseline_path_of_the_control_is_steps_0(tmp_path: Path) -> None:
    """Depth 0 (no speculation) has its own baseline file, steps-0.json."""
    assert baseline_path(tmp_path, "p", "h", 0).name == "steps-0.json"


def test_baseline_path_rejects_negative_depth(tmp_path: Path) -> None:
    """A negative depth has no baseline file."""
    with pytest.raises(BaselineError, match="depth"):
        baseline_path(tmp_path, "p", "h", -1)


def test_save_refuses_to_overwrite_another_keys_file(tmp_path: Path) -> None:
    """A file at this key's path that holds another key is not replaced."""
    mine = make_baseline("prof", "2x-h200", 3)
    path = baseline_path(tmp_path, "prof", "2x-h200", 3)
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_baseline(make_baseline("other", "1x-a100", 5)))
    with pytest.raises(BaselineError, match="refusing to overwrite"):
        save_baseline(tmp_path, mine)
    loaded = load_baseline(path)
    assert loaded is not None and loaded.profile == "other"


def test_save_replaces_file_of_same_key(tmp_path: Path) -> None:
    """Re-recording the same key replaces the old figures."""
    save_baseline(tmp_path, make_baseline())
    newer = msgspec.structs.replace(make_baseline(), accept_length=3.0)
    loaded = load_baseline(save_baseline(tmp_path, newer))
    assert loaded is not None and loaded.accept_length == 3.0


def test_baseline_from_run_takes_points_kv_and_accept_length() -> None:
    """A measured run becomes a baseline with rounded figures per C, KV and accept length."""
    point = make_point(
        4,
        800.123,
        210.456,
        requests=8,
        tokens=8000,
        wall_s=10.0,
        ttft_s=Percentiles(p50=0.123456, p90=0.2, p99=0.3, mean=0.15),
        spec_verify_ct=3200,
    )
    run = DepthRun(
        depth=2,
        profile="prof",
        backend="sim",
        hardware="Sim X5",
        workload={"max_new_tokens": 1000},
        server=ServerSummary(
            url="http://x", version="0.5.12", max_total_num_tokens=100, max_running_requests=8
        ),
        points=[point],
    )
    baseline = baseline_from_run(run, how_recorded="test", tolerance=Tolerance(throughput=0.2))
    assert (baseline.profile, baseline.hardware, baseline.depth) == ("prof", "sim-x5", 2)
    assert baseline.recorded_by == "measured" and baseline.sglang_version == "0.5.12"
    assert baseline.points["4"].agg_tok_s == 800.12
    assert baseline.points["4"].per_req_tok_s == 210.46
    assert baseline.points["4"].samples == {"agg_tok_s": [800.12], "per_req_tok_s": [210.46]}
    assert baseline.kv == KvCapacity(max_total_num_tokens=100, max_running_requests=8)
    assert baseline.accept_length == pytest.approx(2.5)
    assert baseline.tolerance.throughput == 0.2


def test_baseline_from_run_without_server_has_empty_kv() -> None:
    """A run without server info records no KV capacity or version."""
    run = DepthRun(depth=1, profile="p", backend="sim", hardware="h", workload={})
    baseline = baseline_from_run(run, how_recorded="test")
    assert baseline.kv == KvCapacity() and baseline.sglang_version is None


def _save_many(root: str, accept: float) -> None:
    for _ in range(5):
        save_baseline(Path(root), msgspec.structs.replace(make_baseline(), accept_length=accept))


def test_concurrent_saves_from_threads_leave_a_valid_file(tmp_path: Path) -> None:
    """Threads saving the same key at once leave one of their baselines, intact."""
    threads = [threading.Thread(target=_save_many, args=(str(tmp_path), 1.0 + i)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    loaded = load_baseline(baseline_path(tmp_path, "prof", "2x-h200", 3))
    assert loaded is not None and loaded.accept_length in {1.0, 2.0, 3.0, 4.0}


def test_concurrent_saves_from_processes_leave_a_valid_file(tmp_path: Path) -> None:
    """Processes saving the same key at once leave one of their baselines, intact."""
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=_save_many, args=(str(tmp_path), 1.0 + i)) for i in range(3)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [process.exitcode for process in processes] == [0, 0, 0]
    loaded = load_baseline(baseline_path(tmp_path, "prof", "2x-h200", 3))
    assert loaded is not None and loaded.accept_length in {1.0, 2.0, 3.0}


@pytest.mark.parametrize(
    "path", sorted(REPO_BASELINES.glob("*/*/steps-*.json")), ids=lambda p: p.name
)
def test_shipped_baseline_loads_and_matches_its_path(path: Path) -> None:
    """Every baseline shipped in the repository loads and lives at its own key's path (the
    workload's file for a workload other than the seed's)."""
    baseline = load_baseline(path)
    assert baseline is not None
    workload = baseline.workload.get("workload", DEFAULT_WORKLOAD)
    expected = baseline_path(
        REPO_BASELINES, baseline.profile, baseline.hardware, baseline.depth, workload
    )
    assert expected == path.resolve()


SHIPPED_V1 = sorted(
    path
    for path in REPO_BASELINES.glob("*/*/steps-*.json")
    if json.loads(path.read_text(encoding="utf-8"))["schema_version"] == 1
)


@pytest.mark.parametrize(
    "path", SHIPPED_V1, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}"
)
def test_shipped_v1_baseline_migrates_keeping_its_figures(path: Path) -> None:
    """A committed schema 1 file loads as schema 2 with the same figures and tolerance."""
    old = json.loads(path.read_text(encoding="utf-8"))
    baseline = load_baseline(path)
    assert baseline is not None and baseline.schema_version == BASELINE_SCHEMA_VERSION
    assert baseline.tolerance == msgspec.convert(old["tolerance"], Tolerance)
    for key, point in old["points"].items():
        assert baseline.points[key].agg_tok_s == point.get("agg_tok_s")
        assert baseline.points[key].per_req_tok_s == point.get("per_req_tok_s")
        assert not baseline.points[key].noise


@pytest.mark.parametrize(
    "path", SHIPPED_V1, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}"
)
def test_shipped_v1_baseline_samples_follow_how_it_was_recorded(path: Path) -> None:
    """A measured v1 figure becomes its one sample; a published figure has no samples."""
    baseline = load_baseline(path)
    assert baseline is not None
    for point in baseline.points.values():
        if baseline.recorded_by == "published":
            assert point.samples == {}
        else:
            assert point.samples["agg_tok_s"] == [point.agg_tok_s]


def test_migrate_file_rewrites_v1_as_current_schema_once(tmp_path: Path) -> None:
    """migrate_file writes a v1 file as v2 (dropping ttft_p50_s) and then leaves it alone."""
    data = baseline_dict(schema_version=1)
    data["points"] = {"1": {"agg_tok_s": 100.0, "per_req_tok_s": 90.0, "ttft_p50_s": 0.05}}
    path = write_json(tmp_path, data)
    assert migrate_file(path) is True
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["schema_version"] == BASELINE_SCHEMA_VERSION
    assert "ttft_p50_s" not in written["points"]["1"]
    assert migrate_file(path) is False


def _repeated_point(concurrency: int, agg: list[float]) -> PointMetrics:
    def one(value: float) -> PointMetrics:
        return make_point(concurrency, value, value / 2, tokens=4000, wall_s=4000 / value)

    merged = one(sorted(agg)[len(agg) // 2])
    merged.samples = [one(value) for value in agg]
    return merged


def _run(points: list[PointMetrics]) -> DepthRun:
    return DepthRun(depth=3, profile="p", backend="sim", hardware="h", workload={}, points=points)


def test_baseline_from_run_keeps_every_repeat_and_its_within_boot_noise() -> None:
    """Repeats of one boot: samples kept, figure = median, within-boot noise, no boot-to-boot."""
    baseline = baseline_from_run(_run([_repeated_point(1, [98.0, 100.0, 103.0])]), how_recorded="t")
    point = baseline.points["1"]
    assert point.samples["agg_tok_s"] == [98.0, 100.0, 103.0]
    assert point.agg_tok_s == 100.0
    noise = point.noise["agg_tok_s"]
    assert noise.source == "recorded repeats" and noise.samples == 3 and noise.boots == 1
    assert noise.within_boot_cv is not None and 0.01 < noise.within_boot_cv < 0.05
    assert noise.boot_to_boot_cv is None


def test_baseline_from_runs_of_several_boots_measures_boot_to_boot_noise() -> None:
    """Runs from two boots 10% apart: the boot-to-boot noise is seen and the samples pooled."""
    runs = [
        _run([_repeated_point(1, [100.0, 101.0, 99.0])]),
        _run([_repeated_point(1, [110.0, 111.0, 109.0])]),
    ]
    baseline = baseline_from_runs(runs, how_recorded="t", source="calibrated")
    point = baseline.points["1"]
    assert point.boots == 2 and len(point.samples["agg_tok_s"]) == 6
    noise = point.noise["agg_tok_s"]
    assert noise.source == "calibrated" and noise.boots == 2
    assert noise.boot_to_boot_cv is not None and noise.boot_to_boot_cv > 0.05


def test_with_calibrated_noise_keeps_figures_and_replaces_noise() -> None:
    """Calibration changes a baseline's noise, never its figures or samples."""
    baseline = baseline_from_run(_run([_repeated_point(1, [100.0, 101.0, 99.0])]), how_recorded="t")
    runs = [_run([_repeated_point(1, [90.0, 100.0, 110.0])])]
    calibrated = with_calibrated_noise(baseline, runs)
    assert calibrated.points["1"].agg_tok_s == baseline.points["1"].agg_tok_s
    assert calibrated.points["1"].samples == baseline.points["1"].samples
    assert calibrated.points["1"].noise["agg_tok_s"].source == "calibrated"


def test_baseline_records_speedup_over_the_control_and_position_acceptance() -> None:
    """With the run's control given, each point's speedup is recorded, and the per-position
    acceptance of the depth."""

    def run_of(depth: int, agg: float, per_req: float) -> DepthRun:
        point = make_point(1, agg, per_req)
        return DepthRun(
            depth=depth, profile="p", backend="sim", hardware="h", workload={}, points=[point]
        )

    control, deeper = run_of(0, 100.0, 120.0), run_of(3, 250.0, 300.0)
    deeper.position_accept_rate = [0.9, 0.85, 0.8]
    baseline = baseline_from_run(deeper, how_recorded="test", control=control)
    recorded = baseline.point(1)
    assert recorded is not None
    assert (recorded.agg_speedup, recorded.per_req_speedup) == (2.5, 2.5)
    assert baseline.position_accept_rate == [0.9, 0.85, 0.8]
    assert baseline_from_run(deeper, how_recorded="test").points["1"].agg_speedup is None


def test_speedup_is_the_median_over_the_controls_median_with_repeats() -> None:
    """Repeats on both sides: the speedup divides the medians of the samples."""
    control = DepthRun(
        depth=0,
        profile="p",
        backend="sim",
        hardware="h",
        workload={},
        points=[_repeated_point(1, [40.0, 50.0, 45.0])],
    )
    baseline = baseline_from_run(
        _run([_repeated_point(1, [98.0, 100.0, 103.0])]), how_recorded="t", control=control
    )
    assert baseline.points["1"].agg_speedup == round(100.0 / 45.0, 4)


def test_position_acceptance_of_several_boots_is_the_median_per_position() -> None:
    """Calibration over three boots: each position's recorded rate is the median of the boots'."""
    runs = [_run([_repeated_point(1, [100.0])]) for _ in range(3)]
    for run, rates in zip(runs, ([0.9, 0.8], [0.7, 0.6, 0.5], [0.8, 0.7]), strict=True):
        run.position_accept_rate = rates
    baseline = baseline_from_runs(runs, how_recorded="t", source="calibrated")
    assert baseline.position_accept_rate == [0.8, 0.7, 0.5]


def test_v2_file_without_speedup_or_position_acceptance_loads(tmp_path: Path) -> None:
    """A schema 2 file written before the control existed loads with neither figure."""
    data = baseline_dict(schema_version=2)
    data["points"] = {"1": {"agg_tok_s": 100.0, "per_req_tok_s": 90.0}}
    baseline = load_baseline(write_json(tmp_path, data))
    assert baseline is not None and baseline.position_accept_rate is None
    assert baseline.points["1"].agg_speedup is None


def test_calibrated_goodput_is_the_median_and_slo_capacity_the_lowest_boot() -> None:
    """Two boots under SLOs: each point's goodput is the median of every sample; the SLO
    capacity (gated with no tolerance) is the lower of the two boots'."""

    def with_goodput(concurrency: int, values: list[float], meets: bool) -> PointMetrics:
        point = _repeated_point(concurrency, [100.0] * len(values))
        for sample, value in zip(point.samples, values, strict=True):
            sample.goodput = Goodput(
                goodput_tok_s=value, requests_meeting=4, requests=4, meets_slo=meets
            )
        point.goodput = point.samples[0].goodput
        return point

    first = _run([with_goodput(1, [80.0, 90.0], True), with_goodput(4, [300.0, 310.0], True)])
    second = _run([with_goodput(1, [70.0, 95.0], True), with_goodput(4, [200.0, 210.0], False)])
    slo = Slo(ttft_p99_ms=500)
    baseline = baseline_from_runs([first, second], how_recorded="t", source="calibrated", slo=slo)
    assert baseline.points["1"].goodput_tok_s == 85.0
    assert (baseline.slo, baseline.slo_max_concurrency) == (slo, 1)
