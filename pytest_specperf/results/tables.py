"""A titled table rendered two ways: plain text for the terminal, markdown for report.md.

Report sections build a ``Table`` once and each front end picks its rendering, so the
terminal summary and report.md can never show different figures.
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

    def text(self) -> str:
        header = " | ".join(self.header)
        lines = [self.title, header, "-" * len(header)]
        lines += [" | ".join(row) for row in self.rows]
        lines += list(self.notes)
        return "\n".join(lines)

    def markdown(self, level: int = 3) -> str:
        blocks = [f"{'#' * level} {self.title}", md_table(self.header, self.rows)]
        if self.notes:
            blocks.append("\n".join(f"- {note}" for note in self.notes))
        return "\n\n".join(blocks)
