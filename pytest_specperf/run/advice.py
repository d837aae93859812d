"""The commands the suite prints for the user to run: complete and pasteable.

Every message that says "record with", "refresh the baseline" or "re-record" builds its
command here, from the run's settings, so that running it as printed writes the baseline the
message named: it repeats every option that decides the baseline's key and location (the
baselines directory, the deployment profile, the backend and its knobs, the workload, the
concurrency sweep, the tokens per request, an explicit hardware key) and nothing else (a
``--specperf-server-arg`` such as ``--sim-slowdown`` is left out: a deliberate slowdown is not
what a baseline should hold). When the baseline to be replaced was calibrated, the command
calibrates again with as many boots and samples, so it is not refused as a downgrade.

One rule for every printed command (issue 49): it keeps the run's ``--specperf-out``, its
``--specperf-run-profile`` and its samples per point (``--specperf-repeats``, never fewer than
the run took), and it never writes into a baselines directory the repository ships (one git
tracks files in, ``repository_baselines``): a recording the run's own directory would take
goes to a directory of the user's own (``own_baselines_dir``) instead, and the message says
how to gate against it (``then_gate``).

No printed command replaces a baseline with one measured at other settings: when a run is not
comparable with its baseline (another workload, tokens, endpoint, or none of its
concurrencies), the first command runs at the baseline's settings (``gate_command``), and the
recording at the run's own settings goes to a directory of the user's own
(``own_baselines_dir``). No printed command allows a downgrade.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import BaselineError
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.gate.floors import workload_mismatch
from pytest_specperf.gate.provenance import Provenance, provenance_of
from pytest_specperf.measure.workload import (
    DEFAULT_WORKLOAD,
    WORKLOADS,
    Workload,
    workload_preset,
)
from pytest_specperf.server.hardware import slug
from pytest_specperf.server.profiles import DEFAULT_PROFILE

TEST_PATH = "perf_tests"
# Where a recording at settings the configured baselines were not made at goes: a folder of
# the run's out directory (the user's own, never the project's baselines), one per workload.
OWN_BASELINES = "baselines"


@dataclass(frozen=True)
class Recording:
    """How a printed command records: the flags that make it record as much as asked."""

    calibrate: bool = False
    boots: int = 1
    repeats: int = 1

    def flags(self, *, attached: bool) -> list[str]:
        """The recording flags (the samples per point are a run option: ``run_options``)."""
        flags = ["--specperf-calibrate"] if self.calibrate else ["--specperf-update-baselines"]
        if self.calibrate and self.boots > 1 and not attached:
            flags.append(f"--specperf-calibrate-boots={self.boots}")
        return flags

    def joined(self, other: Recording) -> Recording:
        """As much as both ask: a recording that downgrades neither."""
        return Recording(
            calibrate=self.calibrate or other.calibrate,
            boots=max(self.boots, other.boots),
            repeats=max(self.repeats, other.repeats),
        )


def recording_like(old: Baseline | None) -> Recording:
    """A recording that matches ``old``'s provenance (boots, samples), so it replaces it
    without downgrading it; a plain recording when there is none."""
    if old is None:
        return Recording()
    found: Provenance = provenance_of(old)
    boots = max(found.boots, 1)
    repeats = max(-(-found.samples // boots), 1)  # samples per boot, rounded up
    return Recording(calibrate=found.source == "calibrated", boots=boots, repeats=repeats)


def repository_baselines(directory: Path) -> bool:
    """Whether git tracks files in ``directory``: baselines a repository ships, reviewed and
    committed, which no printed command writes. False outside a git work tree, without git,
    or for a directory not there yet."""
    if not directory.is_dir():
        return False
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--", "."],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and bool(listed.stdout.strip())


def records_elsewhere(settings: Settings) -> bool:
    """Whether a printed recording goes to a directory of the user's own rather than the run's
    baselines directory: the run's is the repository's (``repository_baselines``)."""
    return repository_baselines(settings.baselines_dir)


def then_gate(settings: Settings) -> str:
    """What a message says after a recording command that ``records_elsewhere``: where it
    records and how to gate against it; empty when it records into the run's directory."""
    if not records_elsewhere(settings):
        return ""
    typed, _ = own_baselines_dir(settings)
    return (
        f" (into a directory of your own: git tracks {settings.baselines_option}, which no "
        f"printed command writes; then gate with --specperf-baselines={typed})"
    )


def run_options(settings: Settings, repeats: int) -> list[str]:
    """Where the command writes its results and how many samples per point: the run's own out
    directory, ``repeats`` (at least the run's)."""
    return [
        f"--specperf-out={settings.out_option}",
        f"--specperf-repeats={max(repeats, settings.repeats)}",
    ]


def key_options(
    settings: Settings,
    *,
    concurrency: Iterable[int] | None = None,
    workload: Workload | None = None,
    baselines: str | None = None,
) -> list[str]:
    """The options that decide a baseline's key and location, as typed on a command line
    (``workload``, ``concurrency`` and ``baselines`` in place of the run's own)."""
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
    parts.append(f"--specperf-baselines={baselines or s.baselines_option}")
    if s.hardware:
        parts.append(f"--specperf-hardware={s.hardware}")
    # The run's own workload as typed (a trace's path), another one (a baseline's) by name.
    typed = s.workload_option if workload is None else None
    workload = workload or s.workload
    if workload.name != DEFAULT_WORKLOAD:
        parts.append(f"--specperf-workload={typed or workload.name}")
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
    hardware: str,
    *,
    old: Baseline | None = None,
    recording: Recording | None = None,
) -> str:
    """The pytest command that (re-)records the baselines of ``depths`` as the run keyed them.

    ``old``: the baseline it replaces; its sweep is kept and its provenance matched;
    ``recording``: at least this much (a calibration). Into the run's baselines directory, or,
    when that is the repository's (``records_elsewhere``), into a directory of the user's own,
    keeping what an earlier recording there holds (messages add ``then_gate``).
    """
    olds = [old]
    baselines = None
    if records_elsewhere(settings):
        baselines, _ = own_baselines_dir(settings)
        olds.append(_earlier_own(settings, depths, hardware))
    return _recording_command(
        settings, depths, [b for b in olds if b is not None], recording, baselines
    )


def _recording_command(
    settings: Settings,
    depths: Iterable[int],
    olds: Sequence[Baseline],
    recording: Recording | None,
    baselines: str | None,
) -> str:
    """A recording that downgrades none of ``olds``: their sweeps and this run's, as many boots
    and samples as any of them (and the run) took."""
    how = recording if recording is not None else Recording()
    levels = set(settings.concurrency)
    for found in olds:
        how = how.joined(recording_like(found))
        levels |= {int(c) for c in found.points}
    parts = _pytest(settings, depths)
    parts += key_options(settings, concurrency=levels, baselines=baselines)
    parts += run_options(settings, how.repeats)
    parts += how.flags(attached=settings.url is not None)
    return shlex.join(parts)


def record_hint(
    settings: Settings, hardware: str, depth: int, depths: Iterable[int] | None = None
) -> str:
    """The pasteable command that (re-)records this depth's baseline (or ``depths``'), for a
    run comparable with it (a mismatched one is told ``not_comparable_advice``)."""
    s = settings
    old: Baseline | None = None
    with contextlib.suppress(BaselineError):
        old = load_baseline(
            baseline_path(s.baselines_dir, s.profile.name, hardware, depth, s.workload.name)
        )
    return record_command(s, tuple(depths) if depths else (depth,), hardware, old=old)


def record_advice(
    settings: Settings, hardware: str, depth: int, depths: Iterable[int] | None = None
) -> str:
    """``record_hint``'s command as a message says it: with where it records and how to gate
    against it when that is a directory of the user's own (``then_gate``)."""
    return record_hint(settings, hardware, depth, depths) + then_gate(settings)


def deliberate_slowdown(settings: Settings) -> str | None:
    """The options of this run that slow the server on purpose, as given; None if none."""
    s = settings
    given = [a for a in s.server_args if a.startswith(("--sim-slowdown", "--sim-forward"))]
    if s.inject_slowdown_s:
        given.append(f"--specperf-inject-slowdown={s.inject_slowdown_s:g}")
    return ", ".join(given) or None


def baseline_workload(settings: Settings, baseline: Baseline) -> Workload | None:
    """The workload the options can set that ``baseline`` was recorded with (its name, tokens,
    temperature, endpoint); None when no options reproduce it (say, an edited prompt set)."""
    recorded = baseline.workload
    name = recorded.get("workload", settings.workload.name)
    if name not in WORKLOADS:
        return None
    fields: dict[str, object] = {}
    for field in ("max_new_tokens", "temperature", "endpoint"):
        fields[field] = recorded.get(field, getattr(settings.workload, field))
    try:
        workload = workload_preset(name, **fields)
    except (TypeError, ValueError):  # a field of a type the options cannot give
        return None
    return None if workload_mismatch(workload.key(), baseline) else workload


def comparable_concurrency(settings: Settings, baseline: Baseline) -> list[int]:
    """The run's concurrencies the baseline has figures for; when it has none of them, the
    baseline's level nearest to each (a short run, still at the baseline's settings)."""
    levels = sorted(int(c) for c in baseline.points)
    shared = sorted(c for c in set(settings.concurrency) if c in levels)
    if shared or not levels:
        return shared
    return sorted(
        {min(levels, key=lambda level: (abs(level - c), level)) for c in settings.concurrency}
    )


def gate_command(settings: Settings, depths: Iterable[int], baseline: Baseline) -> str | None:
    """The pytest command that gates ``depths`` against ``baseline`` at its own settings (its
    workload and tokens, concurrencies it has), as this run would otherwise: records nothing.
    None when no options reproduce the baseline's workload."""
    workload = baseline_workload(settings, baseline)
    if workload is None:
        return None
    parts = _pytest(settings, depths)
    parts += key_options(
        settings, concurrency=comparable_concurrency(settings, baseline), workload=workload
    )
    parts += run_options(settings, settings.repeats)
    return shlex.join(parts)


def own_baselines_dir(settings: Settings) -> tuple[str, Path]:
    """A baselines directory of the user's own for this run's workload: (as typed on a
    command line, the path), a folder of the out directory, one per workload settings."""
    workload = settings.workload
    name = f"{workload.name}-{workload.max_new_tokens}-tokens"
    if workload.trace is not None:
        # A trace sets each request's output length: the folder names the trace itself.
        file, _, digest = workload.trace.partition("@")
        name = f"trace-{slug(Path(file).stem)}-{digest[:8]}"
        if workload.trace_speed != 1.0:
            name += f"-speed-{workload.trace_speed:g}"
    if workload.temperature != workload_preset(workload.name).temperature:
        name += f"-temperature-{workload.temperature:g}"
    if workload.endpoint != "generate":
        name += f"-{workload.endpoint}"
    typed = str(Path(settings.out_option) / OWN_BASELINES / name)
    return typed, settings.out_dir / OWN_BASELINES / name


def own_record_command(settings: Settings, depths: Iterable[int], hardware: str) -> str:
    """The command that records ``depths`` at this run's settings into the user's own
    baselines directory (``own_baselines_dir``), keeping what an earlier such recording there
    holds (its sweep, its samples)."""
    typed, _ = own_baselines_dir(settings)
    earlier = _earlier_own(settings, depths, hardware)
    return _recording_command(settings, depths, [earlier] if earlier else [], None, typed)


def _earlier_own(settings: Settings, depths: Iterable[int], hardware: str) -> Baseline | None:
    """A baseline an earlier recording left in the user's own directory for these settings."""
    _, root = own_baselines_dir(settings)
    for depth in sorted(set(depths)):
        try:
            found = load_baseline(
                baseline_path(root, settings.profile.name, hardware, depth, settings.workload.name)
            )
        except BaselineError:
            continue
        if found is not None and not workload_mismatch(settings.workload.key(), found):
            return found
    return None


def promote_command(settings: Settings, results: Path) -> str:
    """``specperf baseline promote`` of a reviewed run (``specperf bench``'s), into the user's
    own baselines directory: never a directory the repository ships."""
    typed, _ = own_baselines_dir(settings)
    return shlex.join(["specperf", "baseline", "promote", str(results), "--baselines", typed])


def not_comparable_advice(
    settings: Settings, depths: Iterable[int], baseline: Baseline, hardware: str
) -> str:
    """What to run when this run is not comparable with ``baseline``: first the run at the
    baseline's settings, then a recording at the run's settings into a directory of the
    user's own. Never a command that replaces ``baseline``."""
    depths = sorted(set(depths))
    gate = gate_command(settings, depths, baseline)
    own = own_record_command(settings, depths, hardware)
    typed, _ = own_baselines_dir(settings)
    first = (
        f"gate at the baseline's settings with: {gate}"
        if gate is not None
        else "no options reproduce the baseline's workload (its prompts differ from this version's)"
    )
    return (
        f"{first}; or record a baseline at this run's settings in a directory of your own "
        f"with: {own} (then gate with --specperf-baselines={typed})"
    )


def other_backend_advice(
    settings: Settings,
    depths: Iterable[int],
    baseline: Baseline,
    hardware: str,
    run_backend: str | None = None,
) -> str:
    """What to run when ``baseline`` was recorded on another backend than this run's: a
    recording on this run's backend into a directory of the user's own, or the run on the
    baseline's backend. Never a command that replaces ``baseline``. With --specperf-url the
    server told its backend, ``run_backend`` (run_record.known_backend): gate it against a
    baseline of that backend, or point the URL at a server of the baseline's backend."""
    if settings.url:
        typed, _ = own_baselines_dir(settings)
        return (
            f"the server at {settings.url} runs backend {run_backend} (its /server_info says "
            f"so): gate it against a {run_backend} baseline (--specperf-baselines={typed}, "
            f"recorded from that server with --specperf-update-baselines), or point "
            f"--specperf-url at a {baseline.backend} server"
        )
    own = own_record_command(settings, depths, hardware)
    typed, _ = own_baselines_dir(settings)
    return (
        f"record a baseline for backend {settings.backend} in a directory of your own with: "
        f"{own} (then gate with --specperf-baselines={typed}); or run on the backend the "
        f"baseline was recorded on (--specperf-backend={baseline.backend})"
    )


@dataclass(frozen=True)
class Unjudged:
    """A depth whose throughput got no verdict: the baseline found (or None), and whether
    this run is comparable with it."""

    depth: int
    hardware: str
    baseline: Baseline | None
    comparable: bool


def no_verdict_advice(settings: Settings, unjudged: Sequence[Unjudged]) -> str:
    """What to run for depths that judged nothing: a recording where there is no baseline
    (or a comparable one the run could not judge), and for a baseline the run is not
    comparable with, the run at its settings first (``not_comparable_advice``)."""
    incomparable: dict[str, list[Unjudged]] = {}
    rest: list[Unjudged] = []
    for item in unjudged:
        if item.baseline is None or item.comparable:
            rest.append(item)
            continue
        key = json.dumps(
            [item.baseline.workload, comparable_concurrency(settings, item.baseline)],
            sort_keys=True,
            default=str,
        )
        incomparable.setdefault(key, []).append(item)
    advice: list[str] = []
    if rest:
        old = next((item.baseline for item in rest if item.baseline is not None), None)
        depths = [item.depth for item in rest]
        command = record_command(settings, depths, rest[0].hardware, old=old)
        advice.append(f"record the baseline with: {command}{then_gate(settings)}")
    for group in incomparable.values():
        depths = [item.depth for item in group]
        baseline = group[0].baseline
        assert baseline is not None
        said = not_comparable_advice(settings, depths, baseline, group[0].hardware)
        if len(incomparable) > 1 or rest:
            said = f"for steps={','.join(map(str, depths))}: {said}"
        advice.append(said)
    return "; ".join(advice)


def _pytest(settings: Settings, depths: Iterable[int]) -> list[str]:
    """``pytest perf_tests``, the run's profile when it has one, then the depths."""
    parts = ["pytest", TEST_PATH]
    if settings.run_profile:
        parts.append(f"--specperf-run-profile={settings.run_profile}")
    return [*parts, _steps(depths)]


def _steps(depths: Iterable[int]) -> str:
    return f"--spec-steps={','.join(map(str, sorted(set(depths))))}"
