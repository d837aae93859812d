"""The highest request rate a depth serves within the SLOs: bracket, then bisect.

As vLLM's ``bench sweep serve_sla``: from the rates measured already (the rate points), rates
are doubled until one misses the SLOs (or halved until one meets them), then the bracket
between the highest rate that met and the lowest that missed is bisected (geometrically)
until its ends are within ``resolution`` of each other or the probes allowed are spent. A
rate meets the SLOs when at least the SLO's attainment of its requests did (goodput.py).
Pure: the caller measures each probe this returns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_specperf.results.schema import RateProbe, RateSearch

MAX_PROBES = 6
RESOLUTION = 0.1
# Halving stops below the lowest measured rate divided by this: nothing is served there.
LOWEST_FACTOR = 16.0


def bracket(probes: Sequence[RateProbe]) -> tuple[float | None, float | None]:
    """(highest rate that met below the lowest miss, lowest rate that missed)."""
    missed = [p.rate for p in probes if not p.meets_slo]
    high = min(missed) if missed else None
    met = [p.rate for p in probes if p.meets_slo and (high is None or p.rate < high)]
    return (max(met) if met else None), high


def next_rate(
    probes: Sequence[RateProbe],
    *,
    searched: int,
    max_probes: int = MAX_PROBES,
    resolution: float = RESOLUTION,
) -> tuple[float | None, str]:
    """The next rate to measure (None: done) and why the search stops or goes on.

    ``searched``: probes measured by the search so far (the rate points do not count).
    """
    if not probes:
        return None, "no rate measured"
    low, high = bracket(probes)
    if low is not None and high is not None and high / low <= 1 + resolution:
        return None, "resolution"
    if searched >= max_probes:
        return None, "probes"
    if low is None:
        lowest = min(p.rate for p in probes)
        floor = max(p.rate for p in probes) / LOWEST_FACTOR
        if lowest / 2 < floor:
            return None, "no rate met"
        return lowest / 2, "halving"
    if high is None:
        return low * 2, "doubling"
    return math.sqrt(low * high), "bisecting"


def search_result(probes: Sequence[RateProbe], stopped_by: str) -> RateSearch:
    low, high = bracket(probes)
    return RateSearch(
        max_rate=low,
        low=low,
        high=high,
        probes=sorted(probes, key=lambda p: p.rate),
        stopped_by=stopped_by,
    )
