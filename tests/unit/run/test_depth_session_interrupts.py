"""run/depth_session.py under the signal policy: what an interrupted depth records, and no
baseline from it. The load generator is replaced by a recorder (no server)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_specperf import interrupts
from pytest_specperf.results.schema import RunResults
from pytest_specperf.run.baselines import write_baselines
from pytest_specperf.run.depth_session import DepthSession
from tests.support.signals import own_policy
from tests.unit.run.test_depth_session import Recorder, session


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[interrupts.SignalPolicy]:
    with own_policy(monkeypatch) as fresh:
        yield fresh


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    fake = Recorder()
    monkeypatch.setattr("pytest_specperf.run.sampling.measure_point", fake)
    return fake


def signal_after_the_write(depth: DepthSession, signum: int) -> None:
    """The signal lands just after results.json was written (as a watcher of the file sends it)."""
    update = depth.store.update

    def update_then_signal(change: Callable[[RunResults], None]) -> RunResults:
        results = update(change)
        os.kill(os.getpid(), signum)
        return results

    depth.store.update = update_then_signal  # type: ignore[method-assign]


@pytest.mark.usefixtures("policy", "recorder")
def test_a_signal_as_a_point_is_recorded_names_the_next_point(tmp_path: Path) -> None:
    """C=1 is in results.json when SIGTERM comes, so the message names C=4, not C=1."""
    depth = session(tmp_path, warmup_rounds="0")  # the first write is then C=1's sample
    signal_after_the_write(depth, signal.SIGTERM)
    with pytest.raises(interrupts.Interrupted) as caught:
        depth.measure(1)
    depth.store.update = type(depth.store).update.__get__(depth.store)  # type: ignore[method-assign]
    depth.interrupt(caught.value)  # as the plugin's keyboard-interrupt hook does
    assert depth.failure == "interrupted (SIGTERM) before C=4 was measured"
    assert 1 in depth.complete


def recorded_run(tmp_path: Path) -> tuple[DepthSession, RunResults]:
    """A recording run that measured both its points and stopped its server. No warm-up: it
    is not the recorder's (it streamed to the session's closed port for 12 s)."""
    depth = session(tmp_path, update_baselines="true", warmup_rounds="0")
    depth.measure(1)
    depth.measure(4)
    depth.close()
    results = depth.store.load()
    assert results is not None
    return depth, results


@pytest.mark.usefixtures("recorder")
def test_an_interrupted_run_writes_no_baseline(
    tmp_path: Path, policy: interrupts.SignalPolicy
) -> None:
    depth, results = recorded_run(tmp_path)
    interrupts.ending()
    os.kill(os.getpid(), signal.SIGINT)
    lines = write_baselines(depth.settings, list(results.runs))
    assert lines == ["steps=3: NOT written (the run was interrupted)"]
    assert list(depth.settings.baselines_dir.rglob("*.json")) == []


@pytest.mark.usefixtures("recorder")
def test_a_baseline_written_before_a_late_signal_is_taken_back(
    tmp_path: Path, policy: interrupts.SignalPolicy
) -> None:
    depth, results = recorded_run(tmp_path)
    lines = write_baselines(depth.settings, list(results.runs))
    assert lines[0].startswith("steps=3: wrote ")
    interrupts.ending()
    os.kill(os.getpid(), signal.SIGINT)  # e.g. while the report is printed
    assert interrupts.conclude() is True
    assert list(depth.settings.baselines_dir.rglob("*.json")) == []
