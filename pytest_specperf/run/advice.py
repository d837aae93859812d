"""The commands the suite prints for the user to run: complete and pasteable.

Every message that says "record with", "refresh the baseline" or "re-record" builds its
command here, from the run's settings, so that running it as printed writes the baseline the
message named: it repeats every option that decides the baseline's key and location (the
baselines directory, the deployment profile, the backend and its knobs, the workload, the
concurrency sweep, the tokens per request, an explicit hardware key) and nothing else (a
``--specperf-server-arg`` such as ``--sim-slowdown`` is left out: a deliberate slowdown is not
what a baseline should hold). When the baseline to be replaced was calibrated, the command
calibrates again with as many boots and samples, so it is not refused as a downgrade.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_specperf.config.settings import Settings
from pytest_specperf.config.table import ALLOW_DOWNGRADE_FLAG
from pytest_specperf.errors import BaselineError
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.gate.floors import workload_mismatch
from pytest_specperf.gate.provenance import Provenance, provenance_of
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD, workload_preset
from pytest_specperf.server.profiles import DEFAULT_PROFILE

TEST_PATH = "perf_tests"


@dataclass(frozen=True)
class Recording:
    """How a printed command records: the flags that make it record as much as asked."""

    calibrate: bool = False
    boots: int = 1
    repeats: int = 1
    allow_downgrade: bool = False

    def flags(self, *, attached: bool) -> list[str]:
        flags = ["--specperf-calibrate"] if self.calibrate else ["--specperf-update-baselines"]
        if self.calibrate and self.boots > 1 and not attached:
            flags.append(f"--specperf-calibrate-boots={self.boots}")
        if self.repeats > 1:
            flags.append(f"--specperf-repeats={self.repeats}")
        if self.allow_downgrade:
            flags.append(ALLOW_DOWNGRADE_FLAG)
        return flags


def recording_like(old: Baseline | None, *, allow_downgrade: bool = False) -> Recording:
    """A recording that matches ``old``'s provenance (boots, samples), so it replaces it
    without downgrading it; a plain recording when there is none."""
    if old is None:
        return Recording(allow_downgrade=allow_downgrade)
    found: Provenance = provenance_of(old)
    boots = max(found.boots, 1)
    repeats = max(-(-found.samples // boots), 1)  # samples per boot, rounded up
    return Recording(
        calibrate=found.source == "calibrated",
        boots=boots,
        repeats=repeats,
        allow_downgrade=allow_downgrade,
    )


def key_options(settings: Settings, *, concurrency: Iterable[int] | None = None) -> list[str]:
    """The options that decide a baseline's key and location, as typed on a command line."""
    s = settings
    parts: list[str] = []
    if s.url:
        parts.append(f"--specperf-url={s.url}")
    else:
        parts.append(f"--specperf-backend={s.backend}")
        if s.backend == "sim":
            parts.append(f"--specperf-sim-speedup={s.sim_speedup:g}")
    if s.profile_option != DEFAULT_PROFILE or s.profile.name != DEFAULT_PROFILE:
        parts.append(f"--specperf-profile={s.profile_option}")
    parts += [f"--specperf-profile-dir={d}" for d in s.profile_dirs]
    parts.append(f"--specperf-baselines={s.baselines_option}")
    if s.hardware:
        parts.append(f"--specperf-hardware={s.hardware}")
    workload = s.workload
    if workload.name != DEFAULT_WORKLOAD:
        parts.append(f"--specperf-workload={s.workload_option or workload.name}")
    if workload.trace is None:
        parts.append(f"--specperf-max-new-tokens={workload.max_new_tokens}")
    elif s.trace_speed != 1.0:
        parts.append(f"--specperf-trace-speed={s.trace_speed:g}")
    if s.request_rates:
        parts.append(f"--specperf-request-rate={','.join(f'{r:g}' for r in s.request_rates)}")
        parts.append(f"--specperf-rate-seconds={s.rate_seconds:g}")
        if s.burstiness != 1.0:
            parts.append(f"--specperf-burstiness={s.burstiness:g}")
    if workload.temperature != workload_preset(workload.name).temperature:
        parts.append(f"--specperf-temperature={workload.temperature:g}")
    if workload.endpoint != "generate":
        parts.append(f"--specperf-endpoint={workload.endpoint}")
    levels = sorted(set(concurrency if concurrency is not None else s.concurrency))
    parts.append(f"--specperf-concurrency={','.join(map(str, levels))}")
    return parts


def record_command(
    settings: Settings,
    depths: Iterable[int],
    *,
    old: Baseline | None = None,
    recording: Recording | None = None,
) -> str:
    """The pytest command that (re-)records the baselines of ``depths`` as the run keyed them.

    ``old``: the baseline it replaces; its sweep is kept and its provenance matched.
    """
    how = recording if recording is not None else recording_like(old)
    concurrency = (
        sorted({int(c) for c in old.points} | set(settings.concurrency))
        if old is not None and old.points
        else None
    )
    steps = ",".join(map(str, sorted(set(depths))))
    parts = ["pytest", TEST_PATH, f"--spec-steps={steps}"]
    parts += key_options(settings, concurrency=concurrency)
    parts += how.flags(attached=settings.url is not None)
    return shlex.join(parts)


def record_hint(
    settings: Settings, hardware: str, depth: int, depths: Iterable[int] | None = None
) -> str:
    """The pasteable command that (re-)records this depth's baseline (or ``depths``')."""
    s = settings
    old: Baseline | None = None
    with contextlib.suppress(BaselineError):
        old = load_baseline(
            baseline_path(s.baselines_dir, s.profile.name, hardware, depth, s.workload.name)
        )
    chosen = tuple(depths) if depths else (depth,)
    if old is not None and workload_mismatch(s.workload.key(), old):
        # Another workload's figures: replacing them is a deliberate downgrade.
        return record_command(s, chosen, recording=Recording(allow_downgrade=True))
    return record_command(s, chosen, old=old)


def deliberate_slowdown(settings: Settings) -> str | None:
    """The options of this run that slow the server on purpose, as given; None if none."""
    s = settings
    given = [a for a in s.server_args if a.startswith(("--sim-slowdown", "--sim-forward"))]
    if s.inject_slowdown_s:
        given.append(f"--specperf-inject-slowdown={s.inject_slowdown_s:g}")
    return ", ".join(given) or None
