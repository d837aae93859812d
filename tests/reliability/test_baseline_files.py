"""Baselines are safe: a bad file is one clear line naming it (never a traceback), names cannot
escape the baselines directory, and xdist workers recording two depths leave both files whole."""

from __future__ import annotations

import json

import pytest

from pytest_specperf.gate.baselines import load_baseline
from tests.reliability.suite_runs import HARDWARE, PROFILE, SuiteRun, prepare_workdir, run_suite

_VALID = {
    "schema_version": 1,
    "profile": PROFILE,
    "hardware": HARDWARE,
    "depth": 1,
    "backend": "sim",
    "recorded_at": "2026-01-01T00:00:00+00:00",
    "recorded_by": "measured",
    "how_recorded": "test",
    "points": {"1": {"agg_tok_s": 1.0, "per_req_tok_s": 1.0}},
}
# depth -> (file content, what the one-line error must say about it)
BAD_FILES: dict[int, tuple[str, str]] = {
    1: ("{not json at all", "is not valid JSON (corrupt or truncated)"),
    2: (json.dumps(_VALID)[:60], "is not valid JSON (corrupt or truncated)"),
    3: (json.dumps({**_VALID, "depth": "three"}), "does not match the baseline schema"),
    4: (json.dumps({**_VALID, "schema_version": 99}), "newer than this pytest-specperf reads"),
    5: (json.dumps([_VALID]), "must hold a JSON object, found list"),
}
KINDS = {1: "corrupt", 2: "truncated", 3: "wrong-schema", 4: "future-schema", 5: "not-an-object"}


@pytest.fixture(scope="module")
def bad_baselines_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    """One run over depths 1-5, each with its own kind of bad baseline file."""
    workdir = prepare_workdir(tmp_path_factory.mktemp("bad-baselines"))
    for depth, (content, _) in BAD_FILES.items():
        path = workdir / "baselines" / PROFILE / HARDWARE / f"steps-{depth}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return run_suite(
        workdir,
        [
            "--spec-steps=1,2,3,4,5",
            "--specperf-concurrency=1",
            "--specperf-max-new-tokens=100",
        ],
    )


@pytest.mark.parametrize("depth", sorted(BAD_FILES), ids=[KINDS[d] for d in sorted(BAD_FILES)])
def test_bad_baseline_fails_with_one_line_naming_the_file(
    bad_baselines_run: SuiteRun, depth: int
) -> None:
    """Each gated test of the depth fails with 'baseline <path> <problem>' on a single line."""
    path = bad_baselines_run.baselines_dir / PROFILE / HARDWARE / f"steps-{depth}.json"
    lines = [line for line in bad_baselines_run.output.splitlines() if f"baseline {path} " in line]
    assert lines, f"no line names {path}"
    assert all(BAD_FILES[depth][1] in line for line in lines)


def test_bad_baselines_give_no_traceback(bad_baselines_run: SuiteRun) -> None:
    """Bad baseline files fail tests, and nothing in the output is a Python traceback.

    Per depth five tests read the baseline: KV capacity, C=1 throughput, the depth as a
    whole, the accept length and the per-position acceptance."""
    assert bad_baselines_run.outcomes().get("failed") == 5 * len(BAD_FILES)
    assert "Traceback" not in bad_baselines_run.output


def test_bad_baselines_are_left_untouched(bad_baselines_run: SuiteRun) -> None:
    """A run that meets bad baseline files does not rewrite or remove them."""
    for depth, (content, _) in BAD_FILES.items():
        path = bad_baselines_run.baselines_dir / PROFILE / HARDWARE / f"steps-{depth}.json"
        assert path.read_text(encoding="utf-8") == content


def test_a_hardware_key_that_is_a_path_is_refused_before_anything_boots(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """--specperf-hardware=../../../outside: a usage error on one line, no baseline anywhere
    (it once recorded under baselines/<profile>/outside, a key the user never typed)."""
    workdir = prepare_workdir(tmp_path_factory.mktemp("escape") / "project")
    run = run_suite(
        workdir,
        [
            "--spec-steps=3",
            "--specperf-concurrency=1",
            "--specperf-max-new-tokens=100",
            "--specperf-hardware=../../../outside",
            "--specperf-update-baselines",
        ],
    )
    assert run.returncode == 4, run.output[-3000:]
    assert "--specperf-hardware: '../../../outside' is not a hardware key" in run.output
    assert sorted(workdir.parent.rglob("steps-*.json")) == []
    assert not (workdir / ".specperf" / "server-steps3.log").exists()


def test_xdist_workers_recording_two_depths_leave_whole_files(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """-n 2 over two depths: one server and one set of points per depth, two valid baselines."""
    workdir = prepare_workdir(tmp_path_factory.mktemp("xdist-record"))
    run = run_suite(workdir, ["-n", "2", "--spec-steps=1,3", "--specperf-update-baselines"])
    assert run.returncode == 0, run.output[-3000:]
    results = run.results()
    assert [(r.depth, r.status, [p.concurrency for p in r.points]) for r in results.runs] == [
        (1, "complete", [1, 4]),
        (3, "complete", [1, 4]),
    ]
    files = run.baseline_files()
    assert [f.name for f in files] == ["steps-1.json", "steps-3.json"]
    for path in files:
        baseline = load_baseline(path)
        assert baseline is not None and sorted(baseline.points) == ["1", "4"]
