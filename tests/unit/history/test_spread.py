"""history/spread.py: the spread between earlier comparable complete runs, from the store."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.spread import depth_spread
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import DepthRun, RunResults
from tests.support.points import make_point

WORKLOAD = {"workload": "greedy-synthetic", "max_new_tokens": 200}


def _results(
    run_id: str, level: float, *, hardware: str = "sim-x5", tokens: int = 200
) -> RunResults:
    points = [
        make_point(c, 100.0 * c * math.exp(level), 100.0, requests=1, tokens=1) for c in (1, 4)
    ]
    run = DepthRun(
        depth=3,
        profile="p",
        backend="sim",
        hardware=hardware,
        workload={**WORKLOAD, "max_new_tokens": tokens},
        points=points,
    )
    return RunResults(
        run_id=run_id, started_at="2026-12-05T00:00:00+00:00", tool_version="0", runs=[run]
    )


def _write(store: HistoryStore, results: RunResults, complete: bool = True) -> None:
    store.record(results, RunContext(run_profile="nightly", runner="r"))
    if complete:
        store.finish_run(results.run_id)


def test_only_complete_comparable_runs_count(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    levels = [0.0, 0.05, -0.05, 0.02, -0.02, 0.1]
    for n, level in enumerate(levels):
        _write(store, _results(f"run{n}", level))
    _write(store, _results("elsewhere", 0.5, hardware="sim-x10"))
    _write(store, _results("longer", 0.5, tokens=1000))
    _write(store, _results("killed", 0.5), complete=False)
    found = depth_spread(
        store, profile="p", hardware="sim-x5", backend="sim", depth=3, workload=WORKLOAD
    )
    store.close()
    assert found is not None and found.runs == len(levels)
    assert found.spread == pytest.approx(1.4826 * 0.035, rel=0.01)
    assert found.where == "p on sim-x5, steps=3"


def test_too_few_runs_give_none(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    for n in range(3):
        _write(store, _results(f"run{n}", 0.01 * n))
    assert (
        depth_spread(
            store, profile="p", hardware="sim-x5", backend="sim", depth=3, workload=WORKLOAD
        )
        is None
    )
    store.close()
