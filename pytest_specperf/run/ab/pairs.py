"""A/B mode's pairs: base and head booted in pairs on this runner, until gate/ab.py decides.

One depth at a time. Boots alternate in a drift-cancelling order (base, head, head, base,
base, head, ...: ABBA), each a fresh server measuring every planned point R times,
interleaved; after each pair gate.ab.look judges the pairs so far, and the comparison stops
as soon as it is decided (or at --specperf-ab-max-pairs). How a pair is booted and measured
is the caller's (``MeasurePair``: run/ab/boots.py, or a fake in the tests).
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_specperf import interrupts
from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import SpecperfError
from pytest_specperf.gate.ab import AbRun, look
from pytest_specperf.gate.ab_pairs import AbSettings, Pair, boot_points
from pytest_specperf.gate.ab_prior import PairPrior
from pytest_specperf.results.schema import DepthRun

Side = str  # "base" | "head"

# Boots and sweeps one pair's sides in the given order: each side's run, and the seconds the
# GPU was held for the pair (server-up time; with both booted together, the pair's wall time).
MeasurePair = Callable[[int, tuple[Side, Side]], tuple[dict[Side, DepthRun], float]]

# issue 38: the runner's history as a prior, looked up by the hardware key of the first boot.
PriorLookup = Callable[[str], PairPrior | None]


def boot_order(pair: int) -> tuple[Side, Side]:
    """ABBA: pair 0 boots base then head, pair 1 head then base, and so on, so a linear drift
    of the runner over time favours neither side."""
    return ("base", "head") if pair % 2 == 0 else ("head", "base")


def run_ab(
    settings: Settings,
    depth: int,
    *,
    measure: MeasurePair,
    record: Callable[[AbRun], None] | None = None,
    prior: PriorLookup | None = None,
) -> AbRun:
    """Pairs of boots, each measured by ``measure``, until decided; ``prior``: the pair
    spread the runner's history shows, for the hardware the boots ran on (--specperf-history).

    ``record(result)`` is called after every pair and, before the interrupt is raised on, when
    a signal ends the comparison: an interrupted run keeps the pairs it measured."""
    result = AbRun(depth=depth, settings=_ab_settings(settings))
    try:
        return _pairs_until_decided(result, measure, record, prior)
    except KeyboardInterrupt as exc:
        result.interrupted = (
            f"steps={depth} A/B: interrupted ({interrupts.interrupt_name(exc)}) during pair "
            f"{len(result.pairs) + 1}, after {len(result.pairs)} measured pair(s)"
        )
        if record is not None:
            record(result)
        raise


def _ab_settings(settings: Settings) -> AbSettings:
    return AbSettings(
        alpha=settings.alpha,
        min_effect=settings.min_effect,
        max_pairs=settings.ab_max_pairs,
    )


def _pairs_until_decided(
    result: AbRun,
    measure: MeasurePair,
    record: Callable[[AbRun], None] | None,
    prior: PriorLookup | None = None,
) -> AbRun:
    depth, ab_settings = result.depth, result.settings
    for index in range(ab_settings.max_pairs):
        order = boot_order(index)
        try:
            sides, seconds = measure(index, order)
        except SpecperfError as exc:
            result.failure = f"steps={depth} A/B: pair {index + 1}: {exc}"
            return result
        result.server_seconds += seconds
        result.boots.extend(order)
        for side in order:
            failure = sides[side].failure
            if failure is not None:
                result.failure = (
                    f"steps={depth} A/B: the {side} boot of pair {index + 1} failed: "
                    f"{failure.splitlines()[0]}"
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
        if result.last.outcome != "continue":
            break
    return result
