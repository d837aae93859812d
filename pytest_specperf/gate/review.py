"""Baselines for people: show one, diff two (or a baseline and a run), promote a run into one.

Plain functions returning text (the ``specperf baseline`` subcommands print it). Comparing
figures across hardware keys is refused unless asked for: tok/s of one GPU say nothing about
another's, and a diff that mixes them reads like a regression or an improvement.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from pytest_specperf.errors import BaselineError, SpecperfError
from pytest_specperf.gate.baselines import (
    Baseline,
    BaselinePoint,
    Tolerance,
    baseline_from_runs,
    baseline_path,
    load_baseline,
    save_baseline,
)
from pytest_specperf.gate.decision import GateSettings
from pytest_specperf.gate.floors import expected_floor
from pytest_specperf.gate.machines import LabelledRun, merge_across_machines, spread_text
from pytest_specperf.gate.provenance import downgrade_message, downgrade_reasons
from pytest_specperf.measure.repeats import split_by_boot
from pytest_specperf.measure.workload import DEFAULT_WORKLOAD
from pytest_specperf.results.formats import count, number, relative_change
from pytest_specperf.results.schema import AbComparison, DepthRun, RunResults, Slo
from pytest_specperf.results.verdict_report import exit_status_meaning

METRICS = (("agg_tok_s", "agg tok/s"), ("per_req_tok_s", "per-req tok/s"))


class ReviewError(SpecperfError):
    """A baseline command that cannot do what was asked; the message says why."""


@dataclass(frozen=True)
class DiffSide:
    """One side of a baseline diff: a baseline or a measured run, reduced to the same shape."""

    label: str
    profile: str
    hardware: str
    depth: int
    workload: dict[str, Any]
    points: dict[int, dict[str, float | None]]
    accept_length: float | None
    max_total_num_tokens: int | None
    max_running_requests: int | None


def read_baseline(path: Path) -> Baseline:
    if _is_results_file(path):
        raise ReviewError(
            f"{path} is a results file (a run's results.json), not a baseline: compare it with "
            f"`specperf baseline diff BASELINE {path}`, or make it one with "
            f"`specperf baseline promote {path} --dry-run`"
        )
    baseline = load_baseline(path)
    if baseline is None:
        raise ReviewError(f"no baseline at {path}")
    return baseline


def _is_results_file(path: Path) -> bool:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "runs" in data and "schema_version" not in data


def read_results(path: Path) -> RunResults:
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunResults)
    except FileNotFoundError:
        raise ReviewError(f"no results file at {path}") from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{path} is not a pytest-specperf results.json: {exc}") from None


def pick_run(results: RunResults, depth: int | None, where: Path) -> DepthRun:
    depths = [run.depth for run in results.runs]
    if depth is None:
        if len(depths) != 1:
            raise ReviewError(f"{where} holds steps {depths}: choose one with --spec-steps")
        return results.runs[0]
    run = results.depth(depth)
    if run is None:
        raise ReviewError(f"{where} has no run of steps={depth} (it holds steps {depths})")
    return run


def figures_of_baseline(baseline: Baseline, label: str) -> DiffSide:
    points = {
        int(c): {name: getattr(point, name, None) for name, _ in METRICS}
        for c, point in baseline.points.items()
    }
    kv = baseline.kv
    return _figures(baseline, label, points, kv.max_total_num_tokens, kv.max_running_requests)


def figures_of_run(run: DepthRun, label: str) -> DiffSide:
    points = {p.concurrency: {name: getattr(p, name) for name, _ in METRICS} for p in run.points}
    server = run.server
    total = server.max_total_num_tokens if server else None
    running = server.max_running_requests if server else None
    return _figures(run, label, points, total, running)


def _figures(
    source: Baseline | DepthRun,
    label: str,
    points: dict[int, dict[str, float | None]],
    max_total_num_tokens: int | None,
    max_running_requests: int | None,
) -> DiffSide:
    """What a baseline and a run both say the same way (deployment, workload, acceptance)."""
    return DiffSide(
        label=label,
        profile=source.profile,
        hardware=source.hardware,
        depth=source.depth,
        workload=dict(source.workload),
        points=points,
        accept_length=source.accept_length,
        max_total_num_tokens=max_total_num_tokens,
        max_running_requests=max_running_requests,
    )


def _number(value: float | int | None, digits: int = 1) -> str:
    return count(value) if isinstance(value, int) else number(value, digits)


def _noise_text(point: BaselinePoint) -> str:
    """The noise a baseline point records, per metric, in one cell; '-' when it has none."""
    parts = []
    for name, label in METRICS:
        noise = point.noise.get(name)
        if noise is None:
            continue
        spread = []
        if noise.within_boot_cv is not None:
            spread.append(f"within a boot {noise.within_boot_cv:.1%}")
        between = "between machines" if noise.machines > 1 else "between boots"
        if noise.boot_to_boot_cv is not None:
            spread.append(f"{between} {noise.boot_to_boot_cv:.1%}")
        what = ", ".join(spread) or "not known"
        samples = f"{noise.samples} sample" + ("" if noise.samples == 1 else "s")
        groups = "machine" if noise.machines > 1 else "boot"
        boots = f"{noise.boots} {groups}" + ("" if noise.boots == 1 else "s")
        parts.append(f"{label}: {what} ({noise.source}, {samples}, {boots})")
    return "; ".join(parts) or "-"


def workload_text(workload: dict[str, Any]) -> str:
    """``workload greedy-synthetic (max_new_tokens=1000, temperature=0.0, ...)``."""
    name = workload.get("workload", DEFAULT_WORKLOAD)
    fields = ", ".join(f"{k}={v}" for k, v in sorted(workload.items()) if k != "workload")
    return f"workload {name} ({fields})" if fields else f"workload {name}"


def show(baseline: Baseline, path: Path, *, samples: int = 3) -> str:
    """A baseline's figures, noise and provenance, and the floor a run of ``samples`` samples
    a point gets against it."""
    lines = [
        f"baseline {path}",
        f"  profile={baseline.profile} hardware={baseline.hardware} steps={baseline.depth} "
        f"backend={baseline.backend or 'unknown'} schema v{baseline.schema_version}",
        f"  recorded {baseline.recorded_at} ({baseline.recorded_by}): {baseline.how_recorded}",
        f"  SGLang {baseline.sglang_version or 'unknown'}; {workload_text(baseline.workload)}",
        f"  tolerance: throughput {baseline.tolerance.throughput:.0%}, "
        f"accept length {baseline.tolerance.accept_length:.0%}",
        f"  KV: max_total_num_tokens {_number(baseline.kv.max_total_num_tokens)}, "
        f"max_running_requests {_number(baseline.kv.max_running_requests)}; "
        f"accept length {_number(baseline.accept_length, 2)}",
        "",
        "| C | agg tok/s | per-req tok/s | noise |",
        "| --- | --- | --- | --- |",
    ]
    for concurrency, point in sorted(baseline.points.items(), key=lambda item: int(item[0])):
        lines.append(
            f"| {concurrency} | {_number(point.agg_tok_s)} | {_number(point.per_req_tok_s)} "
            f"| {_noise_text(point)} |"
        )
    lines += ["", expected_floor(baseline, samples, GateSettings())]
    if baseline.machines is not None:
        lines += ["", f"rests on {spread_text(baseline.machines)}"]
        lines += [
            f"  - {m.run}: {m.gpu_name or 'GPU not recorded'}{_cards(m.gpu_uuid)}, "
            f"driver {m.driver or '?'}, "
            f"{m.cpu_model or 'CPU not recorded'}; {m.samples} sample(s), agg level "
            + (relative_change(math.exp(m.agg_level)) if m.agg_level is not None else "-")
            for m in baseline.machines.runs
        ]
    if baseline.notes:
        lines += ["", f"notes: {baseline.notes}"]
    return "\n".join(lines)


def _cards(uuids: str | None) -> str:
    """`` (GPU-b1cae4fe)``: each card's UUID to its first group, enough to tell machines apart
    (the file keeps them whole); empty where none was recorded."""
    if not uuids:
        return ""
    return " (" + ", ".join(uuid.strip()[:12] for uuid in uuids.split(",")) + ")"


def merge(
    results_paths: Sequence[Path],
    baselines_dir: Path,
    *,
    depth: int | None = None,
    force: bool = False,
    dry_run: bool = False,
) -> tuple[Path, str]:
    """One baseline from runs of one key on several machines (gate/machines.py), written as the
    baseline of that key; (path, what it rests on and the diff against the old one).

    Each run is held to what ``promote`` asks of one (complete, every request served, no
    regression, its session passed; ``force`` waives all but the first two), and replacing a
    baseline that the merge would downgrade is refused unless ``force``."""
    if not results_paths:
        raise ReviewError("nothing to merge: name the runs' results.json files")
    runs: list[LabelledRun] = []
    for path in results_paths:
        results = read_results(path)
        run = pick_run(results, depth, path)
        problem = incomplete_reason(run)
        if problem is not None:
            raise ReviewError(f"not merging steps={run.depth} from {path}: {problem}")
        refusal = (
            None
            if force
            else _promotion_refusal(run, _ab_of(results, run.depth), RunExit.of(results))
        )
        if refusal is not None:
            raise ReviewError(
                f"not merging steps={run.depth} from {path}: {refusal}; "
                "pass --force to merge it anyway"
            )
        if any(labelled.label.startswith(f"run {results.run_id} ") for labelled in runs):
            raise ReviewError(f"not merging: run {results.run_id} is given twice ({path})")
        runs.append(LabelledRun(f"run {results.run_id} of {results.started_at[:10]}", run))
    try:
        new = merge_across_machines(
            runs, how_recorded="specperf baseline merge " + " ".join(map(str, results_paths))
        )
    except BaselineError as exc:
        raise ReviewError(f"not merging: {exc}") from None
    path = baseline_path(baselines_dir, new.profile, new.hardware, new.depth, new.workload_name)
    try:
        old = load_baseline(path)
    except BaselineError as exc:
        raise ReviewError(f"not merging: the existing baseline is unreadable: {exc}") from None
    report = show(new, path)
    if old is not None:
        report += "\n\n" + diff(
            figures_of_baseline(old, str(path)), figures_of_baseline(new, "merged")
        )
        reasons = downgrade_reasons(old, new)
        if reasons and not force:
            raise ReviewError(
                f"not merging: {downgrade_message(str(path), old, new, reasons)}; "
                "pass --force to replace it anyway"
            )
    if dry_run:
        return path, report
    return save_baseline(baselines_dir, new), report


def _ab_of(results: RunResults, depth: int) -> AbComparison | None:
    return next((c for c in results.ab if c.depth == depth), None)


def comparability(old: DiffSide, new: DiffSide, *, allow_other_hardware: bool) -> list[str]:
    """Notes on what differs between the two sides; ReviewError for a hardware mismatch."""
    if old.hardware != new.hardware and not allow_other_hardware:
        raise ReviewError(
            f"refusing to compare hardware {old.hardware!r} ({old.label}) with "
            f"{new.hardware!r} ({new.label}): throughput on one machine is no reference for "
            "another, so every difference would read as a regression or an improvement; "
            "pass --allow-other-hardware to compare anyway"
        )
    notes = []
    if old.hardware != new.hardware:
        notes.append(f"note: different hardware ({old.hardware} vs {new.hardware}), as asked")
    if old.profile != new.profile:
        notes.append(f"note: different profiles ({old.profile} vs {new.profile})")
    if old.depth != new.depth:
        notes.append(f"note: different depths (steps={old.depth} vs steps={new.depth})")
    differing = sorted(
        name
        for name in set(old.workload) & set(new.workload)
        if old.workload[name] != new.workload[name]
    )
    for name in differing:
        notes.append(
            f"note: workload {name} differs ({old.workload[name]!r} vs {new.workload[name]!r}): "
            "figures are not comparable"
        )
    return notes


def _change(old: float | int | None, new: float | int | None) -> str:
    if old is None or new is None or old == 0:
        return "-"
    return relative_change(new / old)


def diff(old: DiffSide, new: DiffSide, *, allow_other_hardware: bool = False) -> str:
    notes = comparability(old, new, allow_other_hardware=allow_other_hardware)
    lines = [f"old: {old.label}", f"new: {new.label}", *notes, ""]
    lines += ["| C | metric | old | new | change |", "| --- | --- | --- | --- | --- |"]
    for concurrency in sorted(set(old.points) | set(new.points)):
        before = old.points.get(concurrency, {})
        after = new.points.get(concurrency, {})
        for name, label in METRICS:
            a, b = before.get(name), after.get(name)
            lines.append(
                f"| {concurrency} | {label} | {_number(a)} | {_number(b)} | {_change(a, b)} |"
            )
    for label, a, b, digits in (
        ("accept length", old.accept_length, new.accept_length, 2),
        ("max_total_num_tokens", old.max_total_num_tokens, new.max_total_num_tokens, 0),
        ("max_running_requests", old.max_running_requests, new.max_running_requests, 0),
    ):
        lines.append(
            f"| - | {label} | {_number(a, digits)} | {_number(b, digits)} | {_change(a, b)} |"
        )
    return "\n".join(lines)


def promote(
    run: DepthRun,
    baselines_dir: Path,
    *,
    results_path: Path,
    tolerance: float | None = None,
    allow_other_hardware: bool = False,
    control: DepthRun | None = None,
    slo: Slo | None = None,
    ab: AbComparison | None = None,
    run_exit: RunExit | None = None,
    force: bool = False,
    dry_run: bool = False,
) -> tuple[Path, str]:
    """Write the run's figures as the baseline of its key; (path, the diff against the old one).

    Only a complete run with every request successful is promoted: a baseline must not
    inherit a failure (an interrupted run is a failed one). Refused unless ``force``: a run
    with a regression verdict, a run of an A/B comparison (``ab``: the results' comparison
    of this depth, whatever its outcome), a run whose test session did not pass
    (``run_exit``: the results' exit status and reasons; a recording run writes no baseline
    then either), and a baseline that would be downgraded (fewer boots or samples, another
    workload or sweep). ``dry_run``: the diff, nothing written.
    The old file, if any, must be of the same hardware key. ``control``: the same results'
    depth 0, whose points give the speedups recorded (when it is complete); ``slo``: the
    results' SLOs, under which goodput and SLO capacity are recorded.
    """
    problem = incomplete_reason(run)
    if problem is not None:
        raise ReviewError(f"not promoting steps={run.depth} from {results_path}: {problem}")
    if not force:
        refusal = _promotion_refusal(run, ab, run_exit)
        if refusal is not None:
            raise ReviewError(
                f"not promoting steps={run.depth} from {results_path}: {refusal}; "
                "pass --force to promote it anyway"
            )
    workload = str(run.workload.get("workload", DEFAULT_WORKLOAD))
    path = baseline_path(baselines_dir, run.profile, run.hardware, run.depth, workload)
    try:
        old = load_baseline(path)
    except BaselineError as exc:
        raise ReviewError(f"not promoting: the existing baseline is unreadable: {exc}") from None
    boots = split_by_boot(run)
    new = baseline_from_runs(
        boots,
        tolerance=Tolerance(throughput=tolerance)
        if tolerance is not None
        else (old.tolerance if old is not None else None),
        how_recorded=f"specperf baseline promote {results_path}",
        source="calibrated" if len(boots) > 1 else "recorded repeats",
        control=control if control is not None and incomplete_reason(control) is None else None,
        slo=slo,
    )
    new_figures = figures_of_baseline(new, f"{results_path} steps={run.depth}")
    if old is None:
        report = f"new baseline (there was none at {path})\n" + show(new, path)
    else:
        report = diff(
            figures_of_baseline(old, str(path)),
            new_figures,
            allow_other_hardware=allow_other_hardware,
        )
        reasons = downgrade_reasons(old, new)
        if reasons and not force:
            raise ReviewError(
                f"not promoting: {downgrade_message(str(path), old, new, reasons)}; "
                "pass --force to replace it anyway"
            )
    if dry_run:
        return path, report
    written = save_baseline(baselines_dir, new)
    return written, report


# A/B outcomes that leave head unproven against base (gate/ab.py, AbRun.comparison).
AB_NOT_GREEN = ("regression", "undecided", "failed", "interrupted")


@dataclass(frozen=True)
class RunExit:
    """How the run behind a results file ended (``RunResults.exit_status``, ``exit_reasons``
    and ``interrupted``); an older file without them says nothing."""

    status: int | None
    reasons: tuple[str, ...] = ()
    interrupted: str | None = None

    @classmethod
    def of(cls, results: RunResults) -> RunExit:
        return cls(results.exit_status, tuple(results.exit_reasons), results.interrupted)

    def refusal(self) -> str | None:
        """Why its figures are not a baseline, in the words of how it ended (None: it passed,
        or an older file does not say)."""
        if self.interrupted is not None:
            what = self.interrupted.removeprefix("interrupted ")
            if what == self.interrupted:
                what = f"({what})"
            return (
                f"the run it comes from was interrupted {what} (exit status {self.status}), and "
                "an interrupted run keeps no baseline"
            )
        if self.status in (None, 0):
            return None
        first = self.reasons[0].split(";")[0].removeprefix("specperf: ") if self.reasons else ""
        why = first or exit_status_meaning(self.status)
        return (
            f"the run it comes from did not pass (exit status {self.status}: {why}), and a "
            "recording run writes no baseline from a session that failed"
        )


def _promotion_refusal(
    run: DepthRun, ab: AbComparison | None = None, run_exit: RunExit | None = None
) -> str | None:
    """Why a complete run should still not become a baseline without --force, or None."""
    if ab is not None:
        return _ab_refusal(ab)
    regressions = [v for v in run.verdicts if v.outcome == "regression"]
    if regressions:
        first = regressions[0].message.split(";")[0]
        return f"the gate judged {len(regressions)} regression(s) in it ({first})"
    return run_exit.refusal() if run_exit is not None else None


def _ab_refusal(ab: AbComparison) -> str:
    """An A/B run's depth is never promoted without --force: A/B mode neither reads nor writes
    baselines (--specperf-update-baselines is refused there), its figures are one head boot's
    taken between base boots, and a red comparison must not become the reference."""
    summary = ab.message.split(";")[0] or f"{ab.pairs} pair(s)"
    if ab.outcome in AB_NOT_GREEN:
        return f"its A/B outcome is {ab.outcome} ({summary})"
    return (
        f"it is an A/B run (A/B outcome {ab.outcome}: {summary}), and A/B mode writes no "
        "baselines; record one with a plain run and --specperf-update-baselines"
    )


def incomplete_reason(run: DepthRun) -> str | None:
    """Why a run's figures cannot become a baseline, or None."""
    if run.failure:
        return f"failed run: {run.failure.splitlines()[0]}"
    if run.status != "complete":
        return f"run status {run.status!r}: its process ended before the run was closed"
    missing = [c for c in run.planned_concurrency if run.point(c) is None]
    if missing:
        return f"incomplete run: C={','.join(map(str, missing))} not measured"
    failed = sum(p.failed for p in run.points)
    if failed:
        return f"{failed} failed request(s)"
    bound = [p for p in run.points if p.client_bound]
    if bound:
        # Figures the load generator bounded would make a baseline of the client, not the server.
        where = ",".join(str(p.concurrency) for p in bound)
        return f"client-bound at C={where}: {bound[0].client_bound}"
    return None
