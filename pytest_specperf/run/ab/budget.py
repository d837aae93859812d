"""A/B mode's share of the run's time estimate: every pair --specperf-ab-max-pairs allows."""

from __future__ import annotations

from dataclasses import replace

from pytest_specperf.config.settings import BaseSide, Settings
from pytest_specperf.gate.ab.estimate import AbSettings
from pytest_specperf.run.shape import RunShape

# The A/B gate's first look: no depth decides in fewer pairs.
FIRST_LOOK = AbSettings.first_look


def ab_shape(settings: Settings, base: BaseSide) -> RunShape:
    """Two sweeps per pair, base and head; each side a boot unless reached by URL. Booted
    together (--specperf-ab-boot-together) a pair's two boots overlap; counted one after the
    other all the same, an estimate on the long side."""
    pairs = settings.ab_max_pairs
    booted_sides = (settings.url is None) + (base.url is None)
    return RunShape(
        sweeps_per_depth=2 * pairs,
        boots_per_depth=booted_sides * pairs,
        first_look=replace(settings, ab_max_pairs=FIRST_LOOK) if pairs > FIRST_LOOK else None,
        shorter=tuple(
            (f"--specperf-ab-max-pairs {n}", replace(settings, ab_max_pairs=n))
            for n in range(pairs - 1, FIRST_LOOK - 1, -1)
        ),
    )
