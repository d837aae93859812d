"""A/B mode's advice when a comparison ends undecided: where the noise is (between boots or
inside them), how many pairs a verdict would need, the effect the pairs could detect, a
CPU-bound server's vCPU lottery. Pure, over the pairs of estimate.py.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_specperf.gate.ab.estimate import AbSettings, Pair, core_speeds, pooled_change
from pytest_specperf.results.formats import core_speeds_note, counted
from pytest_specperf.results.schema import CPU_BOUND_MEANING, follows_its_core
from pytest_specperf.results.stats import log_sd

# Pairs beyond which advice stops counting: a profile that needs more is too noisy for A/B.
PAIRS_NEEDED_LIMIT = 400


def pairs_needed(sd: float, settings: AbSettings, limit: int = PAIRS_NEEDED_LIMIT) -> int:
    """The pairs a fixed-size design needs at per-pair spread ``sd`` (log scale): the smallest
    n at which a one-sided paired t-test at alpha has power 1 - beta at a regression of the
    minimum effect (noncentral t). ``limit`` when even that many are not enough."""
    from scipy import stats

    for n in range(2, limit):
        critical = float(stats.t.isf(settings.alpha, n - 1))
        power = float(stats.nct.sf(critical, n - 1, settings.margin * math.sqrt(n) / sd))
        if power >= 1 - settings.beta:
            return n
    return limit


@dataclass(frozen=True)
class NoiseSplit:
    """Where the spread of the pairs' pooled changes comes from (log scale)."""

    pair_sd: float
    # The part the repeats inside each boot account for (None: fewer than 2 repeats a point).
    within_sd: float | None
    pairs_needed: int

    @property
    def between_boots(self) -> bool:
        """Most of the spread is between boots: more repeats inside a boot will not help."""
        return self.within_sd is None or self.within_sd**2 < self.pair_sd**2 / 2


def _within_variance(pair: Pair) -> float | None:
    """The variance the repeats put on one pair's pooled change: each point's change is a
    difference of two means of R logs, the pooled change the mean over the P points."""
    points = pair.concurrencies()
    parts: list[float] = []
    for c in points:
        for side in (pair.base[c], pair.head[c]):
            sd = log_sd(side.tok_s)
            if sd is None:
                return None
            parts.append(sd**2 / len(side.tok_s))
    return sum(parts) / len(points) ** 2 if points else None


def noise_split(pairs: Sequence[Pair], settings: AbSettings) -> NoiseSplit | None:
    """The pairs' spread, its within-boot part, and the pairs a verdict would need at that
    spread (None: fewer than two pairs with a pooled change)."""
    changes = [c.total for c in (pooled_change(p) for p in pairs) if c is not None]
    if len(changes) < 2:
        return None
    pair_sd = statistics.stdev(changes)
    within = [_within_variance(p) for p in pairs]
    known = [w for w in within if w is not None]
    within_sd = math.sqrt(statistics.fmean(known)) if known and len(known) == len(within) else None
    return NoiseSplit(pair_sd, within_sd, pairs_needed(pair_sd, settings) if pair_sd > 0 else 2)


def undecided_advice(pairs: Sequence[Pair], settings: AbSettings) -> str:
    """What to change when the pairs ran out undecided: more pairs when the boots disagree,
    more repeats when the boots agree and the samples inside them do not."""
    split = noise_split(pairs, settings)
    if split is None:
        return "raise --specperf-ab-max-pairs"
    effect = f"{settings.min_effect:.0%}"
    spread = f"the pairs' changes spread by {math.expm1(split.pair_sd):.1%}"
    if split.within_sd is not None:
        spread += (
            f" (the samples inside each boot alone would make {math.expm1(split.within_sd):.1%})"
        )
    if not split.between_boots:
        return f"{spread}: raise --specperf-repeats (or --specperf-min-point-seconds)"
    needed = (
        f"about {split.pairs_needed} pairs"
        if split.pairs_needed < PAIRS_NEEDED_LIMIT
        else f"more than {PAIRS_NEEDED_LIMIT} pairs"
    )
    reachable = reachable_effect(split.pair_sd, settings)
    larger = (
        f"--specperf-min-effect={reachable:.2f} would be decided within {settings.max_pairs} pairs"
        if reachable is not None
        else f"no minimum effect under 50% would be decided within {settings.max_pairs} pairs"
    )
    return (
        f"{spread}: the noise is between boots, so more repeats will not help; at "
        f"this spread a {effect} verdict needs {needed} (--specperf-ab-max-pairs), and "
        f"{larger}{cpu_bound_note(pairs)}"
    )


def cpu_bound_note(pairs: Sequence[Pair]) -> str:
    """Why boots can disagree on a runner: every boot's server held one core flat out."""
    points = [point for pair in pairs for side in (pair.base, pair.head) for point in side.values()]
    if not points or not all(follows_its_core(point.cpu, point.bound) for point in points):
        return ""
    cpus = [point.cpu for point in points]
    shares = [cpu.share for cpu in cpus if cpu is not None]
    names = sorted({cpu.process for cpu in cpus if cpu is not None})
    note = (
        f"; in every boot the server's {' / '.join(names)} held {min(shares):.0%}-"
        f"{max(shares):.0%} of one core: {CPU_BOUND_MEANING}"
    )
    timed = [core_speeds(side) for pair in pairs for side in (pair.base, pair.head)]
    speeds = [speed for boot in timed for speed in boot]
    if speeds:
        boots = sum(1 for boot in timed if boot)
        note += f"; {core_speeds_note(speeds, counted(boots, 'boot'))}"
    return note


def reachable_effect(sd: float, settings: AbSettings) -> float | None:
    """The smallest minimum effect (in steps of 1%) that a fixed design of ``max_pairs`` pairs
    could promise at per-pair spread ``sd``; None when not even 49% could be."""
    for percent_points in range(math.ceil(settings.min_effect * 100), 50):
        wider = dataclasses.replace(settings, min_effect=percent_points / 100)
        if pairs_needed(sd, wider, limit=settings.max_pairs + 1) <= settings.max_pairs:
            return wider.min_effect
    return None
