"""A baseline calibrated across machines: one depth's runs on several runners merged into one.

A nightly runs on whichever runner the pool gives, a fresh machine each time, so what its
figures differ by with no change is the spread between machines (each run one boot of one
machine), not the noise within one boot. Each run given is one machine's group of samples;
two runs on the same cards (the testbed's GPU UUIDs) count as one machine. Per point and
metric the noise is then ``estimate_noise`` over those groups: within-boot from the samples
around their machine's mean, and between machines, recorded as the larger of the
random-effects estimate and the robust spread of the machines' means (MAD x 1.4826, the
history spread's estimate). ``gate/noise.py`` ``noise_for`` reads it as it reads boots: at
least 5% from fewer than 3 machines, its 60% upper bound from fewer than 5.
Pure: reads and writes no file.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from pytest_specperf.errors import BaselineError
from pytest_specperf.gate.baselines import (
    THROUGHPUT_METRICS,
    Baseline,
    BaselinePoint,
    MachineRun,
    MachineSpread,
    Tolerance,
    baseline_from_runs,
    metric_samples,
)
from pytest_specperf.gate.noise import NoiseSource, estimate_noise
from pytest_specperf.results.runner_spread import robust_spread, run_levels
from pytest_specperf.results.schema import DepthRun

METHOD = (
    "each machine's run one group of samples; between machines per point and metric: the "
    "larger of the random-effects estimate (variance of the machines' means less what the "
    "within-boot noise explains) and the robust spread of their means (MAD x 1.4826); the "
    "gate takes at least 5% from fewer than 3 machines and the 60% upper bound from fewer than 5"
)


@dataclass(frozen=True)
class LabelledRun:
    """One depth's run and the name a merged baseline gives it (its run id and date)."""

    label: str
    run: DepthRun


def machine_key(run: LabelledRun) -> str:
    """Which machine: its GPUs' UUIDs where recorded, else the run itself (one machine)."""
    testbed = run.run.testbed
    return testbed.gpu_uuid if testbed and testbed.gpu_uuid else f"run:{run.label}"


def by_machine(runs: Sequence[LabelledRun]) -> list[list[LabelledRun]]:
    groups: dict[str, list[LabelledRun]] = {}
    for run in runs:
        groups.setdefault(machine_key(run), []).append(run)
    return list(groups.values())


def merge_across_machines(
    runs: Sequence[LabelledRun],
    *,
    how_recorded: str,
    tolerance: Tolerance | None = None,
) -> Baseline:
    """One baseline from ``runs`` of one profile, hardware key, backend, depth and workload."""
    if not runs:
        raise BaselineError("a merged baseline needs at least one run")
    _same_key(runs)
    machines = by_machine(runs)
    # One machine says nothing of the spread between machines: its repeats, as promote records.
    source: NoiseSource = "calibrated" if len(machines) > 1 else "recorded repeats"
    base = baseline_from_runs(
        [r.run for r in runs], tolerance=tolerance, how_recorded=how_recorded, source=source
    )
    points = {
        key: _machine_point(point, int(key), machines, source) for key, point in base.points.items()
    }
    testbed = base.testbed and msgspec.structs.replace(base.testbed, gpu_uuid=None)
    return msgspec.structs.replace(
        base,
        points=points,
        testbed=testbed,
        machines=_spread(machines),
        recorded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )


def _same_key(runs: Sequence[LabelledRun]) -> None:
    def key(run: DepthRun) -> tuple[object, ...]:
        return (run.profile, run.hardware, run.backend, run.depth, run.workload)

    first = runs[0]
    for other in runs[1:]:
        if key(other.run) != key(first.run):
            raise BaselineError(
                f"cannot merge {other.label} into {first.label}: they measured different "
                f"things ({_key_text(other.run)} vs {_key_text(first.run)})"
            )


def _key_text(run: DepthRun) -> str:
    workload = run.workload.get("workload"), run.workload.get("max_new_tokens")
    return (
        f"profile={run.profile} hardware={run.hardware} backend={run.backend} "
        f"steps={run.depth} workload={workload[0]} tokens={workload[1]}"
    )


def _groups(
    machines: Sequence[Sequence[LabelledRun]], concurrency: int, metric: str
) -> list[list[float]]:
    groups = []
    for machine in machines:
        values = [
            value
            for labelled in machine
            if (point := labelled.run.point(concurrency)) is not None
            for value in metric_samples(point, metric)
        ]
        if values:
            groups.append(values)
    return groups


def _machine_point(
    point: BaselinePoint,
    concurrency: int,
    machines: Sequence[Sequence[LabelledRun]],
    source: NoiseSource,
) -> BaselinePoint:
    noise = dict(point.noise)
    for metric in THROUGHPUT_METRICS:
        groups = _groups(machines, concurrency, metric)
        if not groups:
            continue
        estimate = estimate_noise(groups, source)
        between = estimate.boot_to_boot_cv
        if between is not None:
            means = [statistics.fmean(math.log(v) for v in group) for group in groups]
            between = max(between, robust_spread(means))
        noise[metric] = msgspec.structs.replace(
            estimate, boot_to_boot_cv=between, machines=len(groups)
        )
    boots = max((len(_groups(machines, concurrency, m)) for m in THROUGHPUT_METRICS), default=1)
    return msgspec.structs.replace(point, noise=noise, boots=boots)


def _levels(machines: Sequence[Sequence[LabelledRun]], metric: str) -> list[float | None]:
    """Each machine's level of ``metric`` (run_levels over its points' medians)."""
    figures: list[dict[int, float]] = []
    for machine in machines:
        by_point: dict[int, list[float]] = {}
        for labelled in machine:
            for point in labelled.run.points:
                by_point.setdefault(point.concurrency, []).extend(metric_samples(point, metric))
        figures.append({c: statistics.median(v) for c, v in by_point.items() if v})
    levels = iter(run_levels([f for f in figures if f]))
    return [next(levels) if f else None for f in figures]


def _spread(machines: Sequence[Sequence[LabelledRun]]) -> MachineSpread:
    agg = _levels(machines, "agg_tok_s")
    per_req = _levels(machines, "per_req_tok_s")
    entries = []
    for machine, agg_level, per_req_level in zip(machines, agg, per_req, strict=True):
        testbed = machine[-1].run.testbed
        entries.append(
            MachineRun(
                run=", ".join(labelled.label for labelled in machine),
                gpu_name=testbed.gpu_name if testbed else None,
                gpu_uuid=testbed.gpu_uuid if testbed else None,
                driver=testbed.driver if testbed else None,
                cpu_model=testbed.cpu_model if testbed else None,
                sglang=testbed.sglang if testbed else None,
                samples=sum(
                    len(metric_samples(p, "agg_tok_s")) for r in machine for p in r.run.points
                ),
                agg_level=_round(agg_level),
                per_req_level=_round(per_req_level),
            )
        )
    return MachineSpread(
        count=len(machines),
        runs=entries,
        agg_spread_mad=_round(_mad(agg)),
        agg_spread_sd=_round(_sd(agg)),
        per_req_spread_mad=_round(_mad(per_req)),
        per_req_spread_sd=_round(_sd(per_req)),
        method=METHOD,
    )


def _known(levels: Sequence[float | None]) -> list[float]:
    return [level for level in levels if level is not None]


def _mad(levels: Sequence[float | None]) -> float | None:
    known = _known(levels)
    return robust_spread(known) if len(known) >= 2 else None


def _sd(levels: Sequence[float | None]) -> float | None:
    known = _known(levels)
    return statistics.stdev(known) if len(known) >= 2 else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 5)


def spread_text(spread: MachineSpread) -> str:
    """``3 machines (NVIDIA H200 x3): agg tok/s spread 0.4% (MAD), 0.5% (SD); ...``"""
    gpus = statistics.mode([r.gpu_name or "GPU not recorded" for r in spread.runs])
    parts = []
    for label, mad, sd in (
        ("agg tok/s", spread.agg_spread_mad, spread.agg_spread_sd),
        ("per-req tok/s", spread.per_req_spread_mad, spread.per_req_spread_sd),
    ):
        if mad is not None and sd is not None:
            parts.append(f"{label} between machines {mad:.1%} (MAD), {sd:.1%} (SD)")
    figures = "; ".join(parts) if parts else "one machine: no spread between machines"
    return f"{spread.count} machine(s) ({gpus}): {figures}"
