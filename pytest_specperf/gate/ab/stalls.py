"""A sample that stalled: left out of an A/B's figures, and said where.

One sample far slower than its boot's others can move a boot's level enough to leave a
comparison undecided while every other sample agrees (docs/explanation/ab-gating.md, "A
sample that stalled", tells the run where it happened). A stall of the machine strikes base
and head alike; one a change causes strikes head. So a stalled sample (one slower than its
boot's others: a stall cannot make a sample faster) is left out, and named, on base's side
always (that only makes head look worse, never hides a regression) and on head's side only as
many times as base's boots stalled too; head's other stalls are kept and named as kept: a
change may be causing them.

The rule, per point: each sample's distance from the other samples of its boot (log scale, the
median of the others: a stall cannot hide itself), and the point's typical distance over every
boot of the comparison (median absolute, x 1.4826 to read as a standard deviation). A sample
slower than its boot's others by more than STALL_SPREADS typical distances, and by more than
STALL_FLOOR and the minimum effect the A/B is after, is a stall; at most one per boot and
point, only where the boot took 3 samples or more (with 2 neither can be told to be the odd
one), so each boot keeps its majority. The set is worked out afresh at every look, from all
the pairs so far. On the simulator's noise the rule finds no stall where there is none
(docs/explanation/ab-gating.md has the table); a stall of a second in a sample of a few
seconds is far beyond both bounds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_specperf.gate.ab.estimate import BootPoint, Pair
from pytest_specperf.results.formats import relative_change
from pytest_specperf.results.runner_spread import MAD_TO_SD

Side = Literal["base", "head"]

STALL_SPREADS = 5.0
# Never closer than this either (log scale: 30% under its boot's others): within-boot noise is not
# one normal spread (the simulator's segments, a GPU's clocks), and lower floors left out
# samples of plain noise.
STALL_FLOOR = 0.35
# Fewer distances than this say nothing of a point's typical one (3 boots of 3 samples).
MIN_DISTANCES = 9
MIN_SAMPLES = 3


@dataclass(frozen=True)
class Stall:
    """One stalled sample: where it was, what it read, and what its boot's others read."""

    pair: int
    side: Side
    concurrency: int
    value: float
    others_median: float
    distance: float  # log distance from the others' median (negative: slower)

    def text(self) -> str:
        under = relative_change(self.value / self.others_median, ("over", "under"))
        return (
            f"pair {self.pair} {self.side} C={self.concurrency}: {self.value:,.1f} tok/s, "
            f"{under} its boot's other samples"
        )


@dataclass(frozen=True)
class Stalls:
    """The stalls found at a look: those left out of the figures and those kept in them."""

    left_out: tuple[Stall, ...] = ()
    kept: tuple[Stall, ...] = ()

    def text(self) -> str:
        """The stalls in one clause (empty: none)."""
        parts = []
        if self.left_out:
            what = "; ".join(item.text() for item in self.left_out)
            parts.append(f"{len(self.left_out)} stalled sample(s) left out ({what})")
        if self.kept:
            what = "; ".join(item.text() for item in self.kept)
            parts.append(
                f"{len(self.kept)} stalled sample(s) of head kept ({what}): head's boots "
                "stalled more often than base's, which a change can cause"
            )
        return "; ".join(parts)


def _usable(values: Sequence[float]) -> bool:
    return len(values) >= MIN_SAMPLES and all(v > 0 and math.isfinite(v) for v in values)


def _distances(values: Sequence[float]) -> list[float]:
    """Each sample's log distance from the median of the other samples of its boot."""
    logs = [math.log(v) for v in values]
    return [x - statistics.median(logs[:i] + logs[i + 1 :]) for i, x in enumerate(logs)]


def _judged(pairs: Sequence[Pair]) -> list[tuple[int, Side, int, BootPoint]]:
    """Every boot's points that the comparison judges (measured on both sides of the pair)."""
    found: list[tuple[int, Side, int, BootPoint]] = []
    for number, pair in enumerate(pairs, start=1):
        for c in pair.concurrencies():
            found.append((number, "base", c, pair.base[c]))
            found.append((number, "head", c, pair.head[c]))
    return found


def _stalls(pairs: Sequence[Pair], min_effect: float) -> list[Stall]:
    """Per boot and point, its one sample furthest from the others, where it is a stall."""
    points = [item for item in _judged(pairs) if _usable(item[3].tok_s)]
    distances = {(n, side, c): _distances(point.tok_s) for n, side, c, point in points}
    by_point: dict[int, list[float]] = {}
    for (_, _, c), values in distances.items():
        by_point.setdefault(c, []).extend(abs(d) for d in values)
    typical = {
        c: MAD_TO_SD * statistics.median(values)
        for c, values in by_point.items()
        if len(values) >= MIN_DISTANCES
    }
    floor = max(-math.log(1 - min_effect), STALL_FLOOR)
    stalls = []
    for n, side, c, point in points:
        if c not in typical:
            continue
        values = distances[(n, side, c)]
        worst = min(range(len(values)), key=lambda i: values[i])
        if -values[worst] <= max(STALL_SPREADS * typical[c], floor):
            continue
        others = [v for i, v in enumerate(point.tok_s) if i != worst]
        stalls.append(
            Stall(n, side, c, point.tok_s[worst], statistics.median(others), values[worst])
        )
    return stalls


def without_stalls(pairs: Sequence[Pair], min_effect: float) -> tuple[list[Pair], Stalls]:
    """The pairs with the stalls that may go left out (see above), and the stalls."""
    stalls = _stalls(pairs, min_effect)
    base = [s for s in stalls if s.side == "base"]
    # Head's furthest stalls go first; as many as base's boots had, the rest stay in.
    head = sorted((s for s in stalls if s.side == "head"), key=lambda s: s.distance)
    left_out = base + head[: len(base)]
    kept = tuple(head[len(base) :])
    if not left_out:
        return list(pairs), Stalls(kept=kept)
    gone = {(s.pair, s.side, s.concurrency): s for s in left_out}
    cleaned = []
    for number, pair in enumerate(pairs, start=1):
        sides: dict[Side, dict[int, BootPoint]] = {"base": dict(pair.base), "head": dict(pair.head)}
        for side, points in sides.items():
            for c, point in points.items():
                stall = gone.get((number, side, c))
                if stall is not None:
                    values = list(point.tok_s)
                    values.remove(stall.value)
                    points[c] = replace(point, tok_s=values)
        cleaned.append(Pair(base=sides["base"], head=sides["head"]))
    ordered = tuple(sorted(left_out, key=lambda s: (s.pair, s.side, s.concurrency)))
    return cleaned, Stalls(left_out=ordered, kept=kept)
