"""Baselines: self-describing JSON under ``<root>/<profile>/<hardware>/steps-<N>.json``.

A baseline holds what one (profile, hardware, depth, workload) measured or published: per
point the median figures, every sample behind them and the noise measured with them
(schema 2); the explicit tolerance is what a published figure, or a point without recorded
noise, is held to. The seed's workload (greedy-synthetic) has ``steps-<N>.json``; another
workload has its own file beside it, ``steps-<N>.<workload>.json``. Schema 1 files are
migrated in memory when loaded (``migrate``), and written as schema 2 when saved again.
Loading never raises anything but BaselineError, whose one line names the file and the
problem; saving is atomic and locked, and refuses to replace a file that describes another key.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec
from filelock import FileLock

from pytest_specperf.depth import depth_problem
from pytest_specperf.errors import BaselineError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.gate.noise import MetricNoise, NoiseSource, estimate_noise
from pytest_specperf.gate.recommend import slo_capacity
from pytest_specperf.measure.repeats import merge_samples
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD
from pytest_specperf.results.schema import (
    DEFAULT_THROUGHPUT_TOLERANCE,
    DepthRun,
    PointMetrics,
    Slo,
    SloCapacity,
    Testbed,
)
from pytest_specperf.results.speedup import point_speedup
from pytest_specperf.results.testbed_compare import merged as merged_testbed
from pytest_specperf.server.hardware import slug

BASELINE_SCHEMA_VERSION = 2
# The figures a baseline holds per point, by their PointMetrics attribute names.
THROUGHPUT_METRICS = ("agg_tok_s", "per_req_tok_s")
DEFAULT_ACCEPT_LENGTH_TOLERANCE = 0.05


class KvCapacity(msgspec.Struct, kw_only=True):
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None


class BaselinePoint(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One concurrency: median figures, their samples by metric, and their noise by metric.

    ``boots`` is how many server boots the samples came from (the baseline figure's own
    uncertainty shrinks with both samples and boots).
    """

    agg_tok_s: float | None = None
    per_req_tok_s: float | None = None
    samples: dict[str, list[float]] = {}
    boots: int = 1
    noise: dict[str, MetricNoise] = {}
    # Over the control (depth 0) of the same run, median over median: recorded when the
    # control was measured too (gated with the throughput tolerance: a ratio cancels drift).
    agg_speedup: float | None = None
    per_req_speedup: float | None = None
    # Under the baseline's SLOs (measure/goodput.py), when it was recorded with some: the
    # median of the samples' goodput.
    goodput_tok_s: float | None = None

    def figure(self, metric: str) -> float | None:
        value: float | None = getattr(self, metric)
        return value


class Tolerance(msgspec.Struct, kw_only=True):
    """Fractions below the baseline that still pass: floor = baseline x (1 - tolerance)."""

    throughput: float = DEFAULT_THROUGHPUT_TOLERANCE
    accept_length: float = DEFAULT_ACCEPT_LENGTH_TOLERANCE


class MachineRun(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One machine's run in a baseline merged across machines (gate/machines.py): which run,
    which machine, and its level (log of its figure over the machines' median, pooled over
    points as results/runner_spread.py ``run_levels``)."""

    run: str
    gpu_name: str | None = None
    gpu_uuid: str | None = None
    driver: str | None = None
    cpu_model: str | None = None
    sglang: str | None = None
    samples: int = 0
    agg_level: float | None = None
    per_req_level: float | None = None


class MachineSpread(msgspec.Struct, kw_only=True):
    """How far apart the machines a merged baseline rests on read (gate/machines.py).

    ``agg_spread_mad``/``per_req_spread_mad``: the robust spread of the machines' levels, as
    the history spread is estimated (MAD x 1.4826); ``*_sd``: their standard deviation. The
    floors use each point's noise (``BaselinePoint.noise``, ``machines`` > 1), whose
    between-machine part is the larger of the robust spread and the random-effects estimate.
    """

    count: int
    runs: list[MachineRun]
    agg_spread_mad: float | None = None
    agg_spread_sd: float | None = None
    per_req_spread_mad: float | None = None
    per_req_spread_sd: float | None = None
    method: str = ""


class Baseline(msgspec.Struct, kw_only=True):
    schema_version: int
    profile: str
    hardware: str
    depth: int
    # "sglang", "sim" or "external" (a server at --specperf-url that did not say which);
    # None: an old file that does not say, judged against any run (gate/floors.py
    # backend_mismatch).
    backend: str | None = None
    recorded_at: str
    recorded_by: Literal["published", "measured"]
    how_recorded: str
    sglang_version: str | None = None
    tolerance: Tolerance = msgspec.field(default_factory=Tolerance)
    workload: dict[str, Any] = {}
    kv: KvCapacity = msgspec.field(default_factory=KvCapacity)
    accept_length: float | None = None
    # Acceptance rate of draft positions 1, 2, ... (results/acceptance.py).
    position_accept_rate: list[float] | None = None
    points: dict[str, BaselinePoint] = {}
    server: dict[str, Any] | None = None
    notes: str = ""
    # Recorded with --specperf-slo: the SLOs, and the depth's largest concurrency meeting them
    # (gate/recommend.py slo_capacity); gated with no tolerance, like KV capacity.
    slo: Slo | None = None
    slo_max_concurrency: int | None = None
    # Open-loop points by their load ("rate=4", "trace"), and the highest request rate the
    # SLO search found meeting ``slo`` (measure/ratesearch.py).
    rate_points: dict[str, BaselinePoint] = {}
    slo_max_rate: float | None = None
    # The machine it was recorded on (its boots' measured figures: medians); None: recorded
    # before the fingerprint existed. A run on another machine says so first in its verdict.
    testbed: Testbed | None = None
    # Merged from runs on several machines (``specperf baseline merge``): which, and how far
    # apart they read. None: recorded on one machine.
    machines: MachineSpread | None = None

    def point(self, concurrency: int) -> BaselinePoint | None:
        return self.points.get(str(concurrency))

    @property
    def workload_name(self) -> str:
        return str(self.workload.get("workload", DEFAULT_WORKLOAD))


def baseline_path(
    root: Path, profile: str, hardware: str, depth: int, workload: str = DEFAULT_WORKLOAD
) -> Path:
    """The file for a key; each component must stay one safe path segment under ``root``."""
    for label, part in (("profile", profile), ("hardware", hardware), ("workload", workload)):
        if not part or part in (".", "..") or "/" in part or "\\" in part or "\0" in part:
            raise BaselineError(f"{label} name {part!r} cannot be used as a baseline directory")
    if depth_problem(depth) is not None:
        raise BaselineError(f"speculation depth {depth} has no baseline file")
    name = (
        f"steps-{depth}.json" if workload == DEFAULT_WORKLOAD else f"steps-{depth}.{workload}.json"
    )
    path = (root / profile / hardware / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise BaselineError(f"baseline path {path} escapes the baselines directory {root}")
    return path


def load_baseline(path: Path) -> Baseline | None:
    """The baseline at ``path``; None if there is none. Any other problem: BaselineError."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BaselineError(
            f"baseline {path} is not valid JSON (corrupt or truncated): {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise BaselineError(f"baseline {path} must hold a JSON object, found {type(data).__name__}")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BaselineError(
            f"baseline {path} has no integer schema_version: not a specperf baseline?"
        )
    if version > BASELINE_SCHEMA_VERSION:
        raise BaselineError(
            f"baseline {path} has schema_version {version}, newer than this pytest-specperf "
            f"reads ({BASELINE_SCHEMA_VERSION}): upgrade pytest-specperf"
        )
    if version < 1:
        raise BaselineError(f"baseline {path} has invalid schema_version {version}")
    if version == 1:
        data = migrate_v1(data)
    try:
        return msgspec.convert(data, Baseline, strict=True)
    except msgspec.ValidationError as exc:
        raise BaselineError(f"baseline {path} does not match the baseline schema: {exc}") from exc


def migrate_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema 1 baseline as schema 2: a measured figure becomes its one sample, with no
    noise known (so the explicit tolerance still applies); a published figure has no sample;
    the unread ``ttft_p50_s`` is dropped. Anything malformed is left for validation to name.
    """
    migrated = dict(data, schema_version=BASELINE_SCHEMA_VERSION)
    points = data.get("points")
    if not isinstance(points, dict):
        return migrated
    measured = data.get("recorded_by") == "measured"
    new_points: dict[str, Any] = {}
    for key, point in points.items():
        if not isinstance(point, dict):
            new_points[key] = point
            continue
        new_point = {name: value for name, value in point.items() if name != "ttft_p50_s"}
        if measured:
            new_point["samples"] = {
                metric: [point[metric]]
                for metric in THROUGHPUT_METRICS
                if isinstance(point.get(metric), int | float)
            }
        new_points[key] = new_point
    migrated["points"] = new_points
    return migrated


def migrate_file(path: Path) -> bool:
    """Rewrite the baseline at ``path`` in the current schema; False if it already was."""
    baseline = load_baseline(path)
    if baseline is None:
        raise BaselineError(f"no baseline at {path}")
    if json.loads(path.read_bytes()).get("schema_version") == BASELINE_SCHEMA_VERSION:
        return False
    with FileLock(str(path) + ".lock", timeout=60):
        atomic_write_bytes(path, encode_baseline(baseline))
    Path(str(path) + ".lock").unlink(missing_ok=True)
    return True


def encode_baseline(baseline: Baseline) -> bytes:
    """Stable, indented, key-sorted JSON so that a baseline diff reads line by line."""
    builtins = msgspec.to_builtins(baseline)
    return (json.dumps(builtins, indent=2, sort_keys=True) + "\n").encode()


def save_baseline(root: Path, baseline: Baseline) -> Path:
    path = baseline_path(
        root, baseline.profile, baseline.hardware, baseline.depth, baseline.workload_name
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=60):
        existing = load_baseline(path)
        if existing is not None:
            mine = (baseline.profile, baseline.hardware, baseline.depth)
            theirs = (existing.profile, existing.hardware, existing.depth)
            if mine != theirs:
                raise BaselineError(
                    f"refusing to overwrite {path}: it holds the baseline of "
                    f"profile={theirs[0]} hardware={theirs[1]} steps={theirs[2]}, not {mine}"
                )
        atomic_write_bytes(path, encode_baseline(baseline))
    Path(str(path) + ".lock").unlink(missing_ok=True)
    return path


def metric_samples(point: PointMetrics, metric: str) -> list[float]:
    """Every sample of one figure of a point (its repeats, or the point itself if none)."""
    values = [getattr(sample, metric) for sample in point.all_samples()]
    return [float(value) for value in values if value is not None]


def baseline_from_run(
    run: DepthRun,
    *,
    tolerance: Tolerance | None = None,
    how_recorded: str,
    hardware: str | None = None,
    control: DepthRun | None = None,
    slo: Slo | None = None,
) -> Baseline:
    """A baseline from one boot's run: its repeats give the within-boot noise.

    ``control``: the same run's depth 0, whose points give the speedups to record; ``slo``:
    the run's SLOs, under which its goodput and SLO capacity are recorded.
    """
    return baseline_from_runs(
        [run],
        tolerance=tolerance,
        how_recorded=how_recorded,
        hardware=hardware,
        control=control,
        slo=slo,
    )


def baseline_from_runs(
    runs: Sequence[DepthRun],
    *,
    tolerance: Tolerance | None = None,
    how_recorded: str,
    hardware: str | None = None,
    source: NoiseSource = "recorded repeats",
    control: DepthRun | None = None,
    slo: Slo | None = None,
) -> Baseline:
    """A baseline from the runs of one depth, one run per boot (calibration: several).

    Figures are the medians of all samples; the noise of every figure is estimated from the
    samples grouped by boot (``estimate_noise``). The server details come from the last run.
    Run-scoped acceptance (accept length, each draft position's rate) is the median over the
    runs. ``control``: the same run's depth 0 (all its boots); each point's speedup is this
    point's median figures over the control's at the same concurrency (per request: the
    median request's rate, see results/speedup.py).
    ``slo``: each point's goodput (median of samples) and the depth's SLO capacity (the
    lowest over boots: it is gated with no tolerance) are recorded under these SLOs.
    """
    if not runs:
        raise ValueError("a baseline needs at least one run")
    run = runs[-1]
    server = run.server
    concurrencies = sorted({p.concurrency for r in runs for p in r.points})
    points: dict[str, BaselinePoint] = {}
    for concurrency in concurrencies:
        per_boot = [r.point(concurrency) for r in runs]
        measured = [p for p in per_boot if p is not None]
        point = _baseline_point(measured, source)
        reference = control.point(concurrency) if control and control.depth != run.depth else None
        if reference is not None:
            point = _with_speedup(point, run.depth, measured, reference)
        points[str(concurrency)] = point
    loads = sorted({p.load for r in runs for p in r.rate_points if p.load is not None})
    rate_points = {
        load: _baseline_point(
            [p for p in (r.rate_point(load) for r in runs) if p is not None], source
        )
        for load in loads
    }
    searched = [r.rate_search.max_rate for r in runs if r.rate_search is not None]
    accept = [r.accept_length for r in runs if r.accept_length is not None]
    capacity = _slo_capacity(runs) if slo is not None else None
    return Baseline(
        schema_version=BASELINE_SCHEMA_VERSION,
        profile=run.profile,
        hardware=slug(hardware or run.hardware),
        depth=run.depth,
        backend=run.backend,
        recorded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        recorded_by="measured",
        how_recorded=how_recorded,
        sglang_version=server.version if server else None,
        tolerance=tolerance or Tolerance(),
        workload=run.workload,
        kv=KvCapacity(
            max_total_num_tokens=server.max_total_num_tokens if server else None,
            max_running_requests=server.max_running_requests if server else None,
        ),
        accept_length=statistics.median(accept) if accept else None,
        position_accept_rate=_median_rates([r.position_accept_rate for r in runs]),
        points=points,
        server=_portable_server(msgspec.to_builtins(server)) if server else None,
        slo=slo if capacity is not None else None,
        slo_max_concurrency=capacity.max_concurrency if capacity is not None else None,
        rate_points=rate_points,
        slo_max_rate=_lowest_rate(searched) if slo is not None and searched else None,
        testbed=merged_testbed([r.testbed for r in runs]),
    )


def _lowest_rate(found: Sequence[float | None]) -> float | None:
    """The lowest rate over boots that met the SLOs (None when one boot met none)."""
    if any(rate is None for rate in found):
        return None
    return min(rate for rate in found if rate is not None)


def portable_command(command: str) -> str:
    """A launch command without the recording machine's interpreter path: an absolute
    ``/somewhere/venv/bin/python`` becomes ``python`` (a baseline is committed and shared)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if not argv or not os.path.isabs(argv[0]):
        return command
    name = os.path.basename(argv[0])
    if not name.startswith("python"):
        return command
    return shlex.join(["python", *argv[1:]])


def _portable_server(server: dict[str, Any]) -> dict[str, Any]:
    command = server.get("launch_command")
    if isinstance(command, str):
        return {**server, "launch_command": portable_command(command)}
    return server


def _with_speedup(
    point: BaselinePoint, depth: int, measured: Sequence[PointMetrics], control: PointMetrics
) -> BaselinePoint:
    """The point with its speedup over the control's (results/speedup.py), from the medians
    of every sample of both (``measured``: this point in each boot)."""
    gain = point_speedup(depth, merge_samples(measured), control)
    if gain is None:
        return point
    return msgspec.structs.replace(
        point,
        agg_speedup=round(gain.agg, 4),
        per_req_speedup=None if gain.per_req is None else round(gain.per_req, 4),
    )


def _slo_capacity(runs: Sequence[DepthRun]) -> SloCapacity | None:
    """The lowest SLO capacity of the boots (None: no point was judged against SLOs)."""
    found = [capacity for run in runs if (capacity := slo_capacity(run)) is not None]
    if not found:
        return None
    return min(found, key=lambda c: -1 if c.max_concurrency is None else c.max_concurrency)


def _median_rates(per_run: Sequence[Sequence[float]]) -> list[float] | None:
    """Position by position, the median rate over the runs that reached that position."""
    measured = [rates for rates in per_run if rates]
    if not measured:
        return None
    width = max(len(rates) for rates in measured)
    return [
        round(statistics.median(rates[i] for rates in measured if i < len(rates)), 4)
        for i in range(width)
    ]


def _baseline_point(per_boot: Sequence[PointMetrics], source: NoiseSource) -> BaselinePoint:
    samples: dict[str, list[float]] = {}
    noise: dict[str, MetricNoise] = {}
    medians: dict[str, float | None] = {}
    for metric in THROUGHPUT_METRICS:
        groups = [metric_samples(point, metric) for point in per_boot]
        flat = [round(value, 2) for group in groups for value in group]
        medians[metric] = round(statistics.median(flat), 2) if flat else None
        if flat:
            samples[metric] = flat
            noise[metric] = estimate_noise([g for g in groups if g], source)
    goodput = [
        sample.goodput.goodput_tok_s
        for point in per_boot
        for sample in point.all_samples()
        if sample.goodput is not None
    ]
    return BaselinePoint(
        agg_tok_s=medians["agg_tok_s"],
        per_req_tok_s=medians["per_req_tok_s"],
        samples=samples,
        boots=len(per_boot),
        noise=noise,
        goodput_tok_s=round(statistics.median(goodput), 2) if goodput else None,
    )


def with_calibrated_noise(baseline: Baseline, runs: Sequence[DepthRun]) -> Baseline:
    """The baseline with every point's noise replaced by what an A/A of ``runs`` measured
    (one run per boot; several repeats per run). Figures and samples are kept as they were.
    """
    points: dict[str, BaselinePoint] = {}
    for key, point in baseline.points.items():
        measured = [p for p in (r.point(int(key)) for r in runs) if p is not None]
        noise = dict(point.noise)
        for metric in THROUGHPUT_METRICS:
            groups = [g for g in (metric_samples(p, metric) for p in measured) if g]
            if groups:
                noise[metric] = estimate_noise(groups, "calibrated")
        points[key] = msgspec.structs.replace(point, noise=noise)
    return msgspec.structs.replace(baseline, points=points)
