"""One look for every PNG of a run: a depth keeps its colour and marker in every plot, the
concurrency axis reads the same, numbers carry thousands separators. matplotlib is imported
only inside the functions (the optional ``plots`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class Plot:
    """A picture written beside report.md; ``file`` is relative to report.md."""

    title: str
    file: str


# Depth colours: no red or green, which mark a regression and an improvement in floors.png.
_DEPTH_COLORS = (
    "#1f77b4",  # blue
    "#ff7f0e",  # orange
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#17becf",  # cyan
    "#e377c2",  # pink
    "#bcbd22",  # olive
)
# The control (depth 0, no speculation) is the reference every depth is read against.
_CONTROL_COLOR = "#444444"
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def depth_color(depth: int) -> str:
    return _CONTROL_COLOR if depth == 0 else _DEPTH_COLORS[(depth - 1) % len(_DEPTH_COLORS)]


def depth_marker(depth: int) -> str:
    """Markers differ by depth too, so lines that lie on each other stay told apart."""
    return _MARKERS[depth % len(_MARKERS)]


def depth_label(depth: int) -> str:
    return "steps=0 (no speculation)" if depth == 0 else f"steps={depth}"


def depth_style(depth: int) -> dict[str, Any]:
    """A depth's marker, colour and legend label, as keyword arguments of a plot call."""
    return {"marker": depth_marker(depth), "color": depth_color(depth), "label": depth_label(depth)}


def new_figure(columns: int = 1, width: float = 6.4) -> tuple[Figure, list[Axes]]:
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, columns, figsize=(width * columns, 4.4), facecolor="white")
    axes_list = list(axes) if columns > 1 else [axes]
    for ax in axes_list:
        ax.set_facecolor("white")
        ax.grid(True, color="#dddddd", linewidth=0.8)
        ax.set_axisbelow(True)
    return figure, axes_list


def concurrency_axis(ax: Axes, concurrencies: Sequence[int]) -> None:
    """Log-2 concurrency axis with a tick at each concurrency measured, labelled 1, 4, 16."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(concurrencies))
    ax.set_xticklabels([str(c) for c in concurrencies])
    ax.minorticks_off()
    ax.set_xlabel("concurrency C (requests in flight)")


def thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: f"{value:,.0f}")
