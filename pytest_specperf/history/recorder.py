"""A test run's side of the history store: open it, record each write, close the run.

Used by the plugin (any front end may): ``start`` at the beginning writes the run's row,
``record`` is given every results.json write (each finished point), ``finish`` marks the run
complete (an interrupted or killed one stays incomplete) and says what changed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from pytest_specperf.errors import SpecperfError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.history.changes import DetectionSettings
from pytest_specperf.history.plots import write_trend_plots
from pytest_specperf.history.report import HistoryFindings, findings, markdown_section, text_lines
from pytest_specperf.history.rows import TESTED_COMMIT_ENV, RunContext, tested_commit_override
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import RunResults
from pytest_specperf.version import __version__

__all__ = ["TESTED_COMMIT_ENV", "FinishedRecording", "HistoryRecorder", "tested_commit_override"]
# Said with a store this run created: a path meant to be an existing store is noticed.
NEW_STORE_HINT = "no earlier runs in it; if you meant an existing store, this path is not it"


@dataclass
class FinishedRecording:
    """What finishing a run's recording says: its lines for the terminal, whether the nightly
    series has new change points, the trend plots written."""

    lines: list[str]
    new_changes: bool
    plots: list[Path]


class HistoryRecorder:
    def __init__(self, target: str, context: RunContext) -> None:
        self.target = target
        self.context = context
        self._store: HistoryStore | None = None

    @property
    def store(self) -> HistoryStore:
        if self._store is None:
            self._store = HistoryStore.open(self.target)
        return self._store

    @property
    def created(self) -> bool:
        """Whether this run's opening created the store: a new, empty history."""
        return self.store.created

    def new_store_line(self) -> str:
        """What the run's header says when its opening created the store."""
        return f"history store {self.target}: new, created empty by this run ({NEW_STORE_HINT})"

    def start(self, run_id: str, tested_commit: str | None) -> None:
        """The run's row before anything is measured (status incomplete)."""
        started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        empty = RunResults(
            run_id=run_id, started_at=started, tool_version=__version__, tested_commit=tested_commit
        )
        self.store.begin_run(empty, self.context)

    def record(self, results: RunResults) -> None:
        self.store.record(results, self.context)

    def finish(
        self,
        run_id: str,
        *,
        complete: bool,
        out_dir: Path,
        settings: DetectionSettings | None = None,
    ) -> FinishedRecording:
        """Mark the run; with a complete nightly run, its change points into report.md."""
        store = self.store
        new = f", a new store: its first run ({NEW_STORE_HINT})" if store.created else ""
        if not complete:
            return FinishedRecording(
                [f"history: run left incomplete (interrupted){new}"], False, []
            )
        store.finish_run(run_id)
        if self.context.run_profile != "nightly":
            return FinishedRecording(
                [f"history: run {run_id} recorded in {self.target}{new}"], False, []
            )
        found = findings(store, settings, kind="nightly")
        plots = write_trend_plots(store, found, out_dir)
        _append_section(out_dir / "report.md", found, plots)
        lines = [f"history ({self.target}{new}):", *(f"  {line}" for line in text_lines(found))]
        return FinishedRecording(lines, found.has_new, plots)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def _append_section(report: Path, found: HistoryFindings, plots: list[Path]) -> None:
    try:
        text = report.read_text(encoding="utf-8") if report.exists() else ""
    except OSError as exc:
        raise SpecperfError(f"{report}: cannot read ({exc.strerror})") from None
    section = markdown_section(found, [p.name for p in plots])
    atomic_write_bytes(report, (text.rstrip() + "\n\n" + section).encode("utf-8"))
