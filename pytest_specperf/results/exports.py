"""Results in the formats other tools read.

github-action-benchmark keeps a history chart per figure from a JSON list of
``{"name", "unit", "value", "range"?, "extra"?}``; one file is read either as
``customBiggerIsBetter`` or as ``customSmallerIsBetter``, so the figures are split in two files
by their direction: speed, goodput, capacity, accept length, acceptance per draft position and
the speedup over the control (bigger is better) and latencies (smaller is better). Names are
stable across runs (``steps=3 C=16 agg tok/s``): the chart of a name is its history.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.results.formats import ratio_of, relative_change
from pytest_specperf.results.schema import (
    AbChange,
    AbComparison,
    DepthRun,
    Interval,
    Percentiles,
    PointMetrics,
)
from pytest_specperf.results.speedup import speedups

BIGGER_IS_BETTER_FILE = "benchmark-bigger-is-better.json"
SMALLER_IS_BETTER_FILE = "benchmark-smaller-is-better.json"


class BenchmarkEntry(msgspec.Struct, omit_defaults=True):
    name: str
    unit: str
    value: float
    range: str | None = None
    extra: str | None = None


def _range(interval: Interval | None) -> str | None:
    """The interval as github-action-benchmark shows it next to the value."""
    if interval is None:
        return None
    return f"{interval.low:.6g} .. {interval.high:.6g} ({interval.level:.0%} {interval.method})"


def _extra(run: DepthRun, point: PointMetrics | None = None) -> str:
    parts = [f"profile={run.profile}", f"hardware={run.hardware}", f"backend={run.backend}"]
    if run.server is not None and run.server.version:
        parts.append(f"sglang={run.server.version}")
    if point is not None:
        parts.append(f"ok={point.ok}/{point.requests}")
    return " ".join(parts)


# One figure of a point or a run: (label, unit, value or None: not measured, interval).
Figure = tuple[str, str, float | int | None, Interval | None]


def _entries(where: str, figures: Sequence[Figure], extra: str) -> list[BenchmarkEntry]:
    """One entry per measured figure, named ``<where> <label>``."""
    return [
        BenchmarkEntry(
            name=f"{where} {label}",
            unit=unit,
            value=float(value),
            range=_range(interval),
            extra=extra,
        )
        for label, unit, value, interval in figures
        if value is not None
    ]


def _point_figures(point: PointMetrics) -> list[Figure]:
    goodput = point.goodput.goodput_tok_s if point.goodput is not None else None
    return [
        ("agg tok/s", "tok/s", point.agg_tok_s, point.intervals.get("agg_tok_s")),
        ("per-req tok/s", "tok/s", point.per_req_tok_s, point.intervals.get("per_req_tok_s")),
        ("goodput tok/s", "tok/s", goodput, None),
    ]


def _run_figures(run: DepthRun) -> list[Figure]:
    server = run.server
    positions: list[Figure] = [
        (f"acceptance of draft position {position}", "share of verify steps", rate, None)
        for position, rate in enumerate(run.position_accept_rate, start=1)
    ]
    return [
        *positions,
        ("KV tokens", "tokens", server.max_total_num_tokens if server else None, None),
        ("max running requests", "requests", server.max_running_requests if server else None, None),
        ("accept length", "tokens/step", run.accept_length, None),
    ]


def bigger_is_better(runs: Sequence[DepthRun]) -> list[BenchmarkEntry]:
    entries: list[BenchmarkEntry] = []
    for run in sorted(runs, key=lambda r: r.depth):
        for point in sorted(run.points, key=lambda p: p.concurrency):
            where = f"steps={run.depth} C={point.concurrency}"
            entries += _entries(where, _point_figures(point), _extra(run, point))
        entries += _entries(f"steps={run.depth}", _run_figures(run), _extra(run))
    # Each depth over the control, when it is in the run: the history that a driver or clock
    # change, which moves every absolute figure, leaves standing.
    by_depth = {run.depth: run for run in runs}
    for found in speedups(runs):
        figures: list[Figure] = [
            ("agg speedup over steps=0", "x", found.agg, None),
            ("per-req speedup over steps=0", "x", found.per_req, None),
        ]
        where = f"steps={found.depth} C={found.concurrency}"
        entries += _entries(where, figures, _extra(by_depth[found.depth]))
    return entries


def _latency(label: str, percentiles: Percentiles | None) -> list[Figure]:
    if percentiles is None:
        return []
    return [
        (f"{label} {name}", "ms", value * 1000, None)
        for name, value in (("p50", percentiles.p50), ("p99", percentiles.p99))
    ]


def smaller_is_better(runs: Sequence[DepthRun]) -> list[BenchmarkEntry]:
    entries: list[BenchmarkEntry] = []
    for run in sorted(runs, key=lambda r: r.depth):
        for point in sorted(run.points, key=lambda p: p.concurrency):
            figures = [*_latency("TTFT", point.ttft_s), *_latency("ITL", point.itl_s)]
            entries += _entries(
                f"steps={run.depth} C={point.concurrency}", figures, _extra(run, point)
            )
    return entries


def _change_range(change: AbChange) -> str | None:
    if change.low is None or change.high is None:
        return None
    return f"{relative_change(ratio_of(change.low))} to {relative_change(ratio_of(change.high))}"


def ab_entries(comparisons: Sequence[AbComparison]) -> list[BenchmarkEntry]:
    """A/B mode: each point's change head / base (and the depth pooled), in percent."""
    entries: list[BenchmarkEntry] = []
    for comparison in comparisons:
        changes = [*comparison.points, *([comparison.pooled] if comparison.pooled else [])]
        for change in changes:
            where = "pooled" if change.concurrency is None else f"C={change.concurrency}"
            entries.append(
                BenchmarkEntry(
                    name=f"steps={comparison.depth} {where} A/B change head/base",
                    unit="%",
                    value=round(change.change * 100, 2),
                    range=_change_range(change),
                    extra=f"{comparison.outcome} after {comparison.pairs} pair(s); {change.why}",
                )
            )
    return entries


def write_benchmark_action_files(
    runs: Sequence[DepthRun], out_dir: Path, ab: Sequence[AbComparison] = ()
) -> list[Path]:
    """Both files, beside report.md (each written atomically); returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, entries in (
        (BIGGER_IS_BETTER_FILE, bigger_is_better(runs) + ab_entries(ab)),
        (SMALLER_IS_BETTER_FILE, smaller_is_better(runs)),
    ):
        path = out_dir / file_name
        atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(entries), indent=1))
        written.append(path)
    return written
