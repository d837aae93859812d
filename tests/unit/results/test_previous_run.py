"""results/previous_run.py: a new run's out dir holds only its own files; the previous run's
go to previous/, whole, and nothing else in the folder is touched."""

from __future__ import annotations

from pathlib import Path

from pytest_specperf.results.previous_run import PREVIOUS_RUN_DIR, set_aside_previous_run

# What a run of the suite writes at the top of its out dir (a depth's log, a restarted boot's,
# every artifact, an A/B run's pair folders, a nightly's trend plots, an unreadable results
# file moved aside, the results.previous.json of older versions).
RUN_FILES = [
    "results.json",
    "report.md",
    "results.json.corrupt-20261201T000000.000000Z",
    "results.previous.json",
    "server-steps1.log",
    "server-steps1-boot2.log",
    "throughput.png",
    "ab-forest.png",
    "trend-p-hw-greedy-synthetic-steps3-c16-agg_tok_s-0123456789.png",
    "benchmark-bigger-is-better.json",
    "benchmark-smaller-is-better.json",
    "ab/steps3/pair1-head/results.json",
]
# What the folder may hold that is not a run's: the history store beside it, a recording into
# a baselines folder of the user's own, trend plots of `specperf history plot`, the user's.
KEPT = [
    "history.sqlite",
    "history.sqlite-wal",
    "baselines/my-settings/steps-3.json",
    "trends/trend-x.png",
    "notes.txt",
    ".specperf-run.lock",
]


def _write(folder: Path, names: list[str]) -> dict[str, bytes]:
    written = {}
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())
        written[name] = name.encode()
    return written


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_the_previous_runs_files_move_whole_into_previous(tmp_path: Path) -> None:
    """Every file the suite writes moves into previous/, contents unchanged; the rest stays."""
    run = _write(tmp_path, RUN_FILES)
    kept = _write(tmp_path, KEPT)
    moved = set_aside_previous_run(tmp_path)
    assert _tree(tmp_path / PREVIOUS_RUN_DIR) == run
    left = {
        name: data
        for name, data in _tree(tmp_path).items()
        if not name.startswith(f"{PREVIOUS_RUN_DIR}/")
    }
    assert left == kept
    assert sorted(moved) == sorted({name.split("/")[0] for name in RUN_FILES})


def test_previous_holds_only_the_run_before(tmp_path: Path) -> None:
    """previous/ is the run before this one's: what it held of an older run is replaced."""
    _write(tmp_path, ["previous/server-steps5.log", "previous/report.md"])
    run = _write(tmp_path, ["results.json", "server-steps1.log"])
    set_aside_previous_run(tmp_path)
    assert _tree(tmp_path / PREVIOUS_RUN_DIR) == run


def test_a_folder_without_a_runs_files_keeps_its_previous(tmp_path: Path) -> None:
    """A run that wrote nothing (refused after it took the folder) leaves previous/ alone:
    the run before it is still there for the next one."""
    older = _write(tmp_path, ["previous/results.json"])
    kept = _write(tmp_path, KEPT)
    assert set_aside_previous_run(tmp_path) == []
    assert _tree(tmp_path) == {**older, **kept}


def test_a_missing_out_dir_has_nothing_to_set_aside(tmp_path: Path) -> None:
    assert set_aside_previous_run(tmp_path / "new") == []
    assert not (tmp_path / "new").exists()
