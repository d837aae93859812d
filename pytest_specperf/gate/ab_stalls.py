"""A sample that stalled: left out of an A/B's figures, and said where.

On the lent H200 (docs/runs/2026-12-05-bounds-slow10-h200) the first sample of a seed-class A/B
read 1,674 tok/s beside its boot's 2,786 and 2,955: its requests waited 1.3 s for a first token
(0.25-0.56 s in every other sample). That one sample moved its boot's level by 9% and made the
comparison undecided ([-17.5, +30.6]%), though the 35 other samples agreed within a few
percent. A stall of the server or the machine is not what a change of the code does to every
sample; it is left out, and the verdict says so.

The rule, per point: each sample's distance from the other samples of its boot (log scale, the
median of the others: a stall cannot hide itself), and the point's typical distance over every
boot of the comparison (median absolute, x 1.4826 to read as a standard deviation). A sample
further than STALL_SPREADS typical distances, and further than STALL_FLOOR and the minimum
effect the A/B is after, is left out; at most one per boot and point, only where the boot
took 3 samples or more (with 2 neither can be told to be the odd one), so each boot keeps its
majority. On the simulator's noise it left out nothing in 2,000 comparisons per cell
(lab/studies/ab_stall_rule.py; docs/explanation/ab-gating.md has the table); a stall of a
second in a sample of a few seconds is far beyond both bounds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_specperf.gate.ab_pairs import BootPoint, Pair

STALL_SPREADS = 5.0
# And never closer than this (log scale: 30% under or 42% over): within-boot noise is not one normal
# spread (the simulator's segments, a GPU's clocks), and a sample 8% off its boot's others
# is noise a gate must carry, not a stall (lab/studies/ab_stall_rule.py).
STALL_FLOOR = 0.35
MAD_TO_SD = 1.4826
# Fewer distances than this say nothing of a point's typical one (3 boots of 3 samples).
MIN_DISTANCES = 9
MIN_SAMPLES = 3


@dataclass(frozen=True)
class LeftOut:
    """One sample left out: where it was, what it read, and what its boot's others read."""

    pair: int
    side: str
    concurrency: int
    value: float
    others_median: float

    def text(self) -> str:
        away = self.value / self.others_median - 1
        return (
            f"pair {self.pair} {self.side} C={self.concurrency}: {self.value:,.1f} tok/s, "
            f"{abs(away):.0%} {'under' if away < 0 else 'over'} its boot's other samples"
        )


def _distances(values: Sequence[float]) -> list[float]:
    """Each sample's log distance from the median of the other samples of its boot."""
    logs = [math.log(v) for v in values]
    return [x - statistics.median(logs[:i] + logs[i + 1 :]) for i, x in enumerate(logs)]


def without_stalls(pairs: Sequence[Pair], min_effect: float) -> tuple[list[Pair], list[LeftOut]]:
    """The pairs with every stalled sample left out (see above), and those samples."""
    boots = [
        (number, side_name, side)
        for number, pair in enumerate(pairs, start=1)
        for side_name, side in (("base", pair.base), ("head", pair.head))
    ]
    typical: dict[int, float] = {}
    by_point: dict[int, list[float]] = {}
    for _, _, side in boots:
        for c, point in side.items():
            if len(point.tok_s) >= MIN_SAMPLES and all(v > 0 for v in point.tok_s):
                by_point.setdefault(c, []).extend(abs(d) for d in _distances(point.tok_s))
    for c, distances in by_point.items():
        if len(distances) >= MIN_DISTANCES:
            typical[c] = MAD_TO_SD * statistics.median(distances)
    if not typical:
        return list(pairs), []
    floor = max(-math.log(1 - min_effect), STALL_FLOOR)
    left_out: list[LeftOut] = []
    cleaned: dict[tuple[int, str], dict[int, BootPoint]] = {}
    for number, side_name, side in boots:
        kept: dict[int, BootPoint] = {}
        for c, point in side.items():
            kept[c] = point
            if c not in typical or len(point.tok_s) < MIN_SAMPLES:
                continue
            distances = _distances(point.tok_s)
            worst = max(range(len(distances)), key=lambda i: abs(distances[i]))
            if abs(distances[worst]) <= max(STALL_SPREADS * typical[c], floor):
                continue
            others = [v for i, v in enumerate(point.tok_s) if i != worst]
            kept[c] = replace(point, tok_s=others)
            left_out.append(
                LeftOut(number, side_name, c, point.tok_s[worst], statistics.median(others))
            )
        cleaned[(number, side_name)] = kept
    if not left_out:
        return list(pairs), []
    return [
        Pair(base=cleaned[(n, "base")], head=cleaned[(n, "head")]) for n in range(1, len(pairs) + 1)
    ], left_out


def left_out_text(left_out: Sequence[LeftOut]) -> str:
    """The samples left out, in one clause (empty: none)."""
    if not left_out:
        return ""
    what = "; ".join(item.text() for item in left_out)
    return f"{len(left_out)} stalled sample(s) left out ({what})"
