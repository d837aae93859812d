"""The warm-up of a boot: every concurrency of the sweep, in rounds, until a round stops moving.

A real GPU runs the first prefill or decode step of a new shape (batch size, sequence length)
slowly: kernels are compiled, autotuned or captured then. So the first sweep after a boot
reads low (docs/explanation/warm-up.md has the measurements), even when every point begins
with a few short requests at its own concurrency: short requests never reach the sequence
lengths (nor the batch sizes between points) that a measured point runs.

So, before the first measured sample of a boot, each round measures every concurrency of the
sweep exactly as a sample does (the workload's prompts and full max_new_tokens, its N requests
and minimum length, so that the closed loop's refills reach the same batch states), discarding
the figures, and the rounds go on until two consecutive rounds agree within a tolerance at
every concurrency, or a bound (rounds, seconds) is reached. Rounds of 2C requests without the
minimum length were tried first, and left the first measured sample still off the later
ones (docs/explanation/warm-up.md). Each round's
aggregate tok/s is recorded (results/schema.py ``Warmup``), so a report shows what the warm-up
saw.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_specperf.measure.point import measure_point
from pytest_specperf.measure.workload import Workload
from pytest_specperf.results.schema import Warmup, WarmupStop

DEFAULT_MAX_ROUNDS = 3
DEFAULT_TOLERANCE = 0.05


@dataclass(frozen=True)
class WarmupPlan:
    """How long the warm-up of a boot may go on. ``max_rounds`` 0: no warm-up of the boot."""

    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_seconds: float | None = None
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def enabled(self) -> bool:
        return self.max_rounds > 0


def settled(previous: Sequence[float], current: Sequence[float], tolerance: float) -> bool:
    """Every concurrency's figure moved by at most ``tolerance`` (relative) between rounds."""
    if not previous or len(previous) != len(current):
        return False
    for before, now in zip(previous, current, strict=True):
        if before <= 0 or now <= 0 or abs(now / before - 1.0) > tolerance:
            return False
    return True


async def warm_up(
    base_url: str,
    workload: Workload,
    concurrencies: Sequence[int],
    plan: WarmupPlan,
    *,
    model: str = "default",
    api_key: str | None = None,
    client_procs: int | None = None,
) -> Warmup:
    """Warm-up rounds over ``concurrencies`` (ascending) until settled or a bound; what it saw.

    A round is started only when the one before did not settle, fewer than ``max_rounds`` ran
    and (with ``max_seconds``) the time spent plus the last round's length fits in the bound.
    """
    levels = sorted(set(concurrencies))
    rounds: list[list[float]] = []
    stopped_by: WarmupStop = "rounds"
    begun = time.monotonic()
    last_round_s = 0.0
    while len(rounds) < plan.max_rounds:
        spent = time.monotonic() - begun
        if rounds and plan.max_seconds is not None and spent + last_round_s > plan.max_seconds:
            stopped_by = "seconds"
            break
        round_begun = time.monotonic()
        figures: list[float] = []
        for level in levels:
            point = await measure_point(
                base_url,
                workload,
                level,
                model=model,
                api_key=api_key,
                warmup=False,
                client_procs=client_procs,
            )
            figures.append(round(point.agg_tok_s, 3))
        last_round_s = time.monotonic() - round_begun
        rounds.append(figures)
        if len(rounds) >= 2 and settled(rounds[-2], rounds[-1], plan.tolerance):
            stopped_by = "settled"
            break
    return Warmup(
        seconds=round(time.monotonic() - begun, 3),
        rounds=len(rounds),
        settled=stopped_by == "settled",
        stopped_by=stopped_by,
        concurrency=levels,
        agg_tok_s=rounds,
        tolerance=plan.tolerance,
        max_rounds=plan.max_rounds,
        max_seconds=plan.max_seconds,
    )
