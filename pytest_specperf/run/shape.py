"""A run's shape for its time estimate: how many boots and sweeps each depth takes.

One depth measured alone (``depth_shape``) or, in A/B mode, in pairs (run/ab/budget.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_specperf.config.settings import Settings


@dataclass(frozen=True)
class RunShape:
    sweeps_per_depth: int  # each with its warm-up
    boots_per_depth: int
    # The same run ending at its earliest possible verdict (A/B: the first look), if shorter.
    first_look: Settings | None = None
    # Shorter runs of this shape, longest first: (the option that makes it, its settings).
    shorter: tuple[tuple[str, Settings], ...] = ()


def depth_shape(settings: Settings) -> RunShape:
    """Each depth booted once per calibration boot (once if not calibrating), or attached to
    a given server once, without a boot."""
    if settings.url is not None:
        return RunShape(sweeps_per_depth=1, boots_per_depth=0)
    sweeps = settings.calibrate_boots if settings.calibrate else 1
    return RunShape(sweeps_per_depth=sweeps, boots_per_depth=sweeps)
