"""results.json: written after every point, atomically, under a lock shared by xdist workers.

A run that dies at its last point keeps every point measured before it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from pathlib import Path

import msgspec
from filelock import FileLock

from pytest_specperf import __version__
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.schema import RunResults

RESULTS_FILE = "results.json"
_encoder = msgspec.json.Encoder()


class ResultsStore:
    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.path = out_dir / RESULTS_FILE
        self._lock = FileLock(str(out_dir / ".results.lock"), timeout=60)

    def start(self) -> RunResults:
        """Begin a new run file; a previous run's file is kept as results.previous.json."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        results = RunResults(
            run_id=uuid.uuid4().hex[:12],
            started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            tool_version=__version__,
        )
        with self._lock:
            if self.path.exists():
                self.path.replace(self.out_dir / "results.previous.json")
            self._write(results)
        return results

    def load(self) -> RunResults | None:
        try:
            return msgspec.json.decode(self.path.read_bytes(), type=RunResults)
        except FileNotFoundError:
            return None

    def update(self, change: Callable[[RunResults], None]) -> RunResults:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            results = self.load()
            if results is None:
                results = RunResults(
                    run_id=uuid.uuid4().hex[:12],
                    started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                    tool_version=__version__,
                )
            change(results)
            self._write(results)
            return results

    def _write(self, results: RunResults) -> None:
        atomic_write_bytes(self.path, msgspec.json.format(_encoder.encode(results), indent=1))
