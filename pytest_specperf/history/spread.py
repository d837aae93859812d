"""How much this runner's earlier runs differ: the history store read back for the gate.

``depth_spread`` finds the complete runs of one profile, hardware key, backend and depth whose
workload is the same as this run's (the fields of ``Workload.key()``: tokens, prompts,
endpoint ...), takes each run's agg tok/s at every point, and hands the gate a
``results.spread.RunnerSpread`` (plain data: gate/ never imports history/). Earlier A/B
comparisons at that depth add their pairs' changes (the prior of the A/B verdict).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.spread import RunnerSpread, runner_spread


def _depth_of(results: Mapping[str, Any], depth: int) -> Mapping[str, Any] | None:
    for run in results.get("runs") or []:
        if run.get("depth") == depth:
            return dict(run)
    return None


def _points(run: Mapping[str, Any], concurrencies: set[int] | None) -> dict[int, float]:
    found = {}
    for point in run.get("points") or []:
        concurrency = int(point.get("concurrency", 0))
        value = point.get("agg_tok_s")
        if value and (concurrencies is None or concurrency in concurrencies):
            found[concurrency] = float(value)
    return found


def _pair_changes(results: Mapping[str, Any], depth: int) -> list[float]:
    changes = []
    for comparison in results.get("ab") or []:
        if comparison.get("depth") != depth:
            continue
        for pair in comparison.get("pair_changes") or []:
            change = pair.get("change")
            if change is not None and change > -1:
                changes.append(math.log1p(float(change)))
    return changes


def depth_spread(
    store: HistoryStore,
    *,
    profile: str,
    hardware: str,
    backend: str,
    depth: int,
    workload: Mapping[str, Any],
    concurrencies: set[int] | None = None,
    exclude_run: str | None = None,
) -> RunnerSpread | None:
    """The spread between earlier complete comparable runs at this depth (None: too few)."""
    levels: list[dict[int, float]] = []
    pairs: list[float] = []
    comparable = json.loads(json.dumps(dict(workload)))  # as results.json holds it
    for row in store.runs(complete_only=True):
        if row.get("run_id") == exclude_run:
            continue
        if (row.get("profile"), row.get("hardware"), row.get("backend")) != (
            profile,
            hardware,
            backend,
        ):
            continue
        try:
            results = json.loads(row.get("results_json") or "{}")
        except ValueError:
            continue
        run = _depth_of(results, depth)
        if run is None or dict(run.get("workload") or {}) != comparable:
            continue
        if results.get("ab"):
            # An A/B run's depth run is its last head boot: its pairs are the figures.
            pairs += _pair_changes(results, depth)
            continue
        points = _points(run, concurrencies)
        if points:
            levels.append(points)
    where = f"{profile} on {hardware}, steps={depth}"
    return runner_spread(levels, where, pairs)
