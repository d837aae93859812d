"""How much a runner's runs differ from one another: the history store's figures, as plain data.

The history store (history/spread.py) reads earlier complete runs of one profile, hardware key,
workload and depth; this module turns their figures into one spread and carries it to the gate
(gate/decision.py, gate/ab/), which never imports history/. Pure: no I/O.

Robust to a single bad night: a run's level is the median over its points of log(figure /
that point's median over the runs), and the spread is the median absolute deviation of the
levels, scaled by 1.4826 so that it reads as a standard deviation for normal noise
(``robust_spread``). One very slow night moves a standard deviation a long way and the MAD
hardly at all (docs/explanation/gate.md, "The runner's spread from the history store").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Fewer earlier runs than this say nothing reliable about a spread (a MAD of 3 values is one
# of them): the gate keeps its calibration alone.
MIN_HISTORY_RUNS = 5
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class RunnerSpread:
    """The spread of one depth's throughput between earlier runs on this runner (log scale).

    ``spread``: the standard deviation of a run's level around the runner's typical level
    (robust: MAD x 1.4826); ``runs``: how many runs it comes from; ``pair_spread``: where
    earlier A/B comparisons recorded their pairs' changes, the standard deviation of those
    (None: none recorded, the A/B prior takes sqrt(2) x ``spread``); ``pairs``: how many;
    ``pairs_placement``: the server CPU placement those pairs were measured under, where the
    store said it (None: not said); ``where``: what the runs were, for the report ("10 runs
    of <profile> on <hardware>").
    """

    spread: float
    runs: int
    where: str
    pair_spread: float | None = None
    pairs: int = 0
    pairs_placement: str | None = None

    @property
    def dof(self) -> int:
        """The degrees of freedom the spread is taken to carry (runs - 1)."""
        return max(self.runs - 1, 1)

    @property
    def between_runs(self) -> bool:
        """Whether enough earlier runs (not only A/B pairs) say how much runs differ."""
        return self.runs >= MIN_HISTORY_RUNS

    def text(self) -> str:
        return f"{self.runs} history runs (spread {self.spread:.1%}, MAD)"


def robust_spread(values: Sequence[float]) -> float:
    """The MAD of ``values`` about their median, scaled to read as a standard deviation."""
    center = statistics.median(values)
    return MAD_TO_SD * statistics.median(abs(v - center) for v in values)


def run_levels(runs: Sequence[Mapping[int, float]]) -> list[float]:
    """Each run's level: the median over its points (by concurrency) of log(figure / that
    point's median over the runs). Points only some runs measured count where present."""
    by_point: dict[int, list[float]] = {}
    for run in runs:
        for concurrency, value in run.items():
            if value > 0 and math.isfinite(value):
                by_point.setdefault(concurrency, []).append(math.log(value))
    centers = {c: statistics.median(v) for c, v in by_point.items()}
    levels = []
    for run in runs:
        parts = [
            math.log(value) - centers[c]
            for c, value in run.items()
            if value > 0 and math.isfinite(value)
        ]
        if parts:
            levels.append(statistics.median(parts))
    return levels


def runner_spread(
    runs: Sequence[Mapping[int, float]],
    where: str,
    pair_changes: Sequence[float] = (),
) -> RunnerSpread | None:
    """The spread of earlier runs' figures (each a mapping concurrency -> tok/s), or None with
    fewer than MIN_HISTORY_RUNS runs. ``pair_changes``: earlier A/B pairs' log changes."""
    levels = run_levels(runs)
    pair_spread = robust_spread(pair_changes) if len(pair_changes) >= MIN_HISTORY_RUNS else None
    if len(levels) < MIN_HISTORY_RUNS:
        if pair_spread is None:
            return None
        # Earlier A/B pairs alone: a prior for the next A/B, nothing for the baseline gate
        # (``between_runs`` is False).
        return RunnerSpread(
            spread=pair_spread / math.sqrt(2),
            runs=len(levels),
            where=where,
            pair_spread=pair_spread,
            pairs=len(pair_changes),
        )
    return RunnerSpread(
        spread=robust_spread(levels),
        runs=len(levels),
        where=where,
        pair_spread=pair_spread,
        pairs=len(pair_changes) if pair_spread is not None else 0,
    )
