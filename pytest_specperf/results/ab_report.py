"""A/B mode in report.md and the github-action-benchmark file: the verdict per depth, then
per point base and head medians, the change with its interval, why it moved, pairs used."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.formats import number, signed_percent
from pytest_specperf.results.schema import AbChange, AbComparison, AbPair
from pytest_specperf.results.tables import md_table

AB_FOREST_PNG = "ab-forest.png"


def _interval(change: AbChange) -> str:
    if change.low is None or change.high is None:
        return "-"
    return f"[{change.low * 100:+.1f}, {change.high * 100:+.1f}]"


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
                signed_percent(change.change),
                _interval(change),
                signed_percent(change.acceptance_change),
                signed_percent(change.step_time_change),
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
                    "step time",
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
    CPU-bound server's vCPU was timed (a pair's step time that moves with them is the runner)."""
    timed = any(p.base_core_speed is not None or p.head_core_speed is not None for p in pairs)
    header = ["pair", "change", "acceptance", "step time"]
    if timed:
        header += ["base vCPU speed", "head vCPU speed"]
    rows = []
    for p in pairs:
        row = [
            str(p.pair),
            signed_percent(p.change),
            signed_percent(p.acceptance_change),
            signed_percent(p.step_time_change),
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
