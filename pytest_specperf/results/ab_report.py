"""A/B mode in report.md and the github-action-benchmark file: the verdict per depth, then
per point base and head medians, the change with its interval, why it moved, pairs used."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.formats import (
    STEP_RATE,
    change_interval,
    number,
    ratio_of,
    relative_change,
)
from pytest_specperf.results.report_table import md_table
from pytest_specperf.results.schema import AbChange, AbComparison, AbPair

AB_FOREST_PNG = "ab-forest.png"


def _change(fraction: float | None) -> str:
    return relative_change(ratio_of(fraction))


def change_interval_of(change: AbChange) -> str:
    """A change's interval as results.json stores it (fractions), read as every change reads."""
    return change_interval(ratio_of(change.low), ratio_of(change.high))


def _interval_header(comparison: AbComparison) -> str:
    """What the interval column holds: the repeated interval over pairs at the last look."""
    if comparison.interval_level is None:
        return "interval"
    return f"{comparison.interval_level:.0%} repeated interval, after pair {comparison.pairs}"


def ab_markdown(comparisons: Sequence[AbComparison]) -> str | None:
    """The A/B block of report.md (None: not an A/B run)."""
    if not comparisons:
        return None
    blocks = ["## A/B verdict (base vs head, paired boots)"]
    for comparison in sorted(comparisons, key=lambda c: c.depth):
        verdict = (
            comparison.outcome.upper()
            if comparison.outcome == "regression"
            else (comparison.outcome)
        )
        blocks.append(
            f"**steps={comparison.depth}: {verdict}** after {comparison.pairs} pair(s) "
            f"({len(comparison.boots)} boots, {comparison.server_seconds:,.0f} server-seconds; "
            f"minimum effect {comparison.min_effect:.0%}, alpha {comparison.alpha:.0%})  \n"
            f"{comparison.message}"
            + (f"  \n{comparison.decided_by}" if comparison.decided_by else "")
        )
        rows = [
            [
                "pooled" if change.concurrency is None else str(change.concurrency),
                number(change.base_median),
                number(change.head_median),
                _change(change.change),
                change_interval_of(change),
                _change(change.acceptance_change),
                _change(change.step_time_change),
                change.why,
            ]
            for change in [*comparison.points, *([comparison.pooled] if comparison.pooled else [])]
        ]
        blocks.append(
            md_table(
                [
                    "C",
                    "base median tok/s",
                    "head median tok/s",
                    "change",
                    _interval_header(comparison),
                    "acceptance",
                    STEP_RATE,
                    "why",
                ],
                rows,
            )
        )
        if comparison.pair_changes:
            blocks.append(pairs_table(comparison.pair_changes))
    return "\n\n".join(blocks)


def pairs_table(pairs: Sequence[AbPair]) -> str:
    """Each pair's change and its parts; the vCPU speeds under each side's server where a
    CPU-bound server's vCPU was timed (a pair's step rate that moves with them is the runner)."""
    timed = any(p.base_core_speed is not None or p.head_core_speed is not None for p in pairs)
    header = ["pair", "change", "acceptance", STEP_RATE]
    if timed:
        header += ["base vCPU speed", "head vCPU speed"]
    rows = []
    for p in pairs:
        row = [
            str(p.pair),
            _change(p.change),
            _change(p.acceptance_change),
            _change(p.step_time_change),
        ]
        if timed:
            row += [number(p.base_core_speed), number(p.head_core_speed)]
        rows.append(row)
    note = (
        "\n\nvCPU speed: a single-thread probe of the vCPU the server's CPU-bound process ran on "
        "(M loops/s, the median over the boot's points)"
        if timed
        else ""
    )
    return f"Pairs, in boot order:\n\n{md_table(header, rows)}{note}"
