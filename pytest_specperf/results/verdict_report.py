"""The verdict section of report.md: the gate's verdicts, what needs attention first.

Each verdict with its figures (median, interval, the figure judged, floor, baseline, every
sample, the noise assumed, whether re-measuring confirmed it); what was not judged as the
message its failing test gave.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pytest_specperf.results.formats import METRIC_LABELS, number, relative_change
from pytest_specperf.results.report_table import md_table
from pytest_specperf.results.schema import AbComparison, DepthRun, Interval, Verdict
from pytest_specperf.results.stats import is_min_max

# Verdicts are listed in this order: what needs attention first.
# "unjudged" fails its test too (the load generator, not the server, was measured);
# "no-baseline" (a point or depth the baseline could not judge) fails a gating run.
VERDICT_ORDER = ("regression", "unjudged", "no-baseline", "improvement", "pass", "recorded")


def interval_text(interval: Interval | None, digits: int = 1) -> str:
    if interval is None:
        return "-"
    if is_min_max(interval):
        return f"[min-max {number(interval.low, digits)}, {number(interval.high, digits)}]"
    return f"[{number(interval.low, digits)}, {number(interval.high, digits)}]"


# The gate's verdicts (DepthRun.verdicts, written by plugin/gate.py), grouped in this
# order: what needs attention first. The pooled test of a depth has concurrency None and
# metric "throughput": its figures are ratios to the baseline.
DEPTH_METRIC = "throughput"
# Outcomes shown with every figure, in this order; the others (what was not judged) get a
# table of their messages.
_FIGURE_GROUPS = {"regression": "Regressions", "improvement": "Improvements", "pass": "Passes"}
_MESSAGE_GROUPS = {
    "unjudged": "Not judged (these tests fail)",
    "recorded": "Recorded",
    "no-baseline": "Not judged by the baseline: a gating run fails on these",
}
_FAILING = ("regression", "unjudged")
_AB_RED = ("regression", "undecided", "failed", "interrupted")
# A/B outcomes that are a verdict on head, red and green (a failed or interrupted comparison
# reached none).
_AB_RED_VERDICTS = ("regression", "undecided")
_AB_GREEN_VERDICTS = ("improvement", "no-regression")
_PLURALS = {"regression": "regressions", "improvement": "improvements", "pass": "passes"}
_SHOWN = {"no-baseline": "not judged"}
VERDICT_HEADER = (
    "point",
    "metric",
    "median",
    "interval",
    "judged",
    "floor",
    "baseline",
    "change",
    "samples",
    "noise",
    "confirmation",
)


def _verdict_where(verdict: Verdict) -> str:
    if verdict.load is not None:
        return f"steps={verdict.depth} {verdict.load}"
    if verdict.concurrency is None:
        return f"steps={verdict.depth} (all points pooled)"
    return f"steps={verdict.depth} C={verdict.concurrency}"


def _verdict_order(verdict: Verdict) -> tuple[int, int, int, str]:
    rank = VERDICT_ORDER.index(verdict.outcome) if verdict.outcome in VERDICT_ORDER else 99
    # A depth's pooled verdict after its points (and its open-loop points before it).
    concurrency = verdict.concurrency if verdict.concurrency is not None else 1 << 30
    if verdict.load is not None:
        concurrency = (1 << 30) - 1
    return rank, verdict.depth, concurrency, verdict.metric


def _verdict_figure(verdict: Verdict, value: float | None) -> str:
    if verdict.metric == DEPTH_METRIC:
        return "-" if value is None else f"{value:.3f}x baseline"
    return number(value, 2 if verdict.metric == "accept_length" else 1)


def _verdict_change(verdict: Verdict) -> str:
    if verdict.measured is None or not verdict.baseline:
        return "-"
    return relative_change(verdict.measured / verdict.baseline)


def _verdict_samples(verdict: Verdict) -> str:
    if not verdict.samples:
        return "-"
    values = ", ".join(_verdict_figure(verdict, value) for value in verdict.samples)
    return f"{len(verdict.samples)}: {values}"


def _confirmation(verdict: Verdict) -> str:
    if verdict.confirmed:
        return "confirmed by re-measuring"
    if verdict.remeasured:
        return "borderline, re-measured: not confirmed"
    return "not re-measured"


def verdict_row(verdict: Verdict) -> list[str]:
    """One verdict as a row of VERDICT_HEADER: the median and interval of the samples, the
    figure the gate judged (their geometric mean), floor, baseline, every sample, the noise the
    decision assumed and whether re-measuring confirmed it."""
    median = statistics.median(verdict.samples) if verdict.samples else None
    digits = 2 if verdict.metric == "accept_length" else 1
    return [
        _verdict_where(verdict),
        METRIC_LABELS.get(verdict.metric, verdict.metric),
        _verdict_figure(verdict, median),
        interval_text(verdict.interval, digits),
        _verdict_figure(verdict, verdict.measured),
        _verdict_figure(verdict, verdict.floor),
        _verdict_figure(verdict, verdict.baseline),
        _verdict_change(verdict),
        _verdict_samples(verdict),
        verdict.noise_source or "-",
        _confirmation(verdict),
    ]


def _verdict_table(verdicts: Sequence[Verdict]) -> str:
    return md_table(VERDICT_HEADER, [verdict_row(v) for v in verdicts])


def _folded(summary: str, body: str) -> str:
    # A blank line after <summary> lets GitHub render the markdown inside the toggle.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _refresh_commands(verdicts: Sequence[Verdict]) -> str:
    commands = list(dict.fromkeys(v.refresh_command for v in verdicts if v.refresh_command))
    if not commands:
        return ""
    block = "\n".join(commands)
    return f"After review, refresh the baseline:\n\n```\n{block}\n```"


def _outcome_name(outcome: str, count: int) -> str:
    shown = _SHOWN.get(outcome, outcome)
    return shown if count == 1 else _PLURALS.get(outcome, shown)


def _verdict_summary(verdicts: Sequence[Verdict]) -> str:
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.outcome] = counts.get(verdict.outcome, 0) + 1
    summary = ", ".join(
        f"{count} {_outcome_name(outcome, count)}" for outcome, count in counts.items()
    )
    return f"**{summary}**" if any(counts.get(outcome) for outcome in _FAILING) else summary


def _red_run(
    runs: Sequence[DepthRun],
    verdicts: Sequence[Verdict],
    ab: Sequence[AbComparison],
    exit_status: int | None,
    exit_reasons: Sequence[str],
    interrupted: str | None,
) -> list[str]:
    """Under a red run that no failing verdict explains: the exit status and why, else []."""
    status = exit_status
    if not status or any(v.outcome in _FAILING for v in verdicts):
        return []
    reasons: list[str] = []
    for run in sorted(runs, key=lambda run: run.depth):
        if run.failure:
            first = run.failure.splitlines()[0]
            prefix = f"steps={run.depth}"
            reasons.append(first if first.startswith(prefix) else f"{prefix}: {first}")
    for comparison in ab:
        message = comparison.message
        # An A/B depth's failure is its comparison's message, or its start.
        if comparison.outcome in _AB_RED and message and not any(r in message for r in reasons):
            reasons.append(message)
    reasons += exit_reasons
    if interrupted and not any(interrupted in r for r in reasons):
        reasons.append(interrupted)
    outcomes = {comparison.outcome for comparison in ab}
    if any(v.outcome == "no-baseline" for v in verdicts):
        tail = " on what it could not judge:"
    elif verdicts:
        tail = ", although no verdict failed:"
    elif outcomes & set(_AB_RED_VERDICTS):
        tail = ": its A/B verdict:"
    elif outcomes & set(_AB_GREEN_VERDICTS):
        tail = ", although no A/B verdict failed:"
    else:
        tail = "; no verdict was recorded:"
    head = f"**the run failed (exit status {status})**{tail}"
    lines = [f"- {reason}" for reason in dict.fromkeys(reasons)] or [
        f"- exit status {status}: {exit_status_meaning(status)}"
    ]
    return [head, "\n".join(lines)]


# What a red exit status says where nothing recorded says why: pytest's statuses (`specperf
# bench` exits 0 or 1 and records its reasons).
_EXIT_MEANINGS = {
    1: "a test failed: its pytest output says which",
    2: "it was interrupted",
    3: "an internal error ended it",
    4: "a usage error stopped it",
    5: "no tests ran",
}


def exit_status_meaning(status: int) -> str:
    """What a run's red exit status says of it, where no recorded reason does."""
    return _EXIT_MEANINGS.get(status, "its output says why")


def floor_lines(runs: Sequence[DepthRun]) -> list[str]:
    """Each depth's floor and where its width comes from (the calibration, the runner's
    history with --specperf-history, or the fixed tolerance): shown in the terminal and in
    report.md. The pooled floor where the depth was tested as a whole; else (a baseline
    without calibrated noise is judged point by point) the points' floors in one line, with
    the figure nearest its floor."""
    lines = []
    for run in runs:
        pooled = [v for v in run.verdicts if v.concurrency is None and v.load is None]
        for v in pooled:
            if v.floor is not None and v.measured is not None:
                lines.append(
                    f"gate floor: steps={v.depth}: {relative_change(v.floor)} vs baseline "
                    f"({v.outcome}, {relative_change(v.measured)}){bound_note(run)}; "
                    f"width: {v.noise_source}"
                )
        if not pooled and (line := _point_floors_line(run)):
            lines.append(line)
    return lines


_THROUGHPUT_LABELS = {"agg_tok_s": "agg tok/s", "per_req_tok_s": "per-req tok/s"}


def _point_floors_line(run: DepthRun) -> str | None:
    # (verdict, floor / baseline, measured / baseline, measured / floor) of each judged figure
    judged = [
        (v, v.floor / v.baseline, v.measured / v.baseline, v.measured / v.floor)
        for v in run.verdicts
        if v.metric in _THROUGHPUT_LABELS
        and v.concurrency is not None
        and v.floor
        and v.baseline
        and v.measured is not None
    ]
    if not judged:
        return None
    lowest = min(floor for _, floor, _, _ in judged)
    highest = max(floor for _, floor, _, _ in judged)
    floor = relative_change(lowest)
    if relative_change(highest) != floor:
        floor = f"{relative_change(highest)} to {floor}"
    nearest, _, change, _ = min(judged, key=lambda item: item[3])
    return (
        f"gate floor: steps={run.depth}, point by point: {floor} vs baseline for each of "
        f"{len(judged)} figures (nearest its floor: C={nearest.concurrency} "
        f"{_THROUGHPUT_LABELS[nearest.metric]}, {nearest.outcome}, {relative_change(change)})"
        f"{bound_note(run, nearest.concurrency)}; width: {nearest.noise_source}"
    )


def bound_note(run: DepthRun, concurrency: int | None = None) -> str:
    """`` at C=64 gpu-bound (GPU 95% busy, NVML)``: what set the pace at the gated points (or
    at ``concurrency`` only), where the samples said (empty where none did)."""
    parts = []
    for point in run.points:
        if point.bound is None or point.load is not None:
            continue
        if concurrency is not None and point.concurrency != concurrency:
            continue
        busy = f" (GPU {point.gpu.busy:.0%} busy, NVML)" if point.gpu is not None else ""
        parts.append(f"C={point.concurrency} {point.bound}{busy}")
    return f" at {', '.join(parts)}" if parts else ""


def verdict_markdown(
    runs: Sequence[DepthRun],
    *,
    ab: Sequence[AbComparison] = (),
    exit_status: int | None = None,
    exit_reasons: Sequence[str] = (),
    interrupted: str | None = None,
    exit_notes: Sequence[str] = (),
) -> str:
    """Regressions, then improvements (with the command that re-records the baseline), then
    passes (folded: there are many), each with its figures; what was not judged (its test
    fails too) comes right after the regressions, what was recorded last. A red run that no
    failing verdict explains says so first (never green, nor "no verdicts recorded"); a green
    one's ``exit_notes`` (an exploratory run's: what it did not judge, and why) come next."""
    verdicts = sorted((v for run in runs for v in run.verdicts), key=_verdict_order)
    red = _red_run(runs, verdicts, ab, exit_status, exit_reasons, interrupted)
    notes = [note.removeprefix("specperf: ") for note in exit_notes]
    if not verdicts:
        if red or notes:
            return "\n\n".join(["## Verdict", *red, *notes])
        if ab:
            return "## Verdict\n\nA/B mode: the verdict is the comparison of base and head, above"
        return "## Verdict\n\nno verdicts recorded"
    blocks = ["## Verdict", *red, *notes, _verdict_summary(verdicts)]
    floors = floor_lines(runs)
    if floors:
        blocks.append("\n".join(f"- {line}" for line in floors))
    for outcome in dict.fromkeys((*VERDICT_ORDER, *(v.outcome for v in verdicts))):
        group = [v for v in verdicts if v.outcome == outcome]
        if not group:
            continue
        if outcome not in _FIGURE_GROUPS:
            title = _MESSAGE_GROUPS.get(outcome, outcome)
            rows = [
                [_verdict_where(v), METRIC_LABELS.get(v.metric, v.metric), v.message] for v in group
            ]
            blocks += [f"### {title} ({len(group)})", md_table(["point", "metric", "why"], rows)]
            continue
        blocks.append(f"### {_FIGURE_GROUPS[outcome]} ({len(group)})")
        if outcome == "pass":
            count = f"{len(group)} {'pass' if len(group) == 1 else _PLURALS['pass']}"
            blocks.append(_folded(count, _verdict_table(group)))
            continue
        blocks.append(_verdict_table(group))
        if outcome == "regression":
            messages = "\n".join(f"- {v.message}" for v in group if v.message)
            blocks.append(_folded("what the failing tests said", messages) if messages else "")
        else:
            blocks.append(_refresh_commands(group))
    return "\n\n".join(block for block in blocks if block)
