"""results.json: written after every point, atomically, under a lock shared by xdist workers.

A run that dies at its last point keeps every point measured before it. With ``report``, the
markdown report is rewritten from the same results under the same lock, so it survives a
killed process too. A results.json this version cannot read (corrupt, or written by a newer
schema) is never overwritten: the next write moves it aside as ``results.json.corrupt-<time>``
and says so in a ResultsFileWarning.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import uuid
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
from filelock import FileLock

from pytest_specperf import interrupts
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.results.plot_style import Plot
from pytest_specperf.results.report import ReportContext, markdown_report
from pytest_specperf.results.schema import RESULTS_SCHEMA_VERSION, RunResults
from pytest_specperf.version import __version__

RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"
# Where an out dir keeps the run before the one it holds (results/previous_run.py).
PREVIOUS_RUN_DIR = "previous"
_encoder = msgspec.json.Encoder()


class ResultsFileWarning(UserWarning):
    """An unreadable results.json was moved aside instead of being overwritten."""


class _SchemaHeader(msgspec.Struct):
    schema_version: int


class _Unreadable(Exception):
    """Why a results file cannot be read, in words."""


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def start_time() -> str:
    """Now, as a run's ``started_at`` reads (UTC, seconds)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class ResultsStore:
    def __init__(
        self,
        out_dir: Path,
        run_id: str | None = None,
        *,
        report: bool = False,
        tested_commit: str | None = None,
        on_write: Callable[[RunResults], None] | None = None,
        started_at: str | None = None,
    ) -> None:
        self.out_dir = out_dir
        # When the run started: its first write may come long after (an A/B run writes once
        # its first comparison is decided). None: the time of that first write.
        self.started_at = started_at
        # Given every results.json just written, under the same lock (the history store).
        self.on_write = on_write
        self.tested_commit = tested_commit
        self.path = out_dir / RESULTS_FILE
        self.report_path = out_dir / REPORT_FILE if report else None
        self.run_id = run_id or new_run_id()
        self._lock = FileLock(str(out_dir / ".results.lock"), timeout=60)

    def load(self) -> RunResults | None:
        """This run's results; None before its first write (another run's file is not it)."""
        try:
            results = self._read()
        except _Unreadable:
            return None
        return results if results is not None and results.run_id == self.run_id else None

    def _read(self) -> RunResults | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            version = msgspec.json.decode(raw, type=_SchemaHeader).schema_version
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise _Unreadable(f"not a results file ({exc})") from None
        if not 1 <= version <= RESULTS_SCHEMA_VERSION:
            raise _Unreadable(
                f"schema_version {version}; this pytest-specperf reads 1..{RESULTS_SCHEMA_VERSION}"
            )
        try:
            return msgspec.json.decode(raw, type=RunResults)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise _Unreadable(f"not a valid results file ({exc})") from None

    def _read_or_move_aside(self) -> RunResults | None:
        try:
            return self._read()
        except _Unreadable as exc:
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            self.path.replace(aside)
            warnings.warn(
                ResultsFileWarning(
                    f"{self.path}: {exc}; kept as {aside.name}, this run writes a new one"
                ),
                stacklevel=3,
            )
            return None

    def update(self, change: Callable[[RunResults], None]) -> RunResults:
        """Apply ``change`` to the run's results and write them (and report.md) under the lock.

        A signal meanwhile is raised once the write is done and the lock released: raised
        inside the lock's acquisition it left the lock file held by a descriptor nobody would
        close, and the run's last write, the one that marks it interrupted, timed out on it.
        """
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with interrupts.deferred(), self._lock:
            results = self._read_or_move_aside()
            if results is not None and results.run_id != self.run_id:
                # Another run's file, left where no run took the folder first (that sets the
                # previous run aside): kept where the folder keeps the run before.
                previous = self.out_dir / PREVIOUS_RUN_DIR
                previous.mkdir(exist_ok=True)
                self.path.replace(previous / RESULTS_FILE)
                results = None
            if results is None:
                results = RunResults(
                    run_id=self.run_id,
                    started_at=self.started_at or start_time(),
                    tool_version=__version__,
                    tested_commit=self.tested_commit,
                )
            change(results)
            self._write(results)
            if self.report_path is not None:
                write_report(self.report_path, results)
            if self.on_write is not None:
                self.on_write(results)
            return results

    def _write(self, results: RunResults) -> None:
        atomic_write_bytes(self.path, msgspec.json.format(_encoder.encode(results), indent=1))


# The ReportContext fields that RunResults holds under the same name.
_REPORTED_AS_RECORDED = (
    "runs",
    "started_at",
    "run_id",
    "tool_version",
    "tested_commit",
    "exit_status",
    "exit_reasons",
    "exit_notes",
    "interrupted",
    "slo",
    "recommendation",
    "ab",
)


def report_context(
    results: RunResults,
    *,
    plots: Sequence[Plot] = (),
    embed_plots: bool = True,
    notes: Sequence[str] = (),
) -> ReportContext:
    as_recorded = {name: getattr(results, name) for name in _REPORTED_AS_RECORDED}
    return ReportContext(
        comparisons=results.lossless,
        plots=plots,
        embed_plots=embed_plots,
        notes=notes,
        **as_recorded,
    )


def write_report(
    path: Path, results: RunResults, plots: Sequence[Plot] = (), notes: Sequence[str] = ()
) -> None:
    """report.md from the results, atomically (a reader never sees half a report)."""
    text = markdown_report(report_context(results, plots=plots, notes=notes))
    atomic_write_bytes(path, text.encode("utf-8"))


def append_step_summary(
    path: Path, results: RunResults, plots: Sequence[Plot] = (), notes: Sequence[str] = ()
) -> None:
    """Append the report to a CI job summary file (GitHub Actions' $GITHUB_STEP_SUMMARY).

    Appended, not replaced: the job's other steps write to the same file. The plots are named,
    not embedded: a job summary cannot show the job's artifact files.
    """
    context = report_context(results, plots=plots, embed_plots=False, notes=notes)
    with path.open("a", encoding="utf-8") as summary:
        summary.write(markdown_report(context) + "\n")


def git_commit(directory: Path) -> str | None:
    """The commit checked out in ``directory``; None when it is not a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None
