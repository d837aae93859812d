"""A/B mode in report.md and the github-action-benchmark file: the verdict per depth, then
per point base and head medians, the change with its interval, why it moved, pairs used."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.formats import number
from pytest_specperf.results.schema import AbChange, AbComparison
from pytest_specperf.results.tables import md_table

AB_FOREST_PNG = "ab-forest.png"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def _interval(change: AbChange) -> str:
    if change.low is None or change.high is None:
        return "-"
    return f"[{change.low * 100:+.1f}, {change.high * 100:+.1f}]"


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
        )
        rows = [
            [
                "pooled" if change.concurrency is None else str(change.concurrency),
                number(change.base_median),
                number(change.head_median),
                _percent(change.change),
                _interval(change),
                _percent(change.acceptance_change),
                _percent(change.step_time_change),
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
                    "interval",
                    "acceptance",
                    "step time",
                    "why",
                ],
                rows,
            )
        )
    return "\n\n".join(blocks)
