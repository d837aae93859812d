"""What the history says, as text (the CLI) and as report.md's "Since last night" section."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_specperf.history.changes import ChangePoint, DetectionSettings, detect_all
from pytest_specperf.history.changes import new_in_last_night as fresh_changes
from pytest_specperf.history.series import Series, build_series
from pytest_specperf.history.speculation import CategoryChange, category_changes
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.formats import counted

SECTION_TITLE = "## Since last night / change points"


@dataclass
class HistoryFindings:
    nights: int
    series: list[Series]
    changes: list[ChangePoint]
    new: list[ChangePoint]
    speculation: list[CategoryChange]
    new_speculation: list[CategoryChange] = field(default_factory=list)

    @property
    def has_new(self) -> bool:
        return bool(self.new or self.new_speculation)


def findings(
    store: HistoryStore, settings: DetectionSettings | None = None, kind: str | None = "nightly"
) -> HistoryFindings:
    """Every change point of the complete runs of ``kind`` (None: every kind)."""
    runs = [r for r in store.runs(complete_only=True) if kind is None or r["kind"] == kind]
    series = build_series(runs, store.points([int(r["seq"]) for r in runs]))
    settings = settings or DetectionSettings()
    speculation = category_changes(runs, settings.min_size)
    before = category_changes(runs[:-1], settings.min_size) if runs else []
    seen = {(c.series, c.night.seq) for c in before}
    return HistoryFindings(
        nights=len(runs),
        series=series,
        changes=detect_all(series, settings),
        new=fresh_changes(series, settings),
        speculation=speculation,
        new_speculation=[c for c in speculation if (c.series, c.night.seq) not in seen],
    )


def _change_line(change: ChangePoint) -> str:
    line = change.summary
    if change.position_drop is not None and change.attribution == "acceptance":
        drop = change.position_drop
        line += f"; draft position {drop.position} acceptance {drop.before:.2f} -> {drop.after:.2f}"
    return line


def text_lines(found: HistoryFindings) -> list[str]:
    lines = [f"{counted(found.nights, 'complete run')}, {len(found.series)} series"]
    if not found.changes and not found.speculation:
        lines.append("no change points")
    for change in found.changes:
        lines.append(("NEW  " if change in found.new else "     ") + _change_line(change))
    for category in found.speculation:
        new = category in found.new_speculation
        lines.append(("NEW  " if new else "     ") + category.summary)
    return lines


def markdown_section(found: HistoryFindings, plots: Sequence[str] = ()) -> str:
    lines = [SECTION_TITLE, ""]
    lines.append(
        f"{counted(found.nights, 'complete nightly run')} in the history store; "
        f"{counted(len(found.changes), 'change point')} over {len(found.series)} series, "
        f"{len(found.new) + len(found.new_speculation)} new with this run."
    )
    lines.append("")
    if found.new or found.new_speculation:
        lines.append("New with this run:")
        lines.append("")
        lines.extend(f"- {_change_line(c)}" for c in found.new)
        lines.extend(f"- {c.summary}" for c in found.new_speculation)
        lines.append("")
    older = [c for c in found.changes if c not in found.new]
    older_speculation = [c for c in found.speculation if c not in found.new_speculation]
    if older or older_speculation:
        lines.append("Earlier change points:")
        lines.append("")
        lines.extend(f"- {_change_line(c)}" for c in older)
        lines.extend(f"- {c.summary}" for c in older_speculation)
        lines.append("")
    lines.extend(f"![{name}]({name})" for name in plots)
    return "\n".join(lines).rstrip() + "\n"
