"""A/B figures for the tests of the A/B outputs (report, comment)."""

from __future__ import annotations

from typing import Any

from pytest_specperf.results.schema import AbChange


def slower_point(**fields: Any) -> AbChange:
    """C=4 5% slower ([-7%, -3%]), nearly all of it step time; ``fields`` add or override."""
    figures: dict[str, Any] = {
        "concurrency": 4,
        "change": -0.05,
        "low": -0.07,
        "high": -0.03,
        "acceptance_change": -0.001,
        "step_time_change": -0.049,
    }
    return AbChange(**{**figures, **fields})
