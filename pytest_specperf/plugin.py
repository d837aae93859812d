"""pytest-specperf's hooks: options, settings, parametrization, fixtures, summary.

Logic lives in plain modules (suite, loadgen, metrics, baselines, gate, report); this file
only wires them into pytest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_specperf.baselines import Tolerance, baseline_from_run, save_baseline
from pytest_specperf.checks import SpecperfGate
from pytest_specperf.errors import SpecperfError
from pytest_specperf.options import DEFAULT_SIM_SPEEDUP, Settings, build_settings
from pytest_specperf.profiles import DEFAULT_PROFILE
from pytest_specperf.report import full_report, markdown_report
from pytest_specperf.results import ResultsStore, new_run_id
from pytest_specperf.schema import DepthRun, PointMetrics
from pytest_specperf.server import depth_of, fetch_server_info
from pytest_specperf.suite import DepthSession, ServerDied, ServerGone
from pytest_specperf.workload import SEED_CONCURRENCY

settings_key = pytest.StashKey[Settings]()
run_id_key = pytest.StashKey[str]()
sessions_key = pytest.StashKey[dict[int, DepthSession]]()

# (option name, ini name, default, help). Options also settable in [tool.pytest.ini_options].
_VALUE_OPTIONS: tuple[tuple[str, str, str | None, str], ...] = (
    ("spec-steps", "spec_steps", "3", "speculation depth(s) to boot and measure: 3 or 1,2,3"),
    (
        "specperf-backend",
        "backend",
        "sglang",
        "server to boot: sglang (real) or sim (embedded simulator)",
    ),
    ("specperf-url", "url", None, "measure an existing server at this URL; nothing is booted"),
    (
        "specperf-concurrency",
        "concurrency",
        ",".join(map(str, SEED_CONCURRENCY)),
        "concurrency levels of the closed-loop sweep",
    ),
    ("specperf-profile", "profile", DEFAULT_PROFILE, "deployment profile: a name or a .toml path"),
    (
        "specperf-profile-dir",
        "profile_dir",
        None,
        "extra directories of profile .toml files (comma-separated)",
    ),
    ("specperf-baselines", "baselines", "baselines", "baselines directory"),
    (
        "specperf-out",
        "out",
        ".specperf",
        "artifact directory: results.json, report.md, server logs",
    ),
    ("specperf-launch-timeout", "launch_timeout", "600", "seconds to wait for /health_generate"),
    (
        "specperf-sim-speedup",
        "sim_speedup",
        f"{DEFAULT_SIM_SPEEDUP:g}",
        "simulator only: divide every simulated time by this factor",
    ),
    (
        "specperf-hardware",
        "hardware",
        None,
        "hardware key for baselines (default: from nvidia-smi or the simulator)",
    ),
    ("specperf-max-new-tokens", "max_new_tokens", "1000", "output tokens per request"),
    ("specperf-temperature", "temperature", "0", "sampling temperature of every request"),
    ("specperf-requests", "requests", None, "requests per point (default: 4 at C=1, else 2C)"),
    (
        "specperf-endpoint",
        "endpoint",
        "generate",
        "generate (SGLang native) or completions (OpenAI)",
    ),
    ("specperf-request-timeout", "request_timeout", "600", "seconds one request may take in all"),
    ("specperf-stall-timeout", "stall_timeout", "60", "seconds a stream may go without data"),
    (
        "specperf-min-success",
        "min_success",
        "1.0",
        "fraction of requests of a point that must succeed",
    ),
    ("specperf-tolerance", "tolerance", "0.10", "tolerance written into newly recorded baselines"),
    (
        "specperf-inject-slowdown",
        "inject_slowdown",
        None,
        "seconds of sleep per forward pass, set through the server's /slow_down before measuring: "
        "a deliberate regression to prove the gate catches one",
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("specperf", "speculative decoding performance (pytest-specperf)")
    for option, ini, default, help_text in _VALUE_OPTIONS:
        group.addoption(
            f"--{option}",
            dest=f"specperf_{ini}",
            default=None,
            help=f"{help_text} (default: {default})",
        )
        parser.addini(f"specperf_{ini}", help_text, default=default)
    group.addoption(
        "--specperf-server-arg",
        dest="specperf_server_arg",
        action="append",
        default=[],
        help="extra server flag(s), appended last; repeatable "
        "(e.g. --specperf-server-arg=--sim-slowdown=0.2)",
    )
    group.addoption(
        "--specperf-update-baselines",
        dest="specperf_update_baselines",
        action="store_true",
        help="after the run, write baselines for every depth whose points all succeeded",
    )


def _option_getter(config: pytest.Config) -> Any:
    def get(name: str) -> Any:
        if name in ("server_arg", "update_baselines"):
            return config.getoption(f"specperf_{name}")
        value = config.getoption(f"specperf_{name}")
        return value if value is not None else config.getini(f"specperf_{name}")

    return get


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    try:
        settings = build_settings(_option_getter(config), Path(config.rootpath))
        if settings.url:
            info = fetch_server_info(settings.url, settings.api_key)
            depth = depth_of(info)
            settings = _with_depths(settings, (depth,) if depth else (1,))
    except SpecperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[settings_key] = settings
    config.stash[sessions_key] = {}
    worker_input = getattr(config, "workerinput", {})
    config.stash[run_id_key] = worker_input.get("specperf_run_id") or new_run_id()
    config.addinivalue_line(
        "markers",
        "specperf_phase(n): order of a check within a depth (0 first, 2 after the points)",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run."""
    node.workerinput["specperf_run_id"] = node.config.stash[run_id_key]


def _store(config: pytest.Config) -> ResultsStore:
    return ResultsStore(config.stash[settings_key].out_dir, config.stash[run_id_key])


def _with_depths(settings: Settings, depths: tuple[int, ...]) -> Settings:
    return replace(settings, depths=depths)


def pytest_report_header(config: pytest.Config) -> list[str]:
    settings = config.stash.get(settings_key, None)
    if settings is None:
        return []
    where = f"url={settings.url}" if settings.url else f"backend={settings.backend}"
    return [
        f"specperf: profile={settings.profile.name} {where} depths={list(settings.depths)} "
        f"concurrency={list(settings.concurrency)} out={settings.out_dir}"
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    settings = metafunc.config.stash[settings_key]
    if "specperf_depth" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_depth",
            settings.depths,
            indirect=True,
            scope="session",
            ids=[f"steps{d}" for d in settings.depths],
        )
    if "specperf_concurrency" in metafunc.fixturenames:
        metafunc.parametrize(
            "specperf_concurrency",
            settings.concurrency,
            ids=[f"c{c}" for c in settings.concurrency],
        )


def _item_order(item: pytest.Item) -> tuple[int, int, int]:
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec else {}
    depth = int(params.get("specperf_depth", 0))
    concurrency = int(params.get("specperf_concurrency", 0))
    marker = item.get_closest_marker("specperf_phase")
    phase = int(marker.args[0]) if marker is not None else 1
    return depth, phase, concurrency


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group by depth (each server boots once), then phase, then concurrency ascending."""
    specperf_items = [i for i in items if "specperf_depth" in getattr(i, "fixturenames", ())]
    if not specperf_items:
        return
    others = [i for i in items if i not in specperf_items]
    specperf_items.sort(key=_item_order)
    for item in specperf_items:
        item.add_marker(pytest.mark.xdist_group(f"specperf-steps{_item_order(item)[0]}"))
    items[:] = others + specperf_items


# -- fixtures -------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def specperf_settings(request: pytest.FixtureRequest) -> Settings:
    return request.config.stash[settings_key]


@pytest.fixture(scope="session")
def specperf_depth(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def specperf_concurrency(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture(scope="session")
def specperf_session(request: pytest.FixtureRequest, specperf_depth: int) -> Iterator[DepthSession]:
    """The server of one depth, booted once, torn down (whole process group) at the end."""
    config = request.config
    settings = config.stash[settings_key]
    session = DepthSession(settings, specperf_depth, _store(config))
    config.stash[sessions_key][specperf_depth] = session
    try:
        session.open()
    except SpecperfError as exc:
        session.close()
        pytest.fail(f"steps={specperf_depth}: {exc}", pytrace=False)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def specperf_point(specperf_session: DepthSession, specperf_concurrency: int) -> PointMetrics:
    """The measured point (depth, concurrency); measured on first use."""
    try:
        return specperf_session.measure(specperf_concurrency)
    except ServerDied as exc:
        pytest.fail(str(exc), pytrace=False)
    except ServerGone as exc:
        pytest.skip(f"not measured: {str(exc).splitlines()[0]}")


@pytest.fixture
def specperf_sweep(specperf_session: DepthSession) -> DepthRun:
    """Every planned point of this depth (measuring those not measured yet)."""
    run = specperf_session.measure_all()
    if specperf_session.failure:
        pytest.skip(f"not judged: {specperf_session.failure.splitlines()[0]}")
    return run


@pytest.fixture
def specperf_gate(specperf_session: DepthSession) -> SpecperfGate:
    return SpecperfGate(specperf_session)


# -- after the run ----------------------------------------------------------------------------
def _finished_runs(config: pytest.Config) -> list[DepthRun]:
    settings = config.stash.get(settings_key, None)
    if settings is None:
        return []
    results = _store(config).load()
    return list(results.runs) if results else []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if _is_worker(config):
        return
    settings = config.stash.get(settings_key, None)
    runs = _finished_runs(config)
    if settings is None or not runs:
        return
    (settings.out_dir / "report.md").write_text(markdown_report(runs), encoding="utf-8")
    if settings.update_baselines:
        config.stash[_written_key] = _write_baselines(settings, runs)


_written_key = pytest.StashKey[list[str]]()


def _write_baselines(settings: Settings, runs: list[DepthRun]) -> list[str]:
    lines: list[str] = []
    source = "url" if settings.url else settings.backend
    how = f"pytest-specperf --specperf-update-baselines ({source})"
    for run in runs:
        if not run.complete_and_clean:
            reason = (run.failure or "failed requests").splitlines()[0]
            lines.append(f"steps={run.depth}: NOT written (incomplete or failed run: {reason})")
            continue
        baseline = baseline_from_run(
            run, tolerance=Tolerance(throughput=settings.tolerance), how_recorded=how
        )
        try:
            path = save_baseline(settings.baselines_dir, baseline)
        except SpecperfError as exc:
            lines.append(f"steps={run.depth}: NOT written: {exc}")
            continue
        lines.append(f"steps={run.depth}: wrote {path}")
    return lines


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    runs = _finished_runs(config)
    if not runs:
        return
    settings = config.stash[settings_key]
    terminalreporter.section("specperf results")
    terminalreporter.write_line(full_report(runs))
    terminalreporter.write_line(
        f"\nresults: {settings.out_dir / 'results.json'}  report: {settings.out_dir / 'report.md'}"
    )
    for line in config.stash.get(_written_key, []):
        terminalreporter.write_line(f"baseline {line}")
