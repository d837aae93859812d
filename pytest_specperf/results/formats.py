"""How a figure reads in every table of a run, in the terminal and in report.md alike."""

from __future__ import annotations

from collections.abc import Sequence

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


def number(value: float | None, digits: int = 1) -> str:
    """``1234.56`` -> ``1,234.6``."""
    return MISSING if value is None else f"{value:,.{digits}f}"


def count(value: int | None) -> str:
    """``28951187`` -> ``28,951,187``."""
    return MISSING if value is None else f"{value:,}"


def signed_percent(value: float | None) -> str:
    """``-0.0512`` -> ``-5.1%``: a change, its sign always shown."""
    return MISSING if value is None else f"{value:+.1%}"


def millis(seconds: float | None) -> str:
    """``0.0421`` s -> ``42`` (ms)."""
    return MISSING if seconds is None else f"{seconds * 1000:.0f}"


def counted(amount: int, noun: str) -> str:
    """``1, "round"`` -> ``1 round``; ``3, "round"`` -> ``3 rounds``."""
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


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
