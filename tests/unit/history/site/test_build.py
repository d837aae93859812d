"""history/site/__init__.py: the site written into its folder, and the CLI verb."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_specperf.cli import main
from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.site import MARKER, build_site, repo_url_from_env
from pytest_specperf.history.store import HistoryStore
from tests.support.step_nights import night


def _build(store_path: Path, out: Path) -> None:
    store = HistoryStore.open(store_path)
    try:
        build_site(store, out)
    finally:
        store.close()


def test_a_site_is_its_pages_and_assets(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    _build(store_path, out)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        MARKER,
        "assets/plotly.min.js",
        "assets/site.css",
        "assets/site.js",
        "index.html",
        "series/prof--sim-x5--greedy-synthetic--steps0.html",
        "series/prof--sim-x5--greedy-synthetic--steps3.html",
        "speculation.html",
    ]


def test_a_new_build_replaces_an_earlier_site_whole(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    _build(store_path, out)
    (out / "series" / "gone.html").write_text("stale")
    _build(store_path, out)
    assert not (out / "series" / "gone.html").exists()
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == ["site"]  # no temporary left


def test_a_folder_holding_other_files_is_refused(store_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(SpecperfError, match="not empty"):
        _build(store_path, out)
    assert (out / "mine.txt").read_text() == "keep"


def test_the_repository_url_comes_from_github_actions() -> None:
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}
    assert repo_url_from_env(env) == "https://github.com/o/r"
    assert repo_url_from_env({"GITHUB_REPOSITORY": "o/r"}) is None


def test_the_cli_builds_the_site_and_says_what_it_holds(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    args = ["history", "site", "--history", str(store_path), "--out", str(out)]
    assert main([*args, "--repo-url", "https://github.com/o/r"]) == 0
    assert capsys.readouterr().out == (
        f"{out / 'index.html'}: 10 runs, 2 series pages, 8 change points\n"
    )
    assert "https://github.com/o/r/commit/" in (out / "index.html").read_text()


def test_counts_of_one_read_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run of one depth: "1 run, 1 series page", in the CLI's lines and on the pages (a
    count of one with a plural noun, "1 series pages", is what the site said)."""
    store_path = tmp_path / "history.sqlite"
    store = HistoryStore.open(store_path)
    try:
        results = night(0)
        results.runs = results.runs[1:]
        store.record(results, RunContext(run_profile="nightly", runner="runner-1"))
        store.finish_run(results.run_id)
    finally:
        store.close()
    out = tmp_path / "site"
    assert main(["history", "site", "--history", str(store_path), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert said == f"{out / 'index.html'}: 1 run, 1 series page, 0 change points\n"
    assert main(["history", "changes", "--history", str(store_path)]) == 0
    assert capsys.readouterr().out.startswith("1 complete run, ")
    # A count of one before a plural noun, in the text or as a summary figure and its label.
    one_of_many = re.compile(
        r"(?<![\d.,])1(?: |</span><span class=\"label\">)[a-z ]*?(?:runs|pages)\b"
    )
    found = {page.name: one_of_many.findall(page.read_text()) for page in out.rglob("*.html")}
    assert {name: hits for name, hits in found.items() if hits} == {}
