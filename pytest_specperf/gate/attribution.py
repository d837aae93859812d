"""Why throughput moved: the acceptance part and the step-time part of a change.

Pure functions, no I/O. Decode throughput is tokens per verify step times verify steps per
second: tok/s = accept length x steps/s. On the log scale the change of tok/s is the change of
accept length plus the change of steps per second, so a measured change splits exactly into
an acceptance part (the drafts got worse or better) and a step-time part (each verify step got
slower or faster: kernels, scheduling, the machine). A part's interval comes from wherever
its figures were measured (pairs of boots in A/B mode, the run against its baseline file
otherwise); a part with no interval says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_specperf.results.formats import STEP_RATE, change_interval, relative_change
from pytest_specperf.results.schema import Verdict

Part = tuple[float, float | None, float | None]  # log change, interval low, interval high


@dataclass(frozen=True)
class Attribution:
    """A log change of tok/s and its two parts, each with an interval (log scale; None: none).

    ``acceptance`` is None when either side has no accept length (no speculation, or a
    server that does not report it): then the change cannot be split.
    """

    total: Part
    acceptance: Part | None
    step_time: Part | None
    # The draft position whose acceptance rate moved most: (position, base rate, head rate).
    position: tuple[int, float, float] | None = None
    label: str = "agg"

    @property
    def cause(self) -> str | None:
        """The part that moved more: "acceptance" or "step time" (None: not split)."""
        if self.acceptance is None or self.step_time is None:
            return None
        return "acceptance" if abs(self.acceptance[0]) >= abs(self.step_time[0]) else "step time"

    def text(self) -> str:
        """E.g. ``agg -8.1% [-9.0%, -7.2%]: acceptance -7.6% (position 3: 0.61 -> 0.52),
        verify steps/s -0.5%`` (the step part named by the rate it is a change of: -0.5% is
        slower steps)."""
        line = f"{self.label} {_part(self.total)}"
        if self.acceptance is None or self.step_time is None:
            return line + ": not split (no accept length on both sides)"
        acceptance = f"acceptance {_part(self.acceptance)}"
        if self.position is not None:
            position, before, after = self.position
            acceptance += f" (position {position}: {before:.2f} -> {after:.2f})"
        return f"{line}: {acceptance}, {STEP_RATE} {_part(self.step_time)}"


def percent(log_change: float) -> float:
    """A log change as a fractional change (exp(x) - 1)."""
    return math.exp(log_change) - 1


def _part(part: Part) -> str:
    change, low, high = part
    text = relative_change(math.exp(change))
    if low is not None and high is not None:
        text += f" {change_interval(math.exp(low), math.exp(high))}"
    return text


def moved_position(base: Sequence[float], head: Sequence[float]) -> tuple[int, float, float] | None:
    """The draft position (1-based) whose acceptance rate changed most between the sides;
    None unless both sides have per-position acceptance."""
    if not base or not head:
        return None
    positions = max(len(base), len(head))
    padded_base = [*base, *([0.0] * (positions - len(base)))]
    padded_head = [*head, *([0.0] * (positions - len(head)))]
    index = max(range(positions), key=lambda i: abs(padded_head[i] - padded_base[i]))
    return index + 1, padded_base[index], padded_head[index]


def split_against_baseline(
    change: float,
    interval: tuple[float, float] | None,
    *,
    accept_length: float | None,
    baseline_accept_length: float | None,
    positions: Sequence[float] = (),
    baseline_positions: Sequence[float] = (),
    label: str = "agg",
) -> Attribution:
    """The attribution of a change measured against a baseline file.

    The baseline records one accept length for the depth (run-scoped, no samples), so the
    acceptance part is a difference of two figures with no interval of its own; the step-time
    part carries the throughput change's interval, shifted by the acceptance part.
    """
    low, high = interval if interval is not None else (None, None)
    total: Part = (change, low, high)
    if not accept_length or not baseline_accept_length:
        return Attribution(total, None, None, label=label)
    acceptance = math.log(accept_length / baseline_accept_length)
    step = change - acceptance
    step_part: Part = (
        step,
        None if low is None else low - acceptance,
        None if high is None else high - acceptance,
    )
    return Attribution(
        total,
        (acceptance, None, None),
        step_part,
        position=moved_position(baseline_positions, positions),
        label=label,
    )


_THROUGHPUT_LABELS = {"agg_tok_s": "agg", "per_req_tok_s": "per-req", "throughput": "throughput"}


def explain_verdicts(
    verdicts: Sequence[Verdict],
    *,
    accept_length: float | None,
    baseline_accept_length: float | None,
    positions: Sequence[float] = (),
    baseline_positions: Sequence[float] = (),
) -> None:
    """Add to each throughput regression or improvement of the baseline gate why it moved.

    The accept lengths are run-scoped (the baseline file records no per-point ones), so every
    point of a depth shares the acceptance part; the change's interval is the measured
    figure's own interval over the baseline figure (the pooled test has none of its own).
    """
    for verdict in verdicts:
        label = _THROUGHPUT_LABELS.get(verdict.metric)
        if label is None or verdict.outcome not in ("regression", "improvement"):
            continue
        if not verdict.measured or not verdict.baseline:
            continue
        change = math.log(verdict.measured / verdict.baseline)
        interval = None
        if verdict.interval is not None:
            interval = (
                math.log(verdict.interval.low / verdict.baseline),
                math.log(verdict.interval.high / verdict.baseline),
            )
        found = split_against_baseline(
            change,
            interval,
            accept_length=accept_length,
            baseline_accept_length=baseline_accept_length,
            positions=positions,
            baseline_positions=baseline_positions,
            label=label,
        )
        verdict.message += f"; why: {found.text()}"
