"""The plugin's terminal side: the report header, the live progress line, how a recording
test reads, the run's terminal summary.

Kept out of the hooks (plugin/__init__.py); the drawing itself is measure/progress.py (no
pytest); the tables are results/report.py's.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_specperf import interrupts
from pytest_specperf.gate.floors import headline
from pytest_specperf.measure.progress import LiveProgress, StatusLine
from pytest_specperf.plugin.xdist import SPLITTING_DIST_MODES
from pytest_specperf.results.report import full_report
from pytest_specperf.results.schema import RunResults
from pytest_specperf.results.store import PREVIOUS_RUN_DIR
from pytest_specperf.results.verdict_report import floor_lines

if TYPE_CHECKING:
    from pytest_specperf.plugin.session import SpecperfRun

# A user property on a test that recorded figures instead of gating them.
RECORDED_PROPERTY = "specperf.recorded"
# The outcome such a test gets in pytest's reports and summary line ("4 recorded").
RECORDED_CATEGORY = "recorded"
# What the summary says instead when the depth's baseline was not written after all (the run
# was interrupted, the recording refused or failed): "4 unrecorded".
NOT_RECORDED_CATEGORY = "unrecorded"
_WROTE = re.compile(r"steps=(\d+): wrote ")
_DEPTH = re.compile(r"steps=(\d+)\b")


def live_progress(config: pytest.Config) -> LiveProgress | None:
    """The progress line for this run, or None: not a terminal, -q, or an xdist worker."""
    if hasattr(config, "workerinput") or config.get_verbosity() < 0:
        return None
    reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not getattr(reporter, "isatty", False):
        return None
    if os.environ.get("TERM") == "dumb":  # no cursor control
        return None
    writer = config.get_terminal_writer()
    capture: Any = config.pluginmanager.get_plugin("capturemanager")

    @contextlib.contextmanager
    def unhidden() -> Iterator[None]:
        if capture is None:
            yield
            return
        with capture.global_and_fixture_disabled():
            yield

    # write_raw leaves the writer's idea of the current line alone: the status line is drawn
    # beside it and wiped, so pytest's own columns ([ 40%]) stay where it expects them.
    status = StatusLine(
        lambda text: writer.write_raw(text, flush=True),
        lambda: writer.fullwidth - writer.width_of_current_line,
    )
    return LiveProgress(status, unhidden)


def recorded_status(
    report: pytest.TestReport,
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """pytest_report_teststatus for a passed test that recorded figures: "recorded", R."""
    if report.when != "call" or not report.passed:
        return None
    if not any(name == RECORDED_PROPERTY for name, _ in report.user_properties):
        return None
    return RECORDED_CATEGORY, "R", ("RECORDED", {"cyan": True})


def make_room_for_not_recorded(config: pytest.Config) -> None:
    """Let pytest's summary line show NOT_RECORDED_CATEGORY: it lists the outcomes it has
    seen, and an interrupted run's summary does not look again (an empty list shows nothing)."""
    reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.stats.setdefault(NOT_RECORDED_CATEGORY, [])


def settle_recorded(
    stats: dict[str, list[Any]], written: Iterable[str], interrupted: bool
) -> list[str]:
    """One line per recording test: RECORDED when its depth's baseline was written
    (``written``: the lines of ``write_baselines``), else NOT RECORDED; such a test's report
    moves to NOT_RECORDED_CATEGORY, so pytest's summary line does not count it as recorded.
    An interrupted run records nothing (a baseline written before the signal is taken back)."""
    wrote = (
        set() if interrupted else {int(m.group(1)) for line in written if (m := _WROTE.match(line))}
    )
    lines = []
    kept = []
    for report in stats.get(RECORDED_CATEGORY, []):
        values = [
            v for name, v in getattr(report, "user_properties", ()) if name == RECORDED_PROPERTY
        ]
        depth = next((int(m.group(1)) for v in values if (m := _DEPTH.match(str(v)))), None)
        if depth in wrote:
            kept.append(report)
            lines += [f"RECORDED {report.nodeid}: {value}" for value in values]
            continue
        stats.setdefault(NOT_RECORDED_CATEGORY, []).append(report)
        why = (
            "the run was interrupted"
            if interrupted
            else f"steps={depth}'s baseline was not written"
        )
        lines += [f"NOT RECORDED ({why}) {report.nodeid}: {value}" for value in values]
    if RECORDED_CATEGORY in stats:
        stats[RECORDED_CATEGORY] = kept
    return lines


def summary_lines(
    run: SpecperfRun, results: RunResults | None, stats: dict[str, list[Any]], *, stopped: bool
) -> list[tuple[str, bool]]:
    """The run's terminal summary, line by line: (text, whether it is shown red and bold).
    ``stopped``: the run was interrupted (its recordings are NOT RECORDED)."""
    end = run.end
    red = [(end.no_verdict, True)] if end.no_verdict is not None else []
    exploratory = [(end.exploratory, False)] if end.exploratory is not None else []
    if results is None:  # nothing measured; the history store still holds the run
        return [(line, False) for line in end.history] + exploratory + red
    out_dir = run.settings.out_dir
    lines = [
        full_report(
            results.runs,
            results.lossless,
            slo=results.slo,
            recommendation=results.recommendation,
        ),
        *floor_lines(results.runs),  # issue 38: how wide, and from where
        *end.refine,
        *(line for _, ab in sorted(run.ab_runs.items()) for line in ab.summary_lines()),
        f"\nresults: {out_dir / 'results.json'}  report: {out_dir / 'report.md'}"
        " (plots and github-action-benchmark files beside it)",
        *previous_run_lines(run),
        *end.artifacts,
        *settle_recorded(stats, end.written, stopped),
        *(f"baseline {line}" for line in end.written),
        *end.history,
    ]
    headlines = [
        headline(v) for run_ in results.runs for v in run_.verdicts if v.outcome == "regression"
    ]
    if headlines:
        lines.append("specperf regressions (report.md has the evidence):")
        lines += [f"  {line}" for line in headlines]
    return [(line, False) for line in lines] + exploratory + red


def previous_run_lines(run: SpecperfRun) -> list[str]:
    """Where the previous run's files went when this run took its out dir, if it found any."""
    if run.lock is None or not run.lock.set_aside:
        return []
    moved = len(run.lock.set_aside)
    return [
        f"the previous run's files: {run.settings.out_dir / PREVIOUS_RUN_DIR} ({moved} moved "
        "there when this run began)"
    ]


def write_header(config: pytest.Config, lines: list[str]) -> None:
    """Lines printed where pytest prints its header's: not under -q or --no-header."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not reporter.showheader or reporter.no_header:
        return
    for line in lines:
        reporter.write_line(line)


def header_lines(run: SpecperfRun, config: pytest.Config) -> list[str]:
    """The run's header once its tests are collected: its settings, its estimated time, how
    xdist splits it."""
    settings = run.settings
    where = f"url={settings.url}" if settings.url else f"backend={settings.backend}"
    run_profile = f" run-profile={settings.run_profile}" if settings.run_profile else ""
    lines = [
        f"specperf: profile={settings.profile.name}{run_profile} {where} "
        f"depths={list(settings.depths)} concurrency={list(settings.concurrency)} "
        f"out={settings.out_dir}"
    ]
    if settings.py_spy is not None:
        lines.append(f"specperf: server stacks read by {settings.py_spy}")
    elif settings.server_stacks_off is not None:
        lines.append(f"specperf: server stacks not read: {settings.server_stacks_off}")
    if settings.server_cpu_by_default:
        lines.append(
            f"specperf: server CPU placement {settings.server_cpu}, the A/B default with SGLang "
            "(the lowest median pair spread on record, across machines); "
            "--specperf-server-cpu=none leaves the scheduler where the OS puts it"
        )
    if run.history is not None and run.history.created:
        lines.append(f"specperf: {run.history.new_store_line()}")
    if run.estimate is not None:
        lines.append(f"specperf: {run.estimate.line()}")
    dist = getattr(config.option, "dist", "no")
    if dist in SPLITTING_DIST_MODES and getattr(config.option, "tx", None):
        lines.append(f"specperf: xdist --dist {dist}: each depth's tests run on one worker")
    return lines


def write_summary(reporter: Any, run: SpecperfRun, exitstatus: int) -> None:
    """pytest_terminal_summary: the run's tables and its end's lines (summary_lines)."""
    results = run.finished_results()
    if results is not None:
        reporter.section("specperf results")
    stopped = exitstatus == pytest.ExitCode.INTERRUPTED or interrupts.interrupted() is not None
    for line, red in summary_lines(run, results, reporter.stats, stopped=stopped):
        reporter.write_line(line, red=red, bold=red)
