"""The nightly series read back from the store's rows (pure: rows in, series out).

One series per (profile, hardware, workload, depth, concurrency or load, metric): the runs in the
order they were written, each run's median of the metric, its samples, and beside the
throughput the two factors it splits into (tok/s = accept length x verify steps/s).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Series searched for change points; accept_length and verify_steps_s explain them.
DETECTED_METRICS = ("agg_tok_s", "per_req_tok_s", "goodput_tok_s", "speedup_agg")
FACTOR_METRICS = ("accept_length", "verify_steps_s")
_SAMPLE_FIELDS = ("agg_tok_s", "per_req_tok_s", "goodput_tok_s")


@dataclass(frozen=True)
class Night:
    """One run of a series (a "night" of the nightly job, whatever its schedule)."""

    seq: int
    run_id: str
    started_at: str
    commit: str | None
    sglang_version: str | None

    @property
    def date(self) -> str:
        return self.started_at[:10]

    @property
    def label(self) -> str:
        return (self.commit or self.run_id)[:10]


@dataclass(frozen=True, order=True)
class SeriesKey:
    profile: str
    hardware: str
    workload: str
    depth: int
    concurrency: int
    metric: str
    # An open-loop point's load ("rate=4"; its concurrency 0); "": a closed-loop point.
    load: str = ""

    @property
    def point(self) -> str:
        return self.load or f"C={self.concurrency}"

    def __str__(self) -> str:
        return (
            f"{self.profile} {self.hardware} {self.workload} steps={self.depth} "
            f"{self.point} {self.metric}"
        )


@dataclass
class Series:
    key: SeriesKey
    nights: list[Night] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    # Each night's own samples of the metric (empty: only its median is known).
    samples: list[list[float]] = field(default_factory=list)
    accept_length: list[float | None] = field(default_factory=list)
    verify_steps_s: list[float | None] = field(default_factory=list)
    position_accept: list[list[float]] = field(default_factory=list)


def night_of(run: Mapping[str, Any]) -> Night:
    return Night(
        seq=int(run["seq"]),
        run_id=str(run["run_id"]),
        started_at=str(run["started_at"]),
        commit=run.get("tested_commit"),
        sglang_version=run.get("sglang_version"),
    )


def _positive(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) and number > 0 else None


def build_series(
    runs: Iterable[Mapping[str, Any]], points: Iterable[Mapping[str, Any]]
) -> list[Series]:
    """Every series of the given runs (oldest first), for the detected metrics."""
    by_seq = {int(run["seq"]): run for run in runs}
    found: dict[SeriesKey, Series] = {}
    for point in sorted(points, key=lambda p: int(p["run_seq"])):
        run = by_seq.get(int(point["run_seq"]))
        if run is None:
            continue
        sample_rows = json.loads(point.get("samples_json") or "[]")
        for metric in DETECTED_METRICS:
            value = _positive(point.get(metric))
            if value is None:
                continue
            key = SeriesKey(
                str(run.get("profile")),
                str(run.get("hardware")),
                str(run.get("workload")),
                int(point["depth"]),
                int(point["concurrency"]),
                metric,
                str(point.get("load") or ""),
            )
            series = found.setdefault(key, Series(key))
            series.nights.append(night_of(run))
            series.values.append(value)
            series.samples.append(
                [
                    float(row[metric])
                    for row in sample_rows
                    if metric in _SAMPLE_FIELDS and _positive(row.get(metric)) is not None
                ]
            )
            series.accept_length.append(_positive(point.get("accept_length")))
            series.verify_steps_s.append(_positive(point.get("verify_steps_s")))
            series.position_accept.append(
                [float(x) for x in json.loads(point.get("position_accept_json") or "[]")]
            )
    return [found[key] for key in sorted(found)]
