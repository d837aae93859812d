"""specperf history ...: on a real store file, through the CLI's main."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import DEFAULT_HISTORY, HistoryStore
from pytest_specperf.results.schema import ServerSummary
from tests.support.history_writer import sample_point, sample_results


def nights(path: Path, count: int, step_at: int) -> None:
    store = HistoryStore.open(path)
    for n in range(count):
        agg = 1000.0 * (0.9 if n >= step_at else 1.0) * (1 + 0.001 * (n % 3))
        results = sample_results(f"run{n:02d}", [sample_point(16, agg)], commit=f"night{n:02d}")
        store.record(results, RunContext(run_profile="nightly"))
        store.finish_run(results.run_id)
    store.close()


def test_changes_names_the_first_night_after_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nights(tmp_path / "h.sqlite", 10, step_at=5)
    assert main(["history", "changes", "--history", str(tmp_path / "h.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "night05" in out and "-10." in out and "step time" in out
    assert "night04" not in out and "night06" not in out


def test_changes_fails_on_a_new_change_when_asked(tmp_path: Path) -> None:
    nights(tmp_path / "h.sqlite", 7, step_at=5)
    args = ["history", "changes", "--history", str(tmp_path / "h.sqlite"), "--fail-on-new"]
    assert main(args) == 1


def test_export_csv_has_a_row_per_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nights(tmp_path / "h.sqlite", 3, step_at=9)
    assert main(["history", "export", "--history", str(tmp_path / "h.sqlite")]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["tested_commit"] for r in rows] == ["night00", "night01", "night02"]


def test_export_benchmark_action_has_an_entry_per_run(tmp_path: Path) -> None:
    nights(tmp_path / "h.sqlite", 3, step_at=9)
    out = tmp_path / "data.json"
    args = ["history", "export", "--history", str(tmp_path / "h.sqlite")]
    assert main([*args, "--format", "benchmark-action", "--output", str(out)]) == 0
    entries = json.loads(out.read_text())["entries"]["pytest-specperf"]
    assert [e["commit"]["id"] for e in entries] == ["night00", "night01", "night02"]
    assert any(b["name"] == "steps=3 C=16 agg tok/s" for b in entries[0]["benches"])


def test_import_adds_an_earlier_results_file(tmp_path: Path) -> None:
    results = sample_results("old-run", [sample_point(4)], commit="abc")
    results.runs[0].status = "complete"
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(results))
    store_path = tmp_path / "h.sqlite"
    assert main(["history", "import", "--history", str(store_path), str(path)]) == 0
    (run,) = HistoryStore.open(store_path).runs()
    assert (run["run_id"], run["status"], run["tested_commit"]) == ("old-run", "complete", "abc")


def test_plot_draws_the_changed_series(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    nights(tmp_path / "h.sqlite", 10, step_at=5)
    out = tmp_path / "plots"
    assert (
        main(["history", "plot", "--history", str(tmp_path / "h.sqlite"), "--out", str(out)]) == 0
    )
    names = sorted(p.name for p in out.glob("*.png"))
    assert len(names) == 2
    assert names[0].startswith("trend-test-profile-test-hw-greedy-synthetic-steps3-c16-agg_tok_s-")
    assert names[1].startswith("trend-test-profile-test-hw-greedy-synthetic-steps3-c16-per_req_")


def test_plot_all_writes_one_file_per_series_and_prints_exactly_those(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two hardware keys of one profile, workload, depth and point (sim-x5 and sim-x10) are
    two series each: --all writes a file for every series (none overwrites another) and
    prints the paths of exactly the files it wrote."""
    pytest.importorskip("matplotlib")
    store = HistoryStore.open(tmp_path / "h.sqlite")
    for night in range(3):
        for hardware in ("sim-x5", "sim-x10"):
            results = sample_results(f"{hardware}-{night}", [sample_point(16)], commit=f"n{night}")
            results.runs[0].hardware = hardware
            store.record(results, RunContext(run_profile="nightly"))
            store.finish_run(results.run_id)
    store.close()
    out = tmp_path / "plots"
    args = ["history", "plot", "--history", str(tmp_path / "h.sqlite"), "--out", str(out), "--all"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    written = sorted(str(p) for p in out.iterdir())
    assert sorted(printed) == written
    assert len(written) == 4  # 2 hardware keys x 2 metrics (agg and per-request tok/s)
    assert {name for name in written if "sim-x5-" in name} != set()
    assert {name for name in written if "sim-x10-" in name} != set()


def test_show_keeps_every_column_apart_however_wide_its_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value as wide as the old fixed column or wider (a simulator's version, a long run id)
    no longer runs into the next column: each column is as wide as its widest value plus two."""
    store = HistoryStore.open(tmp_path / "h.sqlite")
    for run_id, version in (("r1", "0.5.23-sim"), ("a-run-id-well-over-fourteen-wide", "0.5.12")):
        results = sample_results(run_id, [sample_point(16)], commit="0123456789abcdef")
        results.runs[0].server = ServerSummary(
            url="u", max_total_num_tokens=1000, max_running_requests=8, version=version
        )
        store.record(results, RunContext(run_profile="nightly"))
        store.finish_run(run_id)
    runs = store.runs()
    store.close()
    assert main(["history", "show", "--history", str(tmp_path / "h.sqlite")]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    names = ["run", "kind", "status", "started", "commit", "sglang", "points", "profile"]
    offsets = [header.index(name) if name != "run" else 0 for name in names]
    assert len(lines) == len(runs) == 2
    for line, run in zip(lines, runs, strict=True):
        values = [
            run["run_id"],
            run["kind"],
            run["status"],
            run["started_at"],
            run["tested_commit"][:10],
            run["sglang_version"],
            "1",
            f"{run['profile']} / {run['hardware']} / {run['workload']}",
        ]
        for i, (offset, value) in enumerate(zip(offsets, values, strict=True)):
            assert line[offset:].startswith(value), (names[i], line)
            if i:
                gap = line[offsets[i - 1] + len(values[i - 1]) : offset]
                assert len(gap) >= 2 and not gap.strip(), (names[i], line)


def test_a_newer_store_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    with store.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
    store.close()
    assert main(["history", "show", "--history", str(tmp_path / "h.sqlite")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("action", ["show", "changes", "plot", "export"])
def test_a_reader_in_a_folder_without_a_store_fails_creating_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    action: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["history", action]) == 2
    assert "no store there" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_kind_is_an_error_listing_the_kinds_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nights(tmp_path / "h.sqlite", 3, step_at=9)
    assert (
        main(["history", "changes", "--history", str(tmp_path / "h.sqlite"), "--kind", "weekly"])
        == 2
    )
    assert capsys.readouterr().err == (
        f"specperf: error: history changes: --kind weekly: no run of that kind in "
        f"{tmp_path / 'h.sqlite'}; kinds there: nightly\n"
    )
    assert (
        main(["history", "changes", "--history", str(tmp_path / "h.sqlite"), "--kind", "all"]) == 0
    )


def test_a_site_of_a_kind_the_store_lacks_is_an_error_and_builds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nights(tmp_path / "h.sqlite", 3, step_at=9)
    out = tmp_path / "site"
    args = ["history", "site", "--history", str(tmp_path / "h.sqlite"), "--out", str(out)]
    assert main([*args, "--kind", "weekly"]) == 2
    assert capsys.readouterr().err == (
        f"specperf: error: history site: --kind weekly: no run of that kind in "
        f"{tmp_path / 'h.sqlite'}; kinds there: nightly\n"
    )
    assert not out.exists()


def test_fail_on_new_fails_without_a_complete_run_of_the_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    store.begin_run(sample_results("n1", []), RunContext(run_profile="nightly"))  # incomplete
    store.close()
    args = ["history", "changes", "--history", str(tmp_path / "h.sqlite")]
    assert main(args) == 0  # shown, as before
    capsys.readouterr()
    assert main([*args, "--fail-on-new"]) == 2
    assert "--fail-on-new: no complete nightly run in" in capsys.readouterr().err


def test_import_creates_the_store_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = sample_results("r1", [sample_point(4)])
    (tmp_path / "results.json").write_bytes(msgspec.json.encode(results))
    monkeypatch.chdir(tmp_path)
    assert main(["history", "import", "results.json"]) == 0
    assert [r["run_id"] for r in HistoryStore.open(DEFAULT_HISTORY).runs()] == ["r1"]


def test_import_into_a_folder_that_does_not_exist_fails_creating_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --history for import: exit 2, one line naming the folder, nothing created."""
    results = sample_results("r1", [sample_point(4)])
    (tmp_path / "results.json").write_bytes(msgspec.json.encode(results))
    store = tmp_path / "nodir" / "h.sqlite"
    assert main(["history", "import", "--history", str(store), str(tmp_path / "results.json")]) == 2
    err = capsys.readouterr().err
    assert f"its folder {store.parent} does not exist" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_import_says_when_it_created_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The import that creates a store says the store is new; the next one does not."""
    results = sample_results("r1", [sample_point(4)])
    (tmp_path / "results.json").write_bytes(msgspec.json.encode(results))
    args = ["history", "import", "--history", str(tmp_path / "h.sqlite")]
    assert main([*args, str(tmp_path / "results.json")]) == 0
    assert f"history store {tmp_path / 'h.sqlite'}: new, created empty" in capsys.readouterr().out
    assert main([*args, str(tmp_path / "results.json")]) == 0
    assert "new" not in capsys.readouterr().out


def test_plot_writes_under_specperf_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    nights(tmp_path / ".specperf" / "history.sqlite", 10, step_at=5)
    monkeypatch.chdir(tmp_path)
    assert main(["history", "plot"]) == 0
    assert len(list((tmp_path / ".specperf" / "trends").glob("*.png"))) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".specperf"]


def _night(store: HistoryStore, run_id: str, commit: str, exit_status: int) -> None:
    results = sample_results(run_id, [sample_point(4, 100.0)], commit=commit)
    results.exit_status = exit_status
    store.record(results, RunContext(run_profile="nightly"))
    store.finish_run(run_id, "complete")


def test_red_range_is_the_last_green_night_and_the_red_one_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the nightly's opt-in bisect job hands to specperf bisect."""
    path = tmp_path / "h.sqlite"
    store = HistoryStore.open(path)
    for run_id, commit, status in (("n1", "a1", 0), ("n2", "b2", 0), ("n3", "c3", 1)):
        _night(store, run_id, commit, status)
    store.close()
    assert main(["history", "red-range", "--history", str(path)]) == 0
    assert capsys.readouterr().out == "good=b2\nbad=c3\n"


def test_red_range_of_a_green_newest_night_is_an_error_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.sqlite"
    store = HistoryStore.open(path)
    _night(store, "n1", "a1", 0)
    store.close()
    assert main(["history", "red-range", "--history", str(path)]) == 2
    assert "the newest nightly run is green: nothing to bisect" in capsys.readouterr().err
