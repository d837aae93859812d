"""Speculation's own nightly series: where it stops paying, and the recommended schedule.

These are categories, not figures (C=16 or C=32; "steps 3 up to C=8, then 1"), read from
each run's recommendation (gate/recommend.py, stored whole in the run's row). A change is
reported when the new value holds for ``min_size`` nights in a row after at least as many
nights of the old one, so one noisy night that moves a boundary is not a change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_specperf.history.series import Night, night_of


@dataclass(frozen=True)
class CategoryChange:
    series: str  # e.g. "steps 3 over the control (agg_tok_s)"
    night: Night  # the first night of the new value
    before: str
    after: str

    @property
    def summary(self) -> str:
        return (
            f"from {self.night.date} ({self.night.label}), {self.series}: "
            f"{self.after} instead of {self.before}"
        )


def _stops_paying_text(concurrency: int | None) -> str:
    return "at no C measured" if concurrency is None else f"at C={concurrency}"


def _schedule_text(ranges: list[dict[str, Any]]) -> str:
    parts = []
    for item in ranges:
        upper = item.get("max_concurrency")
        span = (
            f"C={item['min_concurrency']}+"
            if upper is None
            else (f"C={item['min_concurrency']}-{upper}")
        )
        parts.append(f"steps {item['depth']} at {span}")
    return ", ".join(parts) or "none"


def categories(run: Mapping[str, Any]) -> dict[str, str]:
    """One run's speculation categories by series name (empty: no recommendation)."""
    raw = run.get("recommendation_json")
    if not raw:
        return {}
    recommendation = json.loads(raw)
    found: dict[str, str] = {}
    for item in recommendation.get("stops_paying", []):
        if item.get("shallower") != 0:
            continue
        name = f"steps {item['deeper']} ({item['metric']}) stops paying"
        found[name] = _stops_paying_text(item.get("concurrency"))
    found[f"the recommended schedule ({recommendation.get('metric')}) is"] = _schedule_text(
        recommendation.get("schedule", [])
    )
    return found


def category_changes(runs: Iterable[Mapping[str, Any]], min_size: int = 2) -> list[CategoryChange]:
    """Persistent changes of every speculation category over the runs (oldest first)."""
    by_series: dict[str, list[tuple[Night, str]]] = {}
    for run in runs:
        for name, value in categories(run).items():
            by_series.setdefault(name, []).append((night_of(run), value))
    changes: list[CategoryChange] = []
    for name, values in sorted(by_series.items()):
        settled: str | None = None  # the value that held for min_size nights, last
        index = 0
        while index < len(values):
            end = index
            while end < len(values) and values[end][1] == values[index][1]:
                end += 1
            value = values[index][1]
            if end - index >= min_size:
                if settled is not None and value != settled:
                    changes.append(CategoryChange(name, values[index][0], settled, value))
                settled = value
            index = end
    return changes
