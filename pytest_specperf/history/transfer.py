"""The store in and out: CSV and github-action-benchmark exports, results.json imports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from pytest_specperf.errors import SpecperfError
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.exports import bigger_is_better
from pytest_specperf.results.schema import RESULTS_SCHEMA_VERSION, RunResults

CSV_RUN_FIELDS = (
    "run_id",
    "kind",
    "status",
    "started_at",
    "tested_commit",
    "sglang_version",
    "profile",
    "hardware",
    "workload",
    "run_profile",
    "runner",
)
CSV_POINT_FIELDS = (
    "depth",
    "concurrency",
    "load",
    "agg_tok_s",
    "per_req_tok_s",
    "accept_length",
    "verify_steps_s",
    "goodput_tok_s",
    "speedup_agg",
    "speedup_per_req",
    "kv_max_total_tokens",
    "outcome",
)


def export_csv(store: HistoryStore) -> str:
    """One row per point of every run: the run's identity, then the point's figures."""
    runs = {int(r["seq"]): r for r in store.runs()}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CSV_RUN_FIELDS, *CSV_POINT_FIELDS])
    for point in store.points():
        run = runs[int(point["run_seq"])]
        writer.writerow([run[f] for f in CSV_RUN_FIELDS] + [point[f] for f in CSV_POINT_FIELDS])
    return out.getvalue()


def _results(run: dict[str, Any]) -> RunResults | None:
    raw = run.get("results_json")
    if not raw:
        return None
    return msgspec.json.decode(raw, type=RunResults)


def export_benchmark_action(store: HistoryStore, name: str = "pytest-specperf") -> str:
    """Every complete run as github-action-benchmark's data (its ``data.js`` object, as JSON).

    Each run is one entry (commit, date, benches): the same bigger-is-better figures a run
    writes beside its results.json, so the action's charts can be seeded from the store.
    """
    entries: list[dict[str, Any]] = []
    for run in store.runs(complete_only=True):
        results = _results(run)
        if results is None:
            continue
        entries.append(
            {
                "commit": {
                    "id": run.get("tested_commit") or run["run_id"],
                    "timestamp": run["started_at"],
                    "message": f"{run['kind']} run {run['run_id']}",
                },
                "date": run["started_at"],
                "tool": "customBiggerIsBetter",
                "benches": [msgspec.to_builtins(e) for e in bigger_is_better(results.runs)],
            }
        )
    last = entries[-1]["date"] if entries else None
    return json.dumps({"lastUpdate": last, "entries": {name: entries}}, indent=1)


def load_results_file(path: Path) -> RunResults:
    try:
        raw = path.read_bytes()
        results = msgspec.json.decode(raw, type=RunResults)
    except OSError as exc:
        raise SpecperfError(f"{path}: cannot read ({exc.strerror})") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SpecperfError(f"{path}: not a results.json ({exc})") from None
    if results.schema_version > RESULTS_SCHEMA_VERSION:
        raise SpecperfError(
            f"{path}: schema_version {results.schema_version}; this pytest-specperf reads "
            f"1..{RESULTS_SCHEMA_VERSION}"
        )
    return results


def import_results(
    store: HistoryStore, paths: Sequence[Path], context: RunContext
) -> Iterable[str]:
    """Each file's run into the store (a run already there is replaced); yields what it did."""
    for path in paths:
        results = load_results_file(path)
        if not results.runs:
            yield f"{path}: no depth measured, skipped"
            continue
        store.record(results, context)
        complete = all(run.status == "complete" for run in results.runs)
        store.finish_run(results.run_id, "complete" if complete else "incomplete")
        points = sum(len(run.points) for run in results.runs)
        state = "complete" if complete else "incomplete (a depth did not finish)"
        yield f"{path}: run {results.run_id}, {points} points, {state}"
