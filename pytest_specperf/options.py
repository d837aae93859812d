"""Option values -> validated settings. Plain functions: the plugin and the CLI share them.

Each parser raises UsageError with one line naming the option and the bad value.
"""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.workload import SEED_CONCURRENCY, Workload
from pytest_specperf.profiles import DEFAULT_PROFILE, Profile, resolve_profile
from pytest_specperf.server.launch import BACKENDS, Backend

API_KEY_ENV = "SPECPERF_API_KEY"
MAX_DEPTH = 16
MAX_CONCURRENCY = 4096
DEFAULT_SIM_SPEEDUP = 5.0


def parse_int_list(option: str, raw: str, *, low: int, high: int) -> tuple[int, ...]:
    """``"1,2,3"`` -> (1, 2, 3): sorted, unique, each within [low, high]."""
    text = str(raw).strip()
    if not text:
        raise UsageError(f"{option}: empty value; expected a number or a list like 1,2,3")
    values: set[int] = set()
    for part in text.split(","):
        item = part.strip()
        try:
            number = int(item)
        except ValueError:
            raise UsageError(f"{option}: {item!r} is not a whole number (got {raw!r})") from None
        if not low <= number <= high:
            raise UsageError(f"{option}: {number} is out of range {low}..{high} (got {raw!r})")
        values.add(number)
    return tuple(sorted(values))


def parse_depths(raw: str) -> tuple[int, ...]:
    return parse_int_list("--spec-steps", raw, low=1, high=MAX_DEPTH)


def parse_concurrency(raw: str) -> tuple[int, ...]:
    return parse_int_list("--specperf-concurrency", raw, low=1, high=MAX_CONCURRENCY)


def parse_float(
    option: str, raw: Any, *, low: float, high: float = math.inf, low_open: bool = False
) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{option}: {raw!r} is not a number") from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise UsageError(f"{option}: {raw!r} must be {bound}{upper}")
    return value


def parse_positive_int(option: str, raw: Any) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a whole number") from None
    if value < 1:
        raise UsageError(f"{option}: {raw!r} must be >= 1")
    return value


def parse_backend(raw: str) -> Backend:
    value = str(raw).strip().lower()
    for backend in BACKENDS:
        if value == backend:
            return backend
    raise UsageError(f"--specperf-backend: {raw!r} is not one of {', '.join(BACKENDS)}")


def parse_url(raw: str) -> str:
    text = str(raw).strip().rstrip("/")
    scheme, _, rest = text.partition("://")
    if scheme not in ("http", "https") or not rest or any(c.isspace() for c in rest):
        raise UsageError(f"--specperf-url: {raw!r} is not an http(s) URL like http://host:30000")
    return text


def parse_server_args(raw: list[str] | None) -> tuple[str, ...]:
    """Each value is split like a shell would: ``"--mem-fraction-static 0.8"`` is two items."""
    args: list[str] = []
    for value in raw or ():
        try:
            args.extend(shlex.split(value))
        except ValueError as exc:
            raise UsageError(f"--specperf-server-arg: cannot split {value!r}: {exc}") from None
    if args and not args[0].startswith("-"):
        raise UsageError(f"--specperf-server-arg: {args[0]!r} must start with '--' (a server flag)")
    return tuple(args)


@dataclass(frozen=True)
class Settings:
    """Everything a run needs, as plain values (no pytest objects)."""

    profile: Profile
    backend: Backend = "sglang"
    depths: tuple[int, ...] = (3,)
    concurrency: tuple[int, ...] = SEED_CONCURRENCY
    url: str | None = None
    server_args: tuple[str, ...] = ()
    baselines_dir: Path = Path("baselines")
    out_dir: Path = Path(".specperf")
    update_baselines: bool = False
    launch_timeout_s: float = 600.0
    sim_speedup: float = DEFAULT_SIM_SPEEDUP
    hardware: str | None = None
    min_success_rate: float = 1.0
    tolerance: float = 0.10
    workload: Workload = field(default_factory=Workload)
    api_key: str | None = None
    inject_slowdown_s: float | None = None


def build_settings(get: Callable[[str], Any], rootdir: Path) -> Settings:
    """Build settings from option values; ``get(name)`` returns the option or ini value."""
    profile_dirs = [rootdir / d for d in str(get("profile_dir") or "").split(",") if d.strip()]
    try:
        profile = resolve_profile(str(get("profile") or DEFAULT_PROFILE), profile_dirs)
    except Exception as exc:
        raise UsageError(f"--specperf-profile: {exc}") from exc
    url = get("url")
    workload = Workload(
        max_new_tokens=parse_positive_int("--specperf-max-new-tokens", get("max_new_tokens")),
        temperature=parse_float("--specperf-temperature", get("temperature"), low=0.0, high=2.0),
        fixed_requests=(
            parse_positive_int("--specperf-requests", get("requests")) if get("requests") else None
        ),
        request_timeout_s=parse_float(
            "--specperf-request-timeout", get("request_timeout"), low=0.0, low_open=True
        ),
        stall_timeout_s=parse_float(
            "--specperf-stall-timeout", get("stall_timeout"), low=0.0, low_open=True
        ),
        endpoint="completions" if str(get("endpoint")) == "completions" else "generate",
    )
    if str(get("endpoint")) not in ("generate", "completions"):
        raise UsageError(f"--specperf-endpoint: {get('endpoint')!r} is not generate or completions")
    return Settings(
        profile=profile,
        backend=parse_backend(get("backend")),
        depths=parse_depths(get("spec_steps")),
        concurrency=parse_concurrency(get("concurrency")),
        url=parse_url(url) if url else None,
        server_args=parse_server_args(get("server_arg")),
        baselines_dir=rootdir / str(get("baselines")),
        out_dir=rootdir / str(get("out")),
        update_baselines=bool(get("update_baselines")),
        launch_timeout_s=parse_float(
            "--specperf-launch-timeout", get("launch_timeout"), low=0.0, low_open=True
        ),
        sim_speedup=parse_float(
            "--specperf-sim-speedup", get("sim_speedup"), low=0.0, low_open=True
        ),
        hardware=str(get("hardware")) if get("hardware") else None,
        min_success_rate=parse_float(
            "--specperf-min-success", get("min_success"), low=0.0, high=1.0
        ),
        tolerance=parse_float("--specperf-tolerance", get("tolerance"), low=0.0, high=0.99),
        workload=workload,
        api_key=os.environ.get(API_KEY_ENV) or None,
        inject_slowdown_s=(
            parse_float("--specperf-inject-slowdown", get("inject_slowdown"), low=0.0)
            if get("inject_slowdown")
            else None
        ),
    )
