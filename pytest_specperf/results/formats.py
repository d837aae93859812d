"""How a figure reads in every table of a run, in the terminal and in report.md alike."""

from __future__ import annotations

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


def millis(seconds: float | None) -> str:
    """``0.0421`` s -> ``42`` (ms)."""
    return MISSING if seconds is None else f"{seconds * 1000:.0f}"


def ratio(value: float | None) -> str:
    """``1.875`` -> ``1.88x``."""
    return MISSING if value is None else f"{value:.2f}x"
