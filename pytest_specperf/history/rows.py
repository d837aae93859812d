"""One run's rows from its RunResults (pure: no database here)."""

from __future__ import annotations

import datetime as dt
import os
import socket
from dataclasses import dataclass
from typing import Any

import msgspec

from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults, Speedup, Verdict

# Sets the tested commit of a run (else `git rev-parse HEAD`): a CI job that tests another
# checkout than its working directory, or a demo whose "nights" stand for several commits.
TESTED_COMMIT_ENV = "SPECPERF_TESTED_COMMIT"


def tested_commit_override() -> str | None:
    return os.environ.get(TESTED_COMMIT_ENV) or None


RUNNER_ENV = "SPECPERF_RUNNER"
SGLANG_GIT_HASH_ENV = "SPECPERF_SGLANG_GIT_HASH"
_OUTCOME_ORDER = ("regression", "improvement", "pass", "unjudged", "no-baseline", "recorded")
_encoder = msgspec.json.Encoder()


def to_json(value: Any) -> str:
    return _encoder.encode(value).decode("utf-8")


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """What identifies a run beyond its results: how it was started, and where."""

    run_profile: str | None = None
    calibration: bool = False
    runner: str | None = None
    kind: str | None = None  # set: overrides run_kind (an A/B run, an import)


def default_runner() -> str:
    return os.environ.get(RUNNER_ENV) or os.environ.get("RUNNER_NAME") or socket.gethostname()


def run_kind(context: RunContext) -> str:
    if context.kind:
        return context.kind
    if context.calibration:
        return "calibration"
    if context.run_profile in ("nightly", "pr"):
        return context.run_profile
    return "run"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run_row(results: RunResults, context: RunContext) -> dict[str, Any]:
    """The run's identity and its whole results (every column but seq, status, finished_at)."""
    first = results.runs[0] if results.runs else None
    server = next((r.server for r in results.runs if r.server is not None), None)
    workload = (first.workload.get("workload") or first.workload.get("name")) if first else None
    return {
        "run_id": results.run_id,
        "kind": run_kind(context),
        "started_at": results.started_at,
        "tested_commit": results.tested_commit,
        "sglang_version": server.version if server is not None else None,
        "sglang_git_hash": os.environ.get(SGLANG_GIT_HASH_ENV) or None,
        "profile": first.profile if first is not None else None,
        "hardware": first.hardware if first is not None else None,
        "backend": first.backend if first is not None else None,
        "workload": str(workload) if workload is not None else None,
        "run_profile": context.run_profile,
        "runner": context.runner or default_runner(),
        "tool_version": results.tool_version,
        "depths_json": to_json(sorted(r.depth for r in results.runs)),
        "results_json": to_json(results),
        "recommendation_json": (
            to_json(results.recommendation) if results.recommendation is not None else None
        ),
    }


def _speedup(results: RunResults, depth: int, concurrency: int) -> Speedup | None:
    for item in results.speedup:
        if item.depth == depth and item.concurrency == concurrency:
            return item
    return None


def _point_verdicts(run: DepthRun, point: PointMetrics) -> list[Verdict]:
    if point.load is not None:
        return [v for v in run.verdicts if v.load == point.load]
    return [v for v in run.verdicts if v.concurrency == point.concurrency and v.load is None]


def _outcome(run: DepthRun, point: PointMetrics) -> str | None:
    found = {v.outcome for v in _point_verdicts(run, point)}
    for outcome in _OUTCOME_ORDER:
        if outcome in found:
            return outcome
    return None


def _sample_figures(point: PointMetrics) -> list[dict[str, float | None]]:
    samples = point.samples or [point]
    return [
        {
            "agg_tok_s": s.agg_tok_s,
            "per_req_tok_s": s.per_req_tok_s,
            "accept_length": s.accept_length,
            "goodput_tok_s": s.goodput.goodput_tok_s if s.goodput is not None else None,
            "boot": float(s.boot),
        }
        for s in samples
    ]


def point_rows(results: RunResults) -> list[dict[str, Any]]:
    """Every measured point of the run (without run_seq: the store adds it)."""
    rows: list[dict[str, Any]] = []
    for run in results.runs:
        server = run.server
        for point in [*run.points, *run.rate_points]:
            speedup = (
                _speedup(results, run.depth, point.concurrency) if point.load is None else None
            )
            accept = point.accept_length
            rows.append(
                {
                    "depth": run.depth,
                    # An open-loop point: concurrency 0, its load the key.
                    "concurrency": point.concurrency if point.load is None else 0,
                    "load": point.load or "",
                    "agg_tok_s": point.agg_tok_s,
                    "per_req_tok_s": point.per_req_tok_s,
                    "accept_length": accept,
                    "verify_steps_s": point.agg_tok_s / accept if accept else None,
                    "goodput_tok_s": (
                        point.goodput.goodput_tok_s if point.goodput is not None else None
                    ),
                    "kv_max_total_tokens": server.max_total_num_tokens if server else None,
                    "max_running_requests": server.max_running_requests if server else None,
                    "speedup_agg": speedup.agg if speedup is not None else None,
                    "speedup_per_req": speedup.per_req if speedup is not None else None,
                    "outcome": _outcome(run, point),
                    "samples_json": to_json(_sample_figures(point)),
                    "intervals_json": to_json(point.intervals),
                    "position_accept_json": to_json(point.position_accept_rate),
                    "verdicts_json": to_json(_point_verdicts(run, point)),
                    "point_json": to_json(point),
                }
            )
    return rows
