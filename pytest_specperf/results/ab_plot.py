"""A/B mode's forest plot: each point's change head / base with its interval over pairs, the
depth pooled below them, and the minimum-effect band shaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_specperf.results.plot_style import depth_color, depth_marker, new_figure
from pytest_specperf.results.schema import AbChange, AbComparison

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def ab_forest_figure(comparisons: Sequence[AbComparison]) -> Figure | None:
    """None when the run has no A/B comparison with figures."""
    rows: list[tuple[str, AbChange, int]] = []
    for comparison in sorted(comparisons, key=lambda c: c.depth):
        for change in comparison.points:
            rows.append(
                (f"steps={comparison.depth} C={change.concurrency}", change, comparison.depth)
            )
        if comparison.pooled is not None:
            rows.append((f"steps={comparison.depth} pooled", comparison.pooled, comparison.depth))
    if not rows:
        return None
    figure, (ax,) = new_figure(width=7.2)
    effect = max(c.min_effect for c in comparisons) * 100
    ax.axvspan(
        -effect, effect, color="#e8f0e8", label=f"within the minimum effect (±{effect:.0f}%)"
    )
    ax.axvline(0, color="#444444", linewidth=1)
    for index, (label, change, depth) in enumerate(reversed(rows)):
        value = change.change * 100
        if change.low is not None and change.high is not None:
            ax.plot([change.low * 100, change.high * 100], [index, index], color=depth_color(depth))
        ax.plot(
            [value],
            [index],
            marker="D" if "pooled" in label else depth_marker(depth),
            color=depth_color(depth),
            markersize=7,
        )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _, _ in reversed(rows)])
    ax.set_xlabel("head vs base, % (repeated interval over pairs of boots)")
    ax.set_title("A/B: change per point")
    ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure
