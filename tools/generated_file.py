"""Writing a generated file, or with ``--check`` only saying whether it is stale."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def write_or_check(path: Path, text: str, *, check: bool, generator: str) -> int:
    """Writes ``text`` to ``path`` (0); with ``check`` writes nothing and returns 1 when
    ``path`` differs from ``text``, naming ``generator`` (the script that regenerates it)."""
    shown = path.relative_to(REPO)
    if check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{shown} is stale: run python {generator}")
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")
    return 0
