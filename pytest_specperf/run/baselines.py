"""The run's baselines: the file each depth is judged against, and writing them after a
recording run (--specperf-update-baselines, --specperf-calibrate).

Nothing is written from a run that failed, was interrupted, never finished, missed a planned
point or had a failed request; a baseline the new one would downgrade is kept unless the
user allowed that downgrade (an option typed on purpose: no printed command carries it).
"""

from __future__ import annotations

from pathlib import Path

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import BaselineError, SpecperfError
from pytest_specperf.files import atomic_write_bytes
from pytest_specperf.gate.baselines import (
    Baseline,
    Tolerance,
    baseline_from_run,
    baseline_from_runs,
    baseline_path,
    load_baseline,
    save_baseline,
)
from pytest_specperf.gate.floors import workload_mismatch
from pytest_specperf.gate.provenance import backend_change, refusal, workload_changes
from pytest_specperf.gate.review import incomplete_reason
from pytest_specperf.measure.repeats import split_by_boot
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.results.speedup import control_run
from pytest_specperf.run.advice import (
    not_comparable_advice,
    other_backend_advice,
    own_baselines_dir,
    own_record_command,
    record_command,
    records_elsewhere,
)
from pytest_specperf.run.depth_session import DepthSession


def depth_baseline(session: DepthSession) -> tuple[Path, Baseline | None]:
    """The baseline for the session's key, or None; BaselineError if the file is bad."""
    s = session.settings
    path = baseline_path(
        s.baselines_dir, s.profile.name, session.hardware, session.depth, s.workload.name
    )
    return path, load_baseline(path)


def load_baseline_safely(session: DepthSession) -> tuple[Path | None, Baseline | None, str | None]:
    """(path, baseline, None), or (path or None, None, error line) for a bad file or key."""
    try:
        path, baseline = depth_baseline(session)
    except BaselineError as exc:
        return None, None, str(exc)
    return path, baseline, None


def write_baselines(
    settings: Settings, runs: list[DepthRun], session_problem: str | None = None
) -> list[str]:
    """Record the baseline of every depth whose run completed cleanly; one line per depth.

    Nothing is written from a run that failed, was interrupted, never finished (its process
    died), missed a planned point or had a failed request, nor from any depth when the test
    session itself did not pass (``session_problem`` says why). A baseline that the new one
    would downgrade (fewer boots or samples, another workload or sweep) is kept unless the
    user allowed that downgrade: the line names what would be lost and what to run instead
    (``_downgrade_refusal``).
    """
    lines: list[str] = []
    source = "url" if settings.url else settings.backend
    how = f"pytest-specperf --specperf-update-baselines ({source})"
    control = control_run(runs)
    usable_control = control if control is not None and not incomplete_reason(control) else None
    for run in runs:
        problem = incomplete_reason(run) or session_problem
        if problem is not None:
            lines.append(f"steps={run.depth}: NOT written ({problem})")
            continue
        if settings.calibrate:
            baseline = baseline_from_runs(
                split_by_boot(run),
                tolerance=Tolerance(throughput=settings.tolerance),
                how_recorded=how.replace("--specperf-update-baselines", "--specperf-calibrate"),
                source="calibrated",
                control=usable_control,
                slo=settings.slo,
            )
        else:
            baseline = baseline_from_run(
                run,
                tolerance=Tolerance(throughput=settings.tolerance),
                how_recorded=how,
                control=usable_control,
                slo=settings.slo,
            )
        try:
            refused = _downgrade_refusal(settings, baseline, run.hardware)
            if refused is not None:
                lines.append(f"steps={run.depth}: NOT written: {refused}")
                continue
            path = _save_unless_interrupted(settings.baselines_dir, baseline)
        except SpecperfError as exc:
            lines.append(f"steps={run.depth}: NOT written: {exc}")
            continue
        if path is None:
            lines.append(f"steps={run.depth}: NOT written (the run was interrupted)")
            continue
        lines.append(f"steps={run.depth}: wrote {path}")
    return lines


# The start of a write_baselines line for a recording refused as a downgrade.
REFUSED_DOWNGRADE = "NOT written: refusing to replace"


def _downgrade_refusal(settings: Settings, new: Baseline, hardware: str) -> str | None:
    """One line when writing ``new`` would lose something of the baseline it replaces (what,
    and what to run instead), or None. The advice never replaces the baseline with figures
    of other settings: the first command runs at the baseline's settings; a recording at
    this run's settings goes to a directory of the user's own."""
    if settings.allow_baseline_downgrade:
        return None
    path = baseline_path(
        settings.baselines_dir, new.profile, new.hardware, new.depth, new.workload_name
    )
    old = load_baseline(path)
    if old is None:
        return None
    message = refusal(str(path), old, new)
    if message is None:
        return None
    # "As it was" repeats this run's backend and workload options: it would be refused again,
    # for the same reason, if this recording changes the backend (another backend's figures
    # go to a directory of the user's own) or a workload field the old one records.
    # A baselines directory the repository ships is rewritten by no printed command: only
    # the recording into a directory of the user's own is offered there.
    own = own_record_command(settings, [new.depth], hardware)
    if backend_change(old, new) is not None:
        advice = other_backend_advice(settings, [new.depth], old, hardware)
    elif records_elsewhere(settings):
        typed, _ = own_baselines_dir(settings)
        advice = (
            f"record this run's settings in a directory of your own with: {own} (then gate "
            f"with --specperf-baselines={typed})"
        )
    elif (
        not workload_mismatch(settings.workload.key(), old)
        and not workload_changes(old, new)
        and any(old.point(c) is not None for c in settings.concurrency)
    ):
        like_before = record_command(settings, [new.depth], hardware, old=old)
        advice = (
            f"re-record it as it was with: {like_before}; or record this run's settings "
            f"in a directory of your own with: {own}"
        )
    else:
        advice = not_comparable_advice(settings, [new.depth], old, hardware)
    return (
        f"{message}; {advice}; replacing it anyway, and losing that, takes an option you type "
        "yourself (docs/how-to/baseline-safety.md)"
    )


def _save_unless_interrupted(root: Path, baseline: Baseline) -> Path | None:
    """The baseline's path once saved; None if the run was interrupted before or meanwhile
    (the file is then as it was). A signal later in the run takes it back too
    (interrupts.conclude): an interrupted run writes no baseline."""
    if interrupts.interrupted() is not None:
        return None
    path = baseline_path(
        root, baseline.profile, baseline.hardware, baseline.depth, baseline.workload_name
    )
    previous = path.read_bytes() if path.is_file() else None

    def put_back() -> None:
        if previous is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write_bytes(path, previous)

    with interrupts.deferred():
        save_baseline(root, baseline)
        interrupts.on_interrupt(put_back)
    if interrupts.interrupted() is not None:
        put_back()
        return None
    return path


def why_unjudged(
    settings: Settings, depth: int, hardware: str
) -> tuple[str, Baseline | None, bool]:
    """Why a depth's throughput got no verdict, as a few words: (reason, the baseline found
    or None, whether this run is not comparable with it: another workload, or none of its
    concurrencies; a recording at this run's settings must not replace it)."""
    try:
        path = baseline_path(
            settings.baselines_dir, settings.profile.name, hardware, depth, settings.workload.name
        )
        baseline = load_baseline(path)
    except BaselineError as exc:
        return str(exc), None, False
    if baseline is None:
        return f"no baseline ({path} is missing)", None, False
    mismatch = workload_mismatch(settings.workload.key(), baseline)
    if mismatch:
        return f"{mismatch}: not comparable ({path})", baseline, True
    measured = [c for c in settings.concurrency if baseline.point(c) is not None]
    if not measured:
        levels = ",".join(sorted(baseline.points, key=int))
        return (
            f"{path} has no figures for the measured concurrencies (it has C={levels})",
            baseline,
            True,
        )
    return f"every throughput check was skipped ({path})", baseline, False
