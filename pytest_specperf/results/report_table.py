"""A titled table rendered two ways: plain text for the terminal, markdown for report.md.

Every table of a run (a depth's seed table, the trade-off, what speculation buys, goodput, the
recommendation) is built once as a ``Table``; the terminal summary and report.md each pick a
rendering of the same object, so they can never show different figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table (cells escaped)."""
    lines = [
        "| " + " | ".join(_md_cell(cell) for cell in header) + " |",
        "|" + "|".join(" --- " for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass(frozen=True)
class Table:
    title: str
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    # Lines after the table: prose the table's figures need (a schedule, a definition).
    notes: Sequence[str] = field(default_factory=tuple)
    # The title's long form (a depth's server and settings): a line under the markdown
    # heading; plain text shows it in the title's place, as it starts with the title.
    caption: str | None = None
    # What a table without rows says instead (None: the header alone).
    empty: str | None = None

    def text(self) -> str:
        header = " | ".join(self.header)
        lines = [self.caption or self.title, header, "-" * len(header)]
        lines += [" | ".join(row) for row in self.rows]
        if not self.rows and self.empty:
            lines.append(self.empty)
        lines += list(self.notes)
        return "\n".join(lines)

    def markdown(self, level: int = 3) -> str:
        blocks = [f"{'#' * level} {self.title}"]
        if self.caption:
            blocks.append(self.caption)
        if not self.rows and self.empty:
            blocks.append(self.empty)
        else:
            blocks.append(md_table(self.header, self.rows))
        if self.notes:
            blocks.append("\n".join(f"- {note}" for note in self.notes))
        return "\n\n".join(blocks)
