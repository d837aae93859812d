"""How a figure reads in every table of a run, in the terminal and in report.md alike, and
how a relative change reads wherever one is shown (the PR comment and the history too)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_specperf.results.schema import Interval
from pytest_specperf.results.stats import is_min_max

# The names the metrics go by in tables and plots.
METRIC_LABELS = {
    "throughput": "throughput (agg and per-req)",
    "agg_tok_s": "agg tok/s",
    "per_req_tok_s": "per-req tok/s",
    "accept_length": "accept length",
    "max_total_num_tokens": "KV tokens",
    "max_running_requests": "max running requests",
}
MISSING = "-"
# The step part of a throughput change is a change of the verify-step rate: -19.3% is slower
# steps, so it is named by the rate (a "step time" of -19.3% would read as faster steps).
STEP_RATE = "verify steps/s"


def number(value: float | None, digits: int = 1) -> str:
    """``1234.56`` -> ``1,234.6``."""
    return MISSING if value is None else f"{value:,.{digits}f}"


def count(value: int | None) -> str:
    """``28951187`` -> ``28,951,187``."""
    return MISSING if value is None else f"{value:,}"


# The words of a relative change's direction, (up, down), for relative_change.
BETTER_WORSE = ("better", "worse")


def relative_change(ratio: float | None, words: tuple[str, str] | None = None) -> str:
    """The one way a relative change reads, from the ratio measured / reference (a log ratio is
    not a percent: exponentiate it first). ``1.893`` -> ``+89.3%``; with the words of its
    direction, ``BETTER_WORSE`` -> ``89.3% better``, ``0.807`` and ``("faster", "slower")`` ->
    ``19.3% slower``."""
    if ratio is None or not math.isfinite(ratio) or ratio < 0:
        return MISSING
    change = ratio - 1
    if words is None:
        return f"{change:+.1%}"
    up, down = words
    return f"{abs(change):.1%} {up if change >= 0 else down}"


def ratio_of(fraction: float | None) -> float | None:
    """A change stored as a fraction (measured / reference - 1, as results.json keeps the A/B
    changes and the history its steps) as the ratio relative_change reads."""
    return None if fraction is None else 1 + fraction


def change_interval(low: float | None, high: float | None) -> str:
    """An interval of a relative change from its bounds' ratios: ``[-9.0%, -7.2%]``."""
    if low is None or high is None:
        return MISSING
    return f"[{relative_change(low)}, {relative_change(high)}]"


def samples_summary(samples: int, median: float, interval: Interval | None) -> str:
    """The samples behind a judged figure: ``one sample, 929.6``, or ``geometric mean of 5
    samples, median 1,162.3, 95% interval 1,150.0-1,170.2`` (``min-max`` for few samples)."""
    if samples == 1:
        text = f"one sample, {median:,.1f}"
    else:
        text = f"geometric mean of {samples} samples, median {median:,.1f}"
    if interval is not None:
        what = "min-max" if is_min_max(interval) else f"{interval.level:.0%} interval"
        text += f", {what} {interval.low:,.1f}-{interval.high:,.1f}"
    return text


def millis(seconds: float | None) -> str:
    """``0.0421`` s -> ``42`` (ms)."""
    return MISSING if seconds is None else f"{seconds * 1000:.0f}"


def counted(amount: int, noun: str) -> str:
    """``1, "round"`` -> ``1 round``; ``3, "round"`` -> ``3 rounds``."""
    return f"{amount} {noun_for(amount, noun)}"


def noun_for(amount: int, noun: str) -> str:
    """The noun a count of ``amount`` takes: ``1, "series page"`` -> ``series page``, ``2`` ->
    ``series pages`` (where the count is shown apart from its noun)."""
    return noun if amount == 1 else f"{noun}s"


def ratio(value: float | None) -> str:
    """``1.875`` -> ``1.88x``."""
    return MISSING if value is None else f"{value:.2f}x"


# Probes of a server's vCPU further apart than this say the runner's cores do not all run at
# one speed (ten 0.1 s probes of one idle vCPU of a 2-core CI machine: 4.5-5.3% apart).
UNEVEN_CORE_SPEEDS = 1.2


def core_speeds_note(speeds: Sequence[float], over: str) -> str:
    """``its vCPU ran a single-thread probe at 4.5-7.2 M loops/s over 12 samples, the fastest
    1.6x the slowest: this runner's cores do not all run at one speed``"""
    low, high = min(speeds), max(speeds)
    span = f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}"
    text = f"its vCPU ran a single-thread probe at {span} M loops/s over {over}"
    if low > 0 and high >= UNEVEN_CORE_SPEEDS * low:
        text += (
            f", the fastest {high / low:.1f}x the slowest: this runner's cores do not all run "
            "at one speed"
        )
    return text
