"""Baselines: self-describing JSON under ``<root>/<profile>/<hardware>/steps-<N>.json``.

A baseline holds what one (profile, hardware, depth, workload) measured or published, and
the tolerance its floors allow. Loading never raises anything but BaselineError, whose one
line names the file and the problem; saving is atomic and locked, and refuses to replace a
file that describes another key.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Literal

import msgspec
from filelock import FileLock

from pytest_specperf.depth import depth_problem
from pytest_specperf.errors import BaselineError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.server.hardware import slug

BASELINE_SCHEMA_VERSION = 1
DEFAULT_THROUGHPUT_TOLERANCE = 0.10
DEFAULT_ACCEPT_LENGTH_TOLERANCE = 0.05


class KvCapacity(msgspec.Struct, kw_only=True):
    max_total_num_tokens: int | None = None
    max_running_requests: int | None = None


class BaselinePoint(msgspec.Struct, kw_only=True, omit_defaults=True):
    agg_tok_s: float | None = None
    per_req_tok_s: float | None = None
    ttft_p50_s: float | None = None


class Tolerance(msgspec.Struct, kw_only=True):
    """Fractions below the baseline that still pass: floor = baseline x (1 - tolerance)."""

    throughput: float = DEFAULT_THROUGHPUT_TOLERANCE
    accept_length: float = DEFAULT_ACCEPT_LENGTH_TOLERANCE


class Baseline(msgspec.Struct, kw_only=True):
    schema_version: int
    profile: str
    hardware: str
    depth: int
    backend: str
    recorded_at: str
    recorded_by: Literal["published", "measured"]
    how_recorded: str
    sglang_version: str | None = None
    tolerance: Tolerance = msgspec.field(default_factory=Tolerance)
    workload: dict[str, Any] = {}
    kv: KvCapacity = msgspec.field(default_factory=KvCapacity)
    accept_length: float | None = None
    points: dict[str, BaselinePoint] = {}
    server: dict[str, Any] | None = None
    notes: str = ""

    def point(self, concurrency: int) -> BaselinePoint | None:
        return self.points.get(str(concurrency))


def baseline_path(root: Path, profile: str, hardware: str, depth: int) -> Path:
    """The file for a key; each component must stay one safe path segment under ``root``."""
    for label, part in (("profile", profile), ("hardware", hardware)):
        if not part or part in (".", "..") or "/" in part or "\\" in part or "\0" in part:
            raise BaselineError(f"{label} name {part!r} cannot be used as a baseline directory")
    if depth_problem(depth) is not None:
        raise BaselineError(f"speculation depth {depth} has no baseline file")
    path = (root / profile / hardware / f"steps-{depth}.json").resolve()
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
    try:
        return msgspec.convert(data, Baseline, strict=True)
    except msgspec.ValidationError as exc:
        raise BaselineError(f"baseline {path} does not match the baseline schema: {exc}") from exc


def encode_baseline(baseline: Baseline) -> bytes:
    """Stable, indented, key-sorted JSON so that a baseline diff reads line by line."""
    builtins = msgspec.to_builtins(baseline)
    return (json.dumps(builtins, indent=2, sort_keys=True) + "\n").encode()


def save_baseline(root: Path, baseline: Baseline) -> Path:
    path = baseline_path(root, baseline.profile, baseline.hardware, baseline.depth)
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


def baseline_from_run(
    run: DepthRun,
    *,
    tolerance: Tolerance | None = None,
    how_recorded: str,
    hardware: str | None = None,
) -> Baseline:
    server = run.server
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
        accept_length=run.accept_length,
        points={
            str(p.concurrency): BaselinePoint(
                agg_tok_s=round(p.agg_tok_s, 2),
                per_req_tok_s=round(p.per_req_tok_s, 2) if p.per_req_tok_s is not None else None,
                ttft_p50_s=round(p.ttft_s.p50, 4) if p.ttft_s else None,
            )
            for p in sorted(run.points, key=lambda item: item.concurrency)
        },
        server=msgspec.to_builtins(server) if server else None,
    )
