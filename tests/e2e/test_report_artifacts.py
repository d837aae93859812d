"""What a run leaves beside results.json: report.md, PNGs, github-action-benchmark files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.support.data import REPO
from tests.support.e2e import FAST_ARGS, FAST_ARGS_WITH_PLOTS, SharedRun

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_a_run_of_depths_leaves_markdown_plots_benchmark_files_and_valid_results(
    shared_three_depths: SharedRun,
) -> None:
    """A tiny sim sweep of depths 1, 2 and 3 (the shared run, $GITHUB_STEP_SUMMARY set) writes
    every artifact; results.json fits its schema."""
    summary = shared_three_depths.path / "step-summary.md"
    assert shared_three_depths.result.ret == 0
    out = shared_three_depths.path / ".specperf"

    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.index("## Verdict") < report.index("## Results per depth")
    assert "| C | Agg tok/s | Per-req tok/s | Tokens | Wall (s) | Ok |" in report
    kv = "455,357 tokens, 26 running | 377,207 tokens, 21 running | 295,931 tokens, 17 running"
    assert f"| KV | {kv} |" in report
    for png in ("throughput.png", "pareto.png", "kv-capacity.png", "accept-length.png"):
        assert f"]({png})" in report
        assert (out / png).read_bytes().startswith(PNG_MAGIC)
    assert "`throughput.png`" in summary.read_text(encoding="utf-8")

    bigger = json.loads((out / "benchmark-bigger-is-better.json").read_text(encoding="utf-8"))
    names = {entry["name"] for entry in bigger}
    assert {"steps=1 C=4 agg tok/s", "steps=3 C=1 per-req tok/s", "steps=3 KV tokens"} <= names
    smaller = json.loads((out / "benchmark-smaller-is-better.json").read_text(encoding="utf-8"))
    assert "steps=3 C=4 TTFT p99" in {entry["name"] for entry in smaller}

    schema = json.loads((REPO / "docs" / "results.schema.json").read_text(encoding="utf-8"))
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(results)
    assert [run["depth"] for run in results["runs"]] == [1, 2, 3]


def test_without_matplotlib_the_run_says_once_how_to_get_plots(
    pytester: pytest.Pytester, suite_dir: Path
) -> None:
    """No matplotlib: one line says how to get the plots; every other artifact is written."""
    pytester.makeconftest("import sys\n\nsys.modules['matplotlib'] = None  # as if not installed\n")
    result = pytester.runpytest_subprocess(
        "perf_tests", "--spec-steps=3", *FAST_ARGS_WITH_PLOTS, "--specperf-concurrency=1"
    )
    assert result.ret == 0
    hint = 'plots: not drawn (matplotlib is not installed): pip install "pytest-specperf[plots]"'
    assert result.stdout.str().count(hint) == 1
    out = suite_dir / ".specperf"
    assert not list(out.glob("*.png"))
    assert hint in (out / "report.md").read_text(encoding="utf-8")
    for name in ("results.json", "benchmark-bigger-is-better.json", "server-steps3.log"):
        assert (out / name).is_file()


def _tree(folder: Path) -> set[str]:
    """Every file under ``folder`` (relative), the out dir's own lock files left out."""
    locks = {".specperf-run.lock", ".specperf-run.json", ".results.lock"}
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} - locks


def test_a_second_run_into_one_out_dir_leaves_only_its_own_files_there(
    pytester: pytest.Pytester, suite_dir: Path, shared_plain_run: SharedRun
) -> None:
    """A steps=1 run, then a steps=3 run into the same --specperf-out: the folder holds what
    the steps=3 run wrote and nothing else (the steps=1 server log once stayed beside it, and
    an undocumented results.previous.json appeared), the same files a steps=3 run writes into
    an empty folder (the shared plain run's); the steps=1 run's files are whole in previous/."""
    first = pytester.runpytest_subprocess("perf_tests", "--spec-steps=1", *FAST_ARGS)
    assert first.ret == 0
    out = suite_dir / ".specperf"
    first_files = {name: (out / name).read_bytes() for name in _tree(out)}
    assert "server-steps1.log" in first_files

    second = pytester.runpytest_subprocess("perf_tests", "--spec-steps=3", *FAST_ARGS)
    assert second.ret == 0
    alone = shared_plain_run  # the same command into an empty folder
    assert alone.result.ret == 0

    previous = out / "previous"
    assert {name for name in _tree(out) if not name.startswith("previous/")} == _tree(
        alone.path / ".specperf"
    )
    assert {name: (previous / name).read_bytes() for name in _tree(previous)} == first_files
    second.stdout.fnmatch_lines([f"*the previous run's files: {previous}*"])
