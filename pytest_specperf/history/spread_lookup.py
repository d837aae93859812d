"""How much this runner's earlier runs differ: the history store read back for the gate.

``depth_spread`` finds the complete runs of one profile, hardware key, backend and depth whose
workload is the same as this run's (the fields of ``Workload.key()``: tokens, prompts,
endpoint ...), takes each run's agg tok/s at every point, and hands the gate a
``results.runner_spread.RunnerSpread`` (plain data: gate/ never imports history/). Earlier A/B
comparisons at that depth add their pairs' changes (the prior of the A/B verdict) where their
servers' CPU placement was this run's: pinned and unpinned schedulers spread differently
(docs/explanation/ab-gating.md, "the four placements").
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.runner_spread import RunnerSpread, runner_spread


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
    """Each earlier comparison's pairs' log changes about that comparison's own mean: the prior
    is of the spread between pairs, and comparisons differ in what they changed (an A/A sits
    at 0, a flag change at +100%), so their changes are never pooled about one centre."""
    deviations: list[float] = []
    for comparison in results.get("ab") or []:
        if comparison.get("depth") != depth:
            continue
        changes = [
            math.log1p(float(pair["change"]))
            for pair in comparison.get("pair_changes") or []
            if pair.get("change") is not None and pair["change"] > -1
        ]
        if len(changes) < 2:
            continue
        center = sum(changes) / len(changes)
        # sqrt(n / (n - 1)): a deviation from the comparison's own mean is that much smaller
        # than one from the true mean.
        scale = math.sqrt(len(changes) / (len(changes) - 1))
        deviations += [(change - center) * scale for change in changes]
    return deviations


def _comparable(workload: Mapping[str, Any]) -> dict[str, Any]:
    """A workload key as results.json holds it; runs recorded before the key named its
    workload were all of the default one."""
    return {"workload": "greedy-synthetic", **json.loads(json.dumps(dict(workload)))}


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
    placement: str | None = None,
) -> RunnerSpread | None:
    """The spread between earlier complete comparable runs at this depth (None: too few).
    ``placement``: this run's --specperf-server-cpu; an earlier A/B's pairs count where its
    servers' placement was the same or went unrecorded (files older than the option), and
    all of them count when it is None."""
    levels: list[dict[int, float]] = []
    pairs: list[float] = []
    placement_named = False  # whether a counted A/B recorded this run's placement
    comparable = _comparable(workload)
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
        if run is None or _comparable(run.get("workload") or {}) != comparable:
            continue
        if results.get("ab"):
            # An A/B run's depth run is its last head boot: its pairs are the figures.
            recorded = (run.get("server") or {}).get("cpu_placement")
            if placement is None or recorded in (None, placement):
                pairs += _pair_changes(results, depth)
                placement_named = placement_named or recorded is not None
            continue
        points = _points(run, concurrencies)
        if points:
            levels.append(points)
    where = f"{profile} on {hardware}, steps={depth}"
    found = runner_spread(levels, where, pairs)
    if found is not None and found.pair_spread is not None and placement_named:
        return replace(found, pairs_placement=placement)
    return found
