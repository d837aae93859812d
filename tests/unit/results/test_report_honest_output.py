"""results/report.py, issue 24's output: intervals at small R, the terminal and report.md
alike, notes and polish."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.gate.baselines import baseline_from_run, portable_command
from pytest_specperf.gate.decision import GateSettings, PointInput, Reference, judge_depth
from pytest_specperf.gate.floors import headline, what_to_do
from pytest_specperf.gate.no_verdict import depths_without_verdict, no_verdict_line
from pytest_specperf.gate.review import ReviewError, read_baseline, show
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.results.report import (
    ReportContext,
    depth_table,
    markdown_report,
    tradeoff_table,
)
from pytest_specperf.results.schema import ServerSummary
from pytest_specperf.results.stats import MIN_MAX_METHOD, summarize
from tests.support.data import REPO
from tests.unit.config.test_settings import settings_from
from tests.unit.gate.test_review import run as review_run
from tests.unit.gate.test_review import sample
from tests.unit.results_samples import sample_run, sample_verdict


def test_two_samples_show_their_min_max_not_a_t_interval() -> None:
    """Samples 3,381 and 3,135 (issue 24): not [2,014.0, 5,263.5] but their range, said so."""
    median, interval = summarize([3381.0, 3135.0])
    assert median == 3258.0
    assert interval is not None
    assert (interval.low, interval.high, interval.method) == (3135.0, 3381.0, MIN_MAX_METHOD)


def _two_sample_run(depth: int = 3):  # type: ignore[no-untyped-def]
    point = merge_samples([sample(3381.0), sample(3135.0)])
    result = sample_run(depth)
    result.points = [point]
    return result


def test_tables_mark_a_min_max_range_and_explain_it() -> None:
    runs = [_two_sample_run(1), _two_sample_run(3)]
    for text in (
        depth_table(runs[0]).text(),
        tradeoff_table(runs).text(),
        markdown_report(ReportContext(runs=runs)),
    ):
        assert "3,258.0 [min-max 3,135.0, 3,381.0]" in text
        assert "fewer than 3 samples shows their range, not a confidence interval" in text


def test_terminal_and_report_md_show_the_same_cells() -> None:
    """`1,000` tokens and `Wall (s)` in both; a repeated point's interval in both."""
    repeated = sample_run(3, interval=True)
    terminal = depth_table(repeated).text()
    report = markdown_report(ReportContext(runs=[repeated]))
    assert "Wall (s)" in terminal and "Wall(s)" not in terminal
    row = "1 | 750.0 [740.0, 762.0] | 750.0 | 3 | 1,000 | 10.0 | 2/2"
    assert row in terminal and f"| {row} |" in report


def test_a_concurrency_above_max_running_requests_gets_a_note() -> None:
    result = sample_run(9)
    result.server = msgspec.structs.replace(
        result.server or ServerSummary(url="http://x"), max_running_requests=1
    )
    note = "C=4 exceeds the server's max_running_requests (1): 3 requests wait in its queue"
    table = depth_table(result)
    assert f"\nC=4: {note}" in table.text() and f"- C=4: {note}" in table.markdown()
    assert f"- C=4: {note}" in markdown_report(ReportContext(runs=[result]))
    assert "C=1: C=1 exceeds" not in table.text()


def test_one_sample_reads_as_one_sample() -> None:
    point = PointInput(
        concurrency=1,
        samples={"agg_tok_s": [80.0]},
        references={"agg_tok_s": Reference(figure=100.0, tolerance=0.10)},
    )
    verdicts = judge_depth(3, [point], GateSettings(), path="b.json", refresh_hint="r")
    message = verdicts[0].message
    assert "one sample, 80.0" in message and "sample(s)" not in message


def test_the_short_summary_headline_carries_the_figure() -> None:
    verdict = sample_verdict(3, 1, "agg_tok_s", "regression")
    verdict = msgspec.structs.replace(verdict, measured=856.8, floor=964.2, baseline=1071.0)
    assert headline(verdict) == "steps=3 C=1 agg 856.8 < floor 964.2 (-20.0% vs baseline)"


def test_what_to_do_points_at_the_report_and_the_command_or_the_deliberate_slowdown() -> None:
    plain = what_to_do(Path("out/report.md"), "pytest perf_tests --x", None)
    assert plain.startswith("what to do: open out/report.md")
    assert plain.endswith("re-record the baseline with: pytest perf_tests --x")
    slowed = what_to_do(Path("r.md"), "cmd", "--sim-slowdown=0.2")
    assert "slowed the server on purpose (--sim-slowdown=0.2)" in slowed and "cmd" not in slowed


def test_baseline_show_says_samples_plainly_and_the_workload_as_fields() -> None:
    text = show(baseline_from_run(review_run(100.0), how_recorded="t"), Path("steps-3.json"))
    assert "1 sample, 1 boot" in text and "1 samples" not in text
    assert "workload greedy-synthetic (max_new_tokens=256)" in text and "{" not in text


def test_baseline_show_of_a_results_file_says_it_is_one(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"run_id": "x", "runs": []}))
    with pytest.raises(ReviewError, match=r"is a results file .* not a baseline"):
        read_baseline(path)


def test_launch_commands_lose_the_recording_machines_interpreter_path() -> None:
    command = "/home/me/venv/bin/python3 -m pytest_specperf.sim --port 1 --x 'a b'"
    assert portable_command(command) == "python -m pytest_specperf.sim --port 1 --x 'a b'"
    assert portable_command("python -m sglang.launch_server") == "python -m sglang.launch_server"


@pytest.mark.parametrize("path", sorted((REPO / "baselines").rglob("*.json")), ids=str)
def test_committed_baselines_carry_no_absolute_interpreter_path(path: Path) -> None:
    server = json.loads(path.read_text()).get("server") or {}
    command = server.get("launch_command")
    if command:
        assert not Path(shlex.split(command)[0]).is_absolute()


def test_the_simulators_help_shows_each_default_once() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "pytest_specperf.sim", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": ""},
    ).stdout
    assert "(default: None)" not in shown
    assert not re.search(r"\(default [^)]*\)\.? \(default: ", shown)


def test_depths_without_a_judged_verdict_are_found() -> None:
    judged = sample_run(1)
    judged.verdicts = [sample_verdict(1, 1, "agg_tok_s", "pass")]
    skipped = sample_run(3)
    assert depths_without_verdict([judged, skipped], {1, 3, 9}) == [3, 9]
    line = no_verdict_line(
        {9: "no baseline (x is missing)"}, "record the baseline with: pytest perf_tests", "--allow"
    )
    assert "\n" not in line and line.startswith("specperf: no throughput verdict for steps=9")
    assert line.endswith(
        "(steps=9: no baseline (x is missing)); record the baseline with: "
        "pytest perf_tests; or, for an exploratory run, add --allow"
    )


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"baselines": "a-file"}, "--specperf-baselines: 'a-file' is not a directory"),
        ({"out": "a-file/x"}, "--specperf-out: 'a-file/x' is not a directory"),
    ],
)
def test_paths_that_cannot_work_are_usage_errors_before_boot(
    tmp_path: Path, option: dict[str, object], message: str
) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UsageError, match=re.escape(message)):
        settings_from(tmp_path, **option)


def test_throughput_plot_says_when_its_bars_are_min_max() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from pytest_specperf.results import plots

    figure = plots._throughput_figure([_two_sample_run()])
    texts = [text.get_text() for text in figure.texts]
    assert any(text.startswith("error bars: min-max of the samples") for text in texts)
    plt.close(figure)


@pytest.mark.parametrize(
    ("run_profile", "allowed"), [("smoke", True), ("pr", False), ("nightly", False)]
)
def test_only_the_smoke_run_profile_is_exploratory(
    tmp_path: Path, run_profile: str, allowed: bool
) -> None:
    """smoke checks the path is alive; pr and nightly gate, so every depth needs a verdict."""
    assert settings_from(tmp_path, run_profile=run_profile).allow_no_baseline is allowed
    assert settings_from(tmp_path, allow_no_baseline=True).allow_no_baseline is True
