"""A/B mode's pairs: base and head booted in pairs on this runner, until gate/ab/ decides;
``AbRun``, the comparison as it stands.

One depth at a time. Boots alternate in a drift-cancelling order (base, head, head, base,
base, head, ...: ABBA), each a fresh server measuring every planned point R times,
interleaved; after each pair gate/ab/verdict.py's ``look`` judges the pairs so far, and the
comparison stops as soon as it is decided (or at --specperf-ab-max-pairs). How a pair is
booted and measured is the caller's (``MeasurePair``: run/ab/boots.py, or a fake in the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.ab.estimate import AbSettings, Pair, boot_points
from pytest_specperf.gate.ab.prior import PairPrior
from pytest_specperf.gate.ab.verdict import (
    AbLook,
    change_record,
    decided_by,
    look,
    pair_record,
    stall_records,
)
from pytest_specperf.results.schema import AbComparison, DepthRun

Side = str  # "base" | "head"

# Boots and sweeps one pair's sides in the given order: each side's run, and the seconds the
# GPU was held for the pair (server-up time; with both booted together, the pair's wall time).
MeasurePair = Callable[[int, tuple[Side, Side]], tuple[dict[Side, DepthRun], float]]

# issue 38: the runner's history as a prior, looked up by the hardware key of the first boot.
PriorLookup = Callable[[str], PairPrior | None]


@dataclass
class AbRun:
    """One depth's A/B comparison as it stands: the pairs, the last look, what it cost."""

    depth: int
    settings: AbSettings
    pairs: list[Pair] = field(default_factory=list)
    last: AbLook | None = None
    # Seconds the servers were up (boot, measuring, stop): times each server's GPUs, if any,
    # the GPU-seconds (results/ab_comment.py server_cost).
    server_seconds: float = 0.0
    # The sides in the order they were booted ("base", "head", "head", "base", ...).
    boots: list[str] = field(default_factory=list)
    # The latest head boot's run: the points the per-point tests see.
    head_run: DepthRun | None = None
    failure: str | None = None
    # Whose boot failed: "base", "head" or "both" (None: no boot failed).
    failed_side: str | None = None
    # Set when a signal ended the comparison: what it was doing, how many pairs it had.
    interrupted: str | None = None
    # The runner's history as a prior for the pair spread (None: no --specperf-history, or
    # too few comparable runs in it).
    prior: PairPrior | None = None

    def judged_pairs(self) -> list[Pair]:
        """The pairs as the last look judged them (stalled samples left out)."""
        return list(self.last.judged_pairs) if self.last is not None else list(self.pairs)

    def cost(self) -> str:
        return (
            f"{len(self.pairs)} pair(s), {len(self.boots)} boots "
            f"({' '.join(side[0].upper() for side in self.boots)}), "
            f"{self.server_seconds:,.0f} server-seconds"
        )

    def summary_lines(self) -> list[str]:
        """The verdict, then each point's change and why, then what it cost."""
        if self.last is None:
            return [self.failure or f"steps={self.depth} A/B: no pair was measured"]
        lines = [self.last.message(self.settings.min_effect, self.settings.beta)]
        for point in self.last.points:
            lines.append(
                f"  C={point.concurrency}: base {point.base_median or 0:,.1f} -> head "
                f"{point.head_median or 0:,.1f} tok/s (medians); {point.attribution.text()}"
            )
        lines.append(f"  cost: {self.cost()}")
        if self.failure is not None:
            lines.append(f"  {self.failure}")
        return lines

    def comparison(self) -> AbComparison:
        """What results.json keeps of this comparison."""
        found = self.last
        if self.interrupted is not None:
            outcome: str = "interrupted"
            message = self.interrupted + (
                f"; at the last look: {found.message(self.settings.min_effect, self.settings.beta)}"
                if found is not None
                else ""
            )
        else:
            outcome = "failed" if self.failure is not None or found is None else found.outcome
            message = " ".join(self.summary_lines()[:1])
        return AbComparison(
            depth=self.depth,
            outcome=outcome,
            pairs=len(self.pairs),
            boots=list(self.boots),
            server_seconds=round(self.server_seconds, 1),
            min_effect=self.settings.min_effect,
            alpha=self.settings.alpha,
            message=message,
            interval_level=1 - 2 * self.settings.alpha,
            decided_by=decided_by(found, self.settings) if found is not None else "",
            pooled=change_record(found.pooled) if found is not None else None,
            points=[change_record(p) for p in found.points] if found is not None else [],
            pair_changes=[
                record
                for number, pair in enumerate(self.judged_pairs(), start=1)
                if (record := pair_record(number, pair)) is not None
            ],
            stalls=stall_records(found.stalls) if found is not None else [],
        )


def boot_order(pair: int) -> tuple[Side, Side]:
    """ABBA: pair 0 boots base then head, pair 1 head then base, and so on, so a linear drift
    of the runner over time favours neither side."""
    return ("base", "head") if pair % 2 == 0 else ("head", "base")


# Whether the comparison as it stands is decided (run_ab's default: the A/B look's verdict).
Decided = Callable[[AbRun], bool]


def decided_by_look(result: AbRun) -> bool:
    return result.last is not None and result.last.outcome != "continue"


def run_ab(
    settings: Settings,
    depth: int,
    *,
    measure: MeasurePair,
    record: Callable[[AbRun], None] | None = None,
    prior: PriorLookup | None = None,
    resumed: AbRun | None = None,
    decided: Decided = decided_by_look,
) -> AbRun:
    """Pairs of boots, each measured by ``measure``, until decided; ``prior``: the pair
    spread the runner's history shows, for the hardware the boots ran on (--specperf-history).

    ``record(result)`` is called after every pair and, before the interrupt is raised on, when
    a signal ends the comparison: an interrupted run keeps the pairs it measured.
    ``resumed``: the pairs an earlier, interrupted run of this comparison measured (judged
    first; the next pair boots in the order its number gives). ``decided``: when to stop
    (specperf bisect judges its steps by its own rule over the same pairs)."""
    result = resumed or AbRun(depth=depth, settings=ab_settings(settings))
    try:
        return _pairs_until_decided(result, measure, record, prior, decided)
    except KeyboardInterrupt as exc:
        result.interrupted = (
            f"steps={depth} A/B: interrupted ({interrupts.interrupt_name(exc)}) during pair "
            f"{len(result.pairs) + 1}, after {len(result.pairs)} measured pair(s)"
        )
        if record is not None:
            record(result)
        raise


def ab_settings(settings: Settings) -> AbSettings:
    return AbSettings(
        alpha=settings.alpha,
        min_effect=settings.min_effect,
        max_pairs=settings.ab_max_pairs,
    )


def _pairs_until_decided(
    result: AbRun,
    measure: MeasurePair,
    record: Callable[[AbRun], None] | None,
    prior: PriorLookup | None,
    decided: Decided,
) -> AbRun:
    depth, ab_settings = result.depth, result.settings
    if result.pairs:
        result.last = look(depth, result.pairs, ab_settings, result.prior)
        if decided(result):
            return result
    for index in range(len(result.pairs), ab_settings.max_pairs):
        order = boot_order(index)
        try:
            sides, seconds = measure(index, order)
        except SpecperfError as exc:
            result.failure = f"steps={depth} A/B: pair {index + 1}: {exc}"
            return result
        result.server_seconds += seconds
        result.boots.extend(order)
        failed = {side: sides[side].failure for side in order if sides[side].failure}
        if failed:
            side, failure = next(iter(failed.items()))
            result.failed_side = side if len(failed) == 1 else "both"
            result.failure = (
                f"steps={depth} A/B: the {side} boot of pair {index + 1} failed: "
                f"{str(failure).splitlines()[0]}"
            )
            return result
        result.head_run = sides["head"]
        pair = Pair(base=boot_points(sides["base"]), head=boot_points(sides["head"]))
        if not pair.concurrencies():
            result.failure = f"steps={depth} A/B: pair {index + 1} measured no point on both sides"
            return result
        result.pairs.append(pair)
        if prior is not None and index == 0:
            result.prior = prior(sides["head"].hardware)
        result.last = look(depth, result.pairs, ab_settings, result.prior)
        if record is not None:
            record(result)
        if decided(result):
            break
    return result
