"""The run from pytest's config: the options registered from the table, the settings from
options and ini keys, a given server's depth, the GPUs, the run's session object.

Called by pytest_addoption and pytest_configure (plugin/__init__.py); errors are one-line
SpecperfErrors, turned into pytest's usage errors by ``configure_run``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.config.table import OPTIONS, OPTIONS_BY_KEY
from pytest_specperf.depth import CONTROL_DEPTH
from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.history.rows import RunContext, tested_commit_override
from pytest_specperf.plugin.benchmark import wants_benchmark_output
from pytest_specperf.plugin.session import SpecperfRun
from pytest_specperf.results.run_lock import OutDirLock, this_process
from pytest_specperf.run.budget import check_budget
from pytest_specperf.server.gpus import (
    PresentGpus,
    check_gpu_plan,
    gpu_slice,
    present_gpus,
    worker_index,
    xdist_worker_count,
)
from pytest_specperf.server.process import depth_of, fetch_server_info

if TYPE_CHECKING:
    from pytest_specperf.history.recorder import HistoryRecorder


# The run's settings, for whoever reads them from the config (the run holds them too).
settings_key = pytest.StashKey[Settings]()
MARKERS = (
    "specperf_phase(n): order of a check within a depth (0 first, 2 after the points)",
    "specperf_rate_search: runs only with --specperf-request-rate and --specperf-slo",
)


def add_options(parser: pytest.Parser) -> None:
    """Every row of the options table as a pytest option, and as an ini key where it is one."""
    group = parser.getgroup("specperf", "speculative decoding performance (pytest-specperf)")
    for spec in OPTIONS:
        if spec.kind == "flag":
            group.addoption(spec.flag, dest=spec.dest, action="store_true", help=spec.help)
            continue
        shown = f" (default: {spec.default})" if spec.default is not None else ""
        group.addoption(
            spec.flag,
            dest=spec.dest,
            action="append" if spec.kind == "append" else "store",
            default=None,
            help=spec.help + shown,
        )
        if spec.ini:
            # No default here: an ini key left out must read as "not given" (the table's
            # default applies in build_settings), so a run profile can tell it from one set.
            parser.addini(spec.ini_name, spec.help + shown, default=None)


def configure_run(config: pytest.Config) -> SpecperfRun:
    """The run's session object: the signal policy installed first (a Ctrl-C or SIGTERM from
    here on ends the run as interrupted), then the settings, the GPU plan, the time budget
    and the history store; a bad option is pytest's usage error, in one line."""
    owns_signals = interrupts.install()
    is_worker = hasattr(config, "workerinput")
    try:
        settings = settings_from(config, is_worker=is_worker)
        present = plan_gpus(config, settings)
        estimate = None if is_worker else check_budget(settings)
        run = SpecperfRun(
            config, settings, owns_signals=owns_signals, tested_commit=tested_commit_override()
        )
        run.history = open_history(run)
    except SpecperfError as exc:
        if owns_signals:
            interrupts.conclude()  # no run: nothing to take back
        raise pytest.UsageError(str(exc)) from None
    run.estimate, run.present_gpus = estimate, present
    config.stash[settings_key] = settings
    return run


def option_getter(config: pytest.Config) -> Callable[[str], Any]:
    """The command line's value, else its environment variable's, else the ini file's; None
    when none gives one."""

    def get(key: str) -> Any:
        spec = OPTIONS_BY_KEY[key]
        value = config.getoption(spec.dest)
        if spec.kind == "flag" and not value:
            value = None  # not given: a run profile may set it
        if value is None and spec.env:
            value = os.environ.get(spec.env) or None
        if value is None and spec.ini:
            ini_value = config.getini(spec.ini_name)
            return None if ini_value in (None, "") else ini_value
        return value

    return get


def settings_from(config: pytest.Config, *, is_worker: bool) -> Settings:
    """The run's settings; with --specperf-url, the depth is the server's."""
    get = option_getter(config)
    settings = build_settings(get, Path(config.rootpath))
    if settings.url:
        info = fetch_server_info(settings.url, settings.api_key)
        depth = depth_of(info)
        served = (CONTROL_DEPTH if depth is None else depth,)
        if get("spec_steps") is not None and settings.depths != served:
            raise UsageError(url_depth_mismatch(settings.url, settings.depths, served[0]))
        settings = replace(settings, depths=served)
    if settings.refine and not is_worker and xdist_workers(config) > 1:
        raise UsageError(
            "--specperf-refine: not under xdist (-n): each worker holds only its own "
            "depths' servers; drop -n, or drop --specperf-refine"
        )
    return settings


def benchmark_output_wanted(config: pytest.Config) -> bool:
    """Whether pytest-benchmark's banner and table are asked for (``SpecperfRun`` leaves the
    banner out of the header when not)."""
    return wants_benchmark_output(
        config.invocation_params.args, lambda name: config.getoption(name, None)
    )


def xdist_workers(config: pytest.Config) -> int:
    return xdist_worker_count(config.getoption("dist", "no"), config.getoption("tx", None))


def url_depth_mismatch(url: str, asked: tuple[int, ...], served: int) -> str:
    steps = ",".join(map(str, asked))
    return (
        f"--spec-steps={steps}: the server at {url} runs steps={served} (its /server_info), "
        "and with --specperf-url the depth is the server's; drop --spec-steps or give "
        f"--spec-steps={served}"
    )


def open_history(run: SpecperfRun) -> HistoryRecorder | None:
    """--specperf-history: the store, opened now (a bad store is a usage error at once); the
    run's row comes when the run begins (``begin_run``)."""
    settings = run.settings
    if settings.history is None:
        return None
    # Imported here: the store's SQLAlchemy, Alembic and ruptures cost every run a second
    # of imports (and one subprocess per e2e test), and only --specperf-history needs them.
    from pytest_specperf.history.recorder import HistoryRecorder

    context = RunContext(run_profile=settings.run_profile, calibration=settings.calibrate)
    recorder = HistoryRecorder(settings.history, context)
    if not run.is_worker:
        recorder.store  # noqa: B018 (opened now: a bad store is a usage error at once)
    return recorder


def begin_run(run: SpecperfRun) -> None:
    """The controller, once it knows the run measures: the out dir's lock (a second run
    writing there is refused here, before any server boots), then the history row."""
    if run.is_worker or run.lock is not None:
        return
    lock = OutDirLock(run.settings.out_dir, this_process(run.run_id))
    try:
        lock.acquire()
    except SpecperfError as exc:
        run.refused = True
        raise pytest.UsageError(str(exc)) from None
    run.lock = lock
    if run.history is not None:
        try:
            run.history.start(run.run_id, run.tested_commit)
        except SpecperfError as exc:
            raise pytest.UsageError(str(exc)) from None


def plan_gpus(config: pytest.Config, settings: Settings) -> PresentGpus | None:
    """The GPUs each server may take (None: servers keep the environment's GPUs).

    The controller looks them up and checks the plan; workers get its list (workerinput).
    """
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:
        ids = worker_input.get("specperf_gpus")
        return None if ids is None else PresentGpus(tuple(ids), worker_input["specperf_gpus_from"])
    per_server = settings.gpus_per_server
    present = present_gpus(settings.gpus) if per_server is not None else None
    workers = xdist_workers(config)
    check_gpu_plan(
        backend=settings.backend,
        attached=settings.url is not None,
        workers=workers,
        parallel_servers=min(workers, len(settings.depths)),
        per_server=per_server,
        present=present,
        tp_size=settings.profile.tp_size,
    )
    return present


def server_gpus(config: pytest.Config, run: SpecperfRun) -> tuple[str, ...] | None:
    """This process's slice of the GPUs (worker gwN: [N*K, (N+1)*K)), or None."""
    present = run.present_gpus
    per_server = run.settings.gpus_per_server
    if present is None or per_server is None:
        return None
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    return gpu_slice(present, worker_id, per_server)


def worker_slot(config: pytest.Config) -> tuple[int, int]:
    """(this xdist worker's index, the number of workers); (0, 1) without xdist."""
    given = getattr(config, "workerinput", {})
    return worker_index(given.get("workerid")), int(given.get("workercount", 1))
