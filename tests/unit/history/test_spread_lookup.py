"""history/spread_lookup.py: the spread between earlier comparable complete runs, from the store."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_specperf.gate.ab.prior import PairPrior
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.spread_lookup import depth_spread
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.runner_spread import RunnerSpread
from pytest_specperf.results.schema import (
    AbComparison,
    AbPair,
    DepthRun,
    RunResults,
    ServerSummary,
)
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


def _ab_results(run_id: str, changes: list[float], placement: str | None) -> RunResults:
    """An earlier A/B run: its last head boot as the depth run, its pairs' changes."""
    results = _results(run_id, 0.0)
    results.runs[0].server = ServerSummary(url="http://127.0.0.1:1", cpu_placement=placement)
    results.ab = [
        AbComparison(
            depth=3,
            outcome="no-regression",
            pairs=len(changes),
            pair_changes=[AbPair(pair=n, change=c) for n, c in enumerate(changes, start=1)],
        )
    ]
    return results


def _prior(store: HistoryStore, placement: str | None) -> RunnerSpread:
    found = depth_spread(
        store,
        profile="p",
        hardware="sim-x5",
        backend="sim",
        depth=3,
        workload=WORKLOAD,
        placement=placement,
    )
    assert found is not None
    return found


def test_an_ab_prior_takes_the_pairs_of_the_same_placement(tmp_path: Path) -> None:
    """Rotated pairs spread little, unpinned ones widely: a rotated A/B's prior comes from the
    rotated pairs and those whose placement went unrecorded, never from the unpinned ones."""
    store = HistoryStore.open(tmp_path / "h.sqlite")
    _write(store, _ab_results("rotated", [0.02, -0.02, 0.01, -0.01, 0.0], "rotate"))
    _write(store, _ab_results("unpinned", [0.3, -0.3, 0.2, -0.2, 0.1], "none"))
    _write(store, _ab_results("older", [0.02, -0.01, 0.0], None))
    rotated, unpinned, every = _prior(store, "rotate"), _prior(store, "none"), _prior(store, None)
    store.close()
    assert (rotated.pairs, unpinned.pairs, every.pairs) == (8, 8, 13)
    assert rotated.pair_spread is not None and unpinned.pair_spread is not None
    assert rotated.pair_spread < 0.05 < unpinned.pair_spread
    assert (rotated.pairs_placement, unpinned.pairs_placement, every.pairs_placement) == (
        "rotate",
        "none",
        None,
    )
    assert rotated.where == "p on sim-x5, steps=3"  # the runs' text: the gate's too
    assert "8 earlier A/B pairs (server CPU rotate) of p on sim-x5" in (
        PairPrior.from_runner(rotated).text()
    )


def test_pairs_that_never_said_their_placement_do_not_name_one(tmp_path: Path) -> None:
    store = HistoryStore.open(tmp_path / "h.sqlite")
    _write(store, _ab_results("older", [0.02, -0.01, 0.0, 0.01, -0.02], None))
    found = _prior(store, "rotate")
    store.close()
    assert found.pairs == 5 and found.pairs_placement is None
