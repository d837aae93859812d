"""Option values -> validated ``Settings``: everything a run needs, as plain values.

``build_settings`` reads the options table (``config/table.py``) through a getter, so the
pytest plugin (command line and ini file) and the ``specperf`` command build the same
settings; a run profile fills what no option sets.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_specperf.config.parsers import ConfirmMode
from pytest_specperf.config.run_profiles import RunProfile, resolve_run_profile, with_run_profile
from pytest_specperf.config.table import DEFAULT_CALIBRATE_BOOTS, OPTIONS_BY_KEY, option_values
from pytest_specperf.errors import UsageError
from pytest_specperf.measure.arrivals import TRACE_LOAD, rate_key
from pytest_specperf.measure.trace import read_trace, resolve_trace_path
from pytest_specperf.measure.warmup import WarmupPlan
from pytest_specperf.measure.workload import Workload, trace_workload, workload_preset
from pytest_specperf.results.schema import Slo
from pytest_specperf.server.cpu_use import ServerCpuPlacement
from pytest_specperf.server.gpu_wait import ServerStacks, find_py_spy, ptrace_problem
from pytest_specperf.server.launch import Backend
from pytest_specperf.server.model_factory import factory_context_length
from pytest_specperf.server.process import DEFAULT_BOOT_SILENCE_TIMEOUT_S
from pytest_specperf.server.profiles import DEFAULT_PROFILE, Profile, resolve_profile

API_KEY_ENV = "SPECPERF_API_KEY"
# The options whose parsed value is the setting of the same name, as it is.
_AS_GIVEN = (
    "backend",
    "concurrency",
    "url",
    "sim_speedup",
    "hardware",
    "tolerance",
    "run_profile",
    "gpus_per_server",
    "gpus",
    "repeats",
    "calibrate",
    "alpha",
    "min_effect",
    "confirm",
    "self_test",
    "lossless_min_prefix",
    "slo",
    "refine",
    "client_procs",
    "history_on_change",
    "trace_speed",
    "burstiness",
    "rate_seconds",
    "allow_baseline_downgrade",
    "allow_no_baseline",
    "no_plots",
)


@dataclass(frozen=True, kw_only=True)
class BaseSide:
    """A/B mode's base side: what differs from head (None or empty: as head)."""

    python: str | None = None
    server_args: tuple[str, ...] = ()
    # NAME=VALUE pairs of the base server's environment (--specperf-base-server-env).
    server_env: tuple[tuple[str, str], ...] = ()
    profile: Profile | None = None
    url: str | None = None


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything a run needs, as plain values (no pytest objects); built by build_settings."""

    profile: Profile
    backend: Backend
    depths: tuple[int, ...]
    concurrency: tuple[int, ...]
    url: str | None
    server_args: tuple[str, ...]
    baselines_dir: Path
    out_dir: Path
    update_baselines: bool
    launch_timeout_s: float
    sim_speedup: float
    hardware: str | None
    min_success_rate: float
    tolerance: float
    workload: Workload
    api_key: str | None
    inject_slowdown_s: float | None
    gpus_per_server: int | None
    gpus: str | None
    run_profile: str | None = None
    repeats: int = 1
    calibrate: bool = False
    calibrate_boots: int = 1
    alpha: float = 0.01
    min_effect: float = 0.05
    confirm: ConfirmMode = "fresh-boot"
    self_test: bool = False
    lossless_min_prefix: float = 1.0
    slo: Slo | None = None
    refine: bool = False
    client_procs: int | None = None  # None: chosen by load (measure/procs.py)
    # A/B mode (any --specperf-base-* option given): the base side; head is everything else.
    base: BaseSide | None = None
    ab_max_pairs: int = 8
    ab_boot_together: bool = False
    # --specperf-server-cpu (server/cpu_use.py): where the server's busiest process runs, and
    # whether the run chose it (rotate, the A/B default with SGLang) rather than the user.
    server_cpu: ServerCpuPlacement = "none"
    server_cpu_by_default: bool = False
    # --specperf-server-stacks (server/gpu_wait.py): the py-spy executable that reads the
    # server's busiest process's stack during each sample; None: not read.
    py_spy: str | None = None
    # Why --specperf-server-stacks=auto reads nothing on a real server (None: it reads, or
    # was not asked to): said in the run's header.
    server_stacks_off: str | None = None
    # --specperf-boot-silence-timeout: a boot whose log is silent this long fails (0: off).
    boot_silence_timeout_s: float = DEFAULT_BOOT_SILENCE_TIMEOUT_S
    # The server's interpreter (None: this one); the base side of A/B mode sets it.
    python: str | None = None
    # --specperf-server-env: NAME=VALUE pairs added to every server's environment ($NAME in a
    # value is this process's, expanded at launch: run/depth_session.py server_environment).
    server_env: tuple[tuple[str, str], ...] = ()
    # Open-loop points (measure/openloop.py): request rates, their gamma shape, and seconds
    # of arrivals per rate point.
    request_rates: tuple[float, ...] = ()
    burstiness: float = 1.0
    rate_seconds: float = 10.0
    # --specperf-workload as given (a trace's path), and the trace's replay speed.
    workload_option: str | None = None
    trace_speed: float = 1.0

    @property
    def open_loads(self) -> tuple[str, ...]:
        """The open-loop points of each depth, by key: the trace's replay, then each rate."""
        loads = [TRACE_LOAD] if self.workload.trace_offsets_s else []
        return (*loads, *(rate_key(rate, self.burstiness) for rate in self.request_rates))

    @property
    def watch_server_load(self) -> bool:
        """Poll the server's running requests (its /metrics) during every point: for
        workloads where KV capacity bounds them, and open-loop points."""
        return bool(self.open_loads) or self.workload.name.startswith("long-context")

    @property
    def pins_server_process(self) -> bool:
        """Whether the suite pins the server's busiest process before each sample."""
        return self.server_cpu in ("rotate", "pin-fastest")

    @property
    def rotate_server_cpu(self) -> bool:
        """--specperf-rotate-server-cpu, now --specperf-server-cpu=rotate."""
        return self.server_cpu == "rotate"

    @property
    def ab_mode(self) -> bool:
        """A/B mode: base and head compared in this run (no baseline file is read)."""
        return self.base is not None

    history: str | None = None  # a history store's URL or file path (resolved); None: off
    history_on_change: str = "fail"
    # As given (printed back in the commands the suite suggests: run/advice.py).
    profile_option: str = DEFAULT_PROFILE
    profile_dirs: tuple[str, ...] = ()
    baselines_option: str = "baselines"
    out_option: str = ".specperf"
    allow_baseline_downgrade: bool = False
    allow_no_baseline: bool = False
    no_plots: bool = False
    # The run profile that made the run exploratory (allow_no_baseline on in it, the flag not
    # given); None otherwise. Said in the line of an exploratory run that judged nothing.
    exploratory_run_profile: str | None = None
    warmup: WarmupPlan = field(default_factory=WarmupPlan)
    time_budget_s: float | None = None
    boot_estimate_s: float | None = None  # None: the profile's, else the backend's default


def resolve_profile_option(name: str, dirs: tuple[str, ...], rootdir: Path) -> Profile:
    try:
        return resolve_profile(name, [rootdir / d for d in dirs])
    except Exception as exc:
        raise UsageError(f"--specperf-profile: {exc}") from exc


def workload_from(values: Mapping[str, Any], rootdir: Path | None = None) -> Workload:
    """The request plan the workload options describe (a trace's path: from ``rootdir``)."""
    name = str(values["workload"])
    fields: dict[str, Any] = {
        "temperature": values["temperature"],
        "fixed_requests": values["requests"],
        "request_timeout_s": values["request_timeout"],
        "stall_timeout_s": values["stall_timeout"],
        "endpoint": values["endpoint"],
        "min_point_seconds": values["min_point_seconds"],
    }
    if name.startswith("trace:"):
        path = resolve_trace_path(name.removeprefix("trace:").strip(), rootdir)
        return trace_workload(path, values.get("trace_speed") or 1.0, **fields)
    return workload_preset(
        values["workload"],
        max_new_tokens=values["max_new_tokens"],
        **fields,
    )


def _model_context(server_args: Sequence[str], profile: Profile) -> tuple[int, str] | None:
    """The context a request must fit and where it comes from: --context-length given to the
    server (as one word or two), else the profile's ``context_length``, else the context of
    the model the suite builds for it; None: unknown."""
    given: str | None = None
    for index, arg in enumerate(server_args):
        if arg.startswith("--context-length="):
            given = arg.split("=", 1)[1]
        elif arg == "--context-length" and index + 1 < len(server_args):
            given = server_args[index + 1]
    if given is not None:
        with contextlib.suppress(ValueError):
            return int(given), "given by --context-length"
    known = profile.context_length
    if known is None and profile.model_factory:
        known = factory_context_length(profile.model_factory)
    return None if known is None else (known, f"of profile {profile.name}")


def _fitting_workload(values: Mapping[str, Any], rootdir: Path) -> Workload:
    """The workload, refused in one line when its longest request cannot fit the context of
    the profile's model (where known); a trace's request is named by its line."""
    workload = workload_from(values, rootdir)
    profile = resolve_profile_option(values["profile"], values["profile_dir"], rootdir)
    context = _model_context(values["server_arg"] or (), profile)
    if context is None:
        return workload
    limit, source = context
    option = f"--specperf-workload={values['workload']}"
    name = str(values["workload"]).strip()
    if name.startswith("trace:"):
        path = resolve_trace_path(name.removeprefix("trace:").strip(), rootdir)
        tokens, line = read_trace(path).longest_request()
        if tokens > limit:
            raise UsageError(
                f"{option}: trace {path} line {line}: its request needs {tokens:,} tokens "
                f"(input_length + output_length), more than the {limit:,}-token context "
                f"{source}; shorten that line or pick a profile with a longer context"
            )
        return workload
    longest = workload.longest_request_tokens
    if longest > limit:
        raise UsageError(
            f"{option}: its longest request needs {longest:,} tokens (prompt words and "
            f"output), more than the {limit:,}-token context {source}; pick a shorter "
            "workload or a profile with a longer context"
        )
    return workload


def resolve_run_profile_option(get: Callable[[str], Any], rootdir: Path) -> RunProfile | None:
    """The run profile named by --specperf-run-profile, if any (with the project's file)."""
    name = OPTIONS_BY_KEY["run_profile"].value(get("run_profile"))
    if not name:
        return None
    extra = OPTIONS_BY_KEY["run_profiles"].value(get("run_profiles"))
    return resolve_run_profile(name, rootdir / extra if extra else None)


def build_settings(get: Callable[[str], Any], rootdir: Path) -> Settings:
    """Build settings from option values; ``get(key)`` returns the option or ini value.

    A run profile fills the options that ``get`` leaves out (None); the rest keep their
    given value or their default.
    """
    run_profile = resolve_run_profile_option(get, rootdir)
    values = option_values(with_run_profile(get, run_profile))
    baselines_dir = _directory_option("--specperf-baselines", values["baselines"], rootdir)
    out_dir = _directory_option("--specperf-out", values["out"], rootdir)
    py_spy, stacks_off = _server_stacks(values)
    server_cpu = _server_cpu(values)
    return Settings(
        profile=resolve_profile_option(values["profile"], values["profile_dir"], rootdir),
        depths=values["spec_steps"],
        server_args=values["server_arg"],
        server_env=values["server_env"],
        baselines_dir=baselines_dir,
        out_dir=out_dir,
        update_baselines=values["update_baselines"] or values["calibrate"],
        launch_timeout_s=values["launch_timeout"],
        min_success_rate=values["min_success"],
        workload=_fitting_workload(values, rootdir),
        request_rates=values["request_rate"],
        workload_option=values["workload"],
        api_key=os.environ.get(API_KEY_ENV) or None,
        inject_slowdown_s=values["inject_slowdown"],
        calibrate_boots=_calibrate_boots(values),
        base=base_side(values, rootdir),
        ab_max_pairs=_ab_max_pairs(values),
        ab_boot_together=_ab_boot_together(values),
        server_cpu=server_cpu,
        server_cpu_by_default=server_cpu != "none"
        and values["server_cpu"] is None
        and not values["rotate_server_cpu"],
        py_spy=py_spy,
        server_stacks_off=stacks_off,
        boot_silence_timeout_s=values["boot_silence_timeout"],
        history=_history_location(values["history"], rootdir),
        profile_option=values["profile"],
        profile_dirs=values["profile_dir"],
        baselines_option=values["baselines"],
        out_option=values["out"],
        warmup=warmup_plan_from(values),
        time_budget_s=values["time_budget"],
        boot_estimate_s=values["boot_estimate"],
        exploratory_run_profile=values["run_profile"]
        if _exploratory_by(run_profile, get)
        else None,
        **{key: values[key] for key in _AS_GIVEN},
    )


def _exploratory_by(run_profile: RunProfile | None, get: Callable[[str], Any]) -> bool:
    """Whether the run profile, not the flag, made the run exploratory."""
    return (
        run_profile is not None
        and bool(run_profile.allow_no_baseline)
        and not get("allow_no_baseline")
    )


def warmup_plan_from(values: Mapping[str, Any]) -> WarmupPlan:
    """Each boot's warm-up as the warm-up options describe it."""
    return WarmupPlan(
        max_rounds=values["warmup_rounds"],
        max_seconds=values["warmup_seconds"],
        tolerance=values["warmup_tolerance"],
    )


def base_side(values: Mapping[str, Any], rootdir: Path) -> BaseSide | None:
    """The base side the --specperf-base-* options describe; None (no A/B) when none is given."""
    if not _base_given(values):
        return None
    profile = values["base_profile"]
    return BaseSide(
        python=values["base_python"],
        server_args=values["base_server_arg"] or (),
        server_env=values["base_server_env"] or (),
        profile=resolve_profile_option(profile, values["profile_dir"], rootdir)
        if profile
        else None,
        url=values["base_url"],
    )


def _base_given(values: Mapping[str, Any]) -> bool:
    return any(
        values[key]
        for key in ("base_python", "base_server_arg", "base_server_env", "base_profile", "base_url")
    )


def _ab_max_pairs(values: Mapping[str, Any]) -> int:
    ab_mode = _base_given(values)
    if ab_mode and (values["update_baselines"] or values["calibrate"]):
        raise UsageError(
            "A/B mode (--specperf-base-*) compares base and head in this run: it neither reads "
            "nor writes baseline files; drop --specperf-update-baselines/--specperf-calibrate"
        )
    pairs: int = values["ab_max_pairs"]
    if pairs < 3:
        raise UsageError(
            f"--specperf-ab-max-pairs: at least 3 (the first look of the A/B gate), got {pairs}"
        )
    return pairs


def _directory_option(option: str, raw: str, rootdir: Path) -> Path:
    """rootdir / raw, refused when it (or the nearest part of it that exists) is not a
    directory: found now, before boot, instead of at the first write after the sweep."""
    path = rootdir / raw
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == path else f" ({existing} is a file)"
        raise UsageError(f"{option}: {raw!r} is not a directory{where}")
    return path


def _history_location(raw: str | None, rootdir: Path) -> str | None:
    """A URL as given; a file path relative to the project's root directory."""
    if not raw:
        return None
    return raw if "://" in raw else str(rootdir / Path(raw).expanduser())


def _ab_boot_together(values: Mapping[str, Any]) -> bool:
    together = bool(values["ab_boot_together"])
    if together and values["backend"] == "sglang":
        # SGLang sizes its KV pool from the GPU memory free when it loads the model
        # (model_runner_kv_cache_mixin._profile_available_bytes): two servers booting on one
        # GPU race, and the later one gets a smaller pool or fails with "Not enough memory".
        raise UsageError(
            "--specperf-ab-boot-together: not with SGLang: a server sizes its KV cache from "
            "the GPU memory free at boot, so two servers booted on one GPU get unequal KV "
            "pools (or the second fails to boot); A/B mode boots base and head one after "
            "the other without it"
        )
    return together


def _server_stacks(values: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """--specperf-server-stacks: the py-spy to run (None: the stacks are not read) and, where
    auto reads none on a real SGLang server this run starts, why (said in the header)."""
    chosen: ServerStacks = values["server_stacks"]
    if chosen == "off":
        return None, None
    if values["url"]:
        if chosen == "on":
            raise UsageError(
                "--specperf-server-stacks=on: reads the stack of a server this run starts; "
                "with --specperf-url the server is not this run's process"
            )
        return None, None
    if chosen == "auto" and values["backend"] != "sglang":
        return None, None
    found = find_py_spy()
    problem = (
        "py-spy was not found beside this Python nor on PATH (pip install py-spy)"
        if found is None
        else ptrace_problem()
    )
    if problem is None:
        return found, None
    if chosen == "on":
        raise UsageError(f"--specperf-server-stacks=on: {problem}")
    return None, problem  # auto: read where it can be


def _server_cpu(values: Mapping[str, Any]) -> ServerCpuPlacement:
    """--specperf-server-cpu, with --specperf-rotate-server-cpu as its older spelling."""
    chosen: ServerCpuPlacement | None = values["server_cpu"]
    if values["rotate_server_cpu"]:
        if chosen not in (None, "rotate"):
            raise UsageError(
                f"--specperf-rotate-server-cpu and --specperf-server-cpu={chosen} name two "
                "placements; keep one"
            )
        chosen = "rotate"
    placement: ServerCpuPlacement = chosen or _default_server_cpu(values)
    if placement == "none":
        return placement
    if values["url"]:
        raise UsageError(
            f"--specperf-server-cpu={placement}: places the processes of a server this run "
            "starts; not with --specperf-url"
        )
    if not hasattr(os, "sched_setaffinity"):
        raise UsageError(f"--specperf-server-cpu={placement}: this platform cannot pin a process")
    return placement


def _default_server_cpu(values: Mapping[str, Any]) -> ServerCpuPlacement:
    """rotate for an A/B of SGLang servers this run starts on both sides, where the pair
    spreads on record, across lent machines, had the lowest median with it
    (docs/explanation/ab-gating.md, "the four placements"); none otherwise (a nightly's boots
    spread no more unpinned, and pinning caps the scheduler at one vCPU)."""
    starts_both_servers = not values["url"] and not values["base_url"]
    if (
        _base_given(values)
        and values["backend"] == "sglang"
        and starts_both_servers
        and hasattr(os, "sched_setaffinity")
    ):
        return "rotate"
    return "none"


def _calibrate_boots(values: Mapping[str, Any]) -> int:
    given: int | None = values["calibrate_boots"]
    if given is None:
        return DEFAULT_CALIBRATE_BOOTS if values["calibrate"] and not values["url"] else 1
    boots = given
    if boots > 1 and not values["calibrate"]:
        raise UsageError("--specperf-calibrate-boots: only with --specperf-calibrate")
    if boots > 1 and values["url"]:
        raise UsageError(
            "--specperf-calibrate-boots: a server given by --specperf-url cannot be restarted "
            "between boots; let the suite boot it, or calibrate with one boot"
        )
    return boots
