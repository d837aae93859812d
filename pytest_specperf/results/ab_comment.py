"""A/B mode as a pull-request comment: the verdict first, then per depth each point's change
with its interval and its split into acceptance and step time, the pairs and what their servers
cost (GPU-seconds where the run recorded its servers' GPUs, server-seconds on the simulator,
which has none), and the forest plot linked where it was drawn (``specperf ab-comment
results.json``): the comment claims no file and no GPU the run did not have.

The comment opens with ``COMMENT_MARKER``, an HTML comment GitHub does not show: the
workflow finds its earlier comment by it and updates that one instead of adding another.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from pytest_specperf.errors import SpecperfError
from pytest_specperf.results.ab_report import AB_FOREST_PNG, change_interval_of
from pytest_specperf.results.formats import STEP_RATE, counted, ratio_of, relative_change
from pytest_specperf.results.report_table import md_table
from pytest_specperf.results.schema import AbComparison, DepthRun, RunResults

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


def server_cost(seconds: float, runs: Sequence[DepthRun | None]) -> str:
    """What the servers' ``seconds`` cost, as far as the depths' ``runs`` (None: not in the
    results) say: GPU-seconds where every server's GPUs were counted alike, server-seconds on
    the simulator, which has no GPU, or where the count is unknown."""
    if runs and all(run is not None and run.backend == "sim" for run in runs):
        return f"{seconds:,.0f} server-seconds on the simulator, which has no GPU"
    counts = {run.testbed.gpus if run is not None and run.testbed else None for run in runs}
    gpus = counts.pop() if len(counts) == 1 else None
    if gpus:
        return f"{seconds * gpus:,.0f} GPU-seconds, {counted(gpus, 'GPU')} per server"
    return f"{seconds:,.0f} server-seconds, GPUs per server not recorded"


def _depth_block(comparison: AbComparison, run: DepthRun | None) -> list[str]:
    cost = server_cost(comparison.server_seconds, [run])
    lines = [
        f"**steps={comparison.depth}: {_HEADLINES.get(comparison.outcome, comparison.outcome)}**"
        f" after {comparison.pairs} pair(s) of boots ({cost}; minimum effect "
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
    runs: Sequence[DepthRun] = (),
    forest_drawn: bool = False,
    forest_url: str | None = None,
    run_url: str | None = None,
) -> str:
    """The comment's markdown (the verdict of the worst depth first). ``runs``: the run's
    depths (the head's), which say what the servers were; ``forest_drawn``: whether
    ``AB_FOREST_PNG`` was written beside results.json (without matplotlib it is not)."""
    if not comparisons:
        raise SpecperfError("ab-comment: the results hold no A/B comparison")
    ordered = sorted(comparisons, key=lambda c: c.depth)
    by_depth = {run.depth: run for run in runs}
    depth_runs = [by_depth.get(c.depth) for c in ordered]
    verdict = _HEADLINES.get(worst_outcome(ordered), worst_outcome(ordered))
    pairs = sum(c.pairs for c in ordered)
    cost = server_cost(sum(c.server_seconds for c in ordered), depth_runs)
    lines = [
        COMMENT_MARKER,
        f"### specperf A/B: {verdict}",
        "",
        f"Base vs head booted in pairs: {pairs} pair(s), {cost}.",
    ]
    for comparison, run in zip(ordered, depth_runs, strict=True):
        lines += ["", *_depth_block(comparison, run)]
    links = []
    if forest_drawn and forest_url:
        links.append(f"[forest plot]({forest_url})")
    elif forest_drawn:
        links.append(f"forest plot: `{AB_FOREST_PNG}` in the run's artifact")
    if run_url:
        links.append(f"[the run, its report and artifacts]({run_url})")
    if links:
        lines += ["", " · ".join(links)]
    return "\n".join(lines) + "\n"


def ab_comment_from_file(
    path: Path, *, forest_url: str | None = None, run_url: str | None = None
) -> str:
    """The comment of a results.json, saying only what the run left: the forest plot where
    it lies beside the file, the GPUs its depths recorded."""
    try:
        results = msgspec.json.decode(path.read_bytes(), type=RunResults)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SpecperfError(f"ab-comment: {path}: {exc}") from None
    return ab_comment(
        results.ab,
        runs=results.runs,
        forest_drawn=(path.parent / AB_FOREST_PNG).is_file(),
        forest_url=forest_url,
        run_url=run_url,
    )
