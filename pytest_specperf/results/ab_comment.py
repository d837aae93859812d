"""A/B mode as a pull-request comment: the verdict first, then per depth each point's change
with its interval and its split into acceptance and step time, the pairs and the GPU-seconds
they cost, and the forest plot linked (``specperf ab-comment results.json``).

The comment opens with ``COMMENT_MARKER``, an HTML comment GitHub does not show: the
workflow finds its earlier comment by it and updates that one instead of adding another.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.ab_report import AB_FOREST_PNG, change_interval_of
from pytest_specperf.results.formats import STEP_RATE, ratio_of, relative_change
from pytest_specperf.results.schema import AbComparison, RunResults
from pytest_specperf.results.tables import md_table

COMMENT_MARKER = "<!-- specperf-ab-verdict -->"
# The verdict of several depths is their worst, in this order.
_OUTCOME_ORDER = ("regression", "failed", "undecided", "improvement", "no-regression")
_HEADLINES = {
    "regression": "REGRESSION",
    "failed": "FAILED (a boot failed)",
    "undecided": "undecided",
    "improvement": "improvement",
    "no-regression": "no regression",
}


def worst_outcome(comparisons: Sequence[AbComparison]) -> str:
    found = {c.outcome for c in comparisons}
    return next((o for o in _OUTCOME_ORDER if o in found), comparisons[0].outcome)


def _depth_block(comparison: AbComparison) -> list[str]:
    gpu_seconds = f"{comparison.server_seconds:,.0f} GPU-seconds"
    lines = [
        f"**steps={comparison.depth}: {_HEADLINES.get(comparison.outcome, comparison.outcome)}**"
        f" after {comparison.pairs} pair(s) of boots ({gpu_seconds}; minimum effect "
        f"{comparison.min_effect:.0%}, alpha {comparison.alpha:.0%})",
    ]
    if comparison.message:
        lines += ["", comparison.message]
    changes = [*comparison.points, *([comparison.pooled] if comparison.pooled else [])]
    if changes:
        rows = [
            [
                "pooled" if change.concurrency is None else f"C={change.concurrency}",
                f"**{relative_change(ratio_of(change.change))}**",
                change_interval_of(change),
                relative_change(ratio_of(change.acceptance_change)),
                relative_change(ratio_of(change.step_time_change)),
            ]
            for change in changes
        ]
        lines += [
            "",
            md_table(["point", "change", "interval", "acceptance", STEP_RATE], rows),
        ]
    if comparison.pair_changes:
        pairs = ", ".join(relative_change(ratio_of(p.change)) for p in comparison.pair_changes)
        lines += ["", f"Pairs, in boot order: {pairs}"]
    return lines


def ab_comment(
    comparisons: Sequence[AbComparison],
    *,
    forest_url: str | None = None,
    run_url: str | None = None,
) -> str:
    """The comment's markdown (the verdict of the worst depth first)."""
    if not comparisons:
        raise SpecperfError("ab-comment: the results hold no A/B comparison")
    ordered = sorted(comparisons, key=lambda c: c.depth)
    verdict = _HEADLINES.get(worst_outcome(ordered), worst_outcome(ordered))
    pairs = sum(c.pairs for c in ordered)
    gpu_seconds = sum(c.server_seconds for c in ordered)
    lines = [
        COMMENT_MARKER,
        f"### specperf A/B: {verdict}",
        "",
        f"Base vs head booted in pairs: {pairs} pair(s), {gpu_seconds:,.0f} GPU-seconds "
        "(one GPU per server).",
    ]
    for comparison in ordered:
        lines += ["", *_depth_block(comparison)]
    links = []
    if forest_url:
        links.append(f"[forest plot]({forest_url})")
    else:
        links.append(f"forest plot: `{AB_FOREST_PNG}` in the run's artifact")
    if run_url:
        links.append(f"[the run, its report and artifacts]({run_url})")
    lines += ["", " · ".join(links)]
    return "\n".join(lines) + "\n"


def ab_comment_from_file(
    path: Path, *, forest_url: str | None = None, run_url: str | None = None
) -> str:
    try:
        results = msgspec.json.decode(path.read_bytes(), type=RunResults)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SpecperfError(f"ab-comment: {path}: {exc}") from None
    return ab_comment(results.ab, forest_url=forest_url, run_url=run_url)
