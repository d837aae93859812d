"""The docs hold together: the options page is generated and current, every link resolves."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from tests.support.scripts import load_script

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "tools" / "gen_options_reference.py"
# Every page a reader follows links in; a run's own report.md under docs/runs/ is raw output
# (its plots were not kept), not documentation.
MARKDOWN = [
    REPO / "README.md",
    REPO / "ARCHITECTURE.md",
    *(
        page
        for page in sorted((REPO / "docs").rglob("*.md"))
        if not (page.name.endswith("report.md") and "runs" in page.relative_to(REPO).parts)
    ),
]
# Files whose text may name a path under docs/ (comments, docstrings, scripts, workflows).
SOURCES = [
    path
    for folder in ("pytest_specperf", "tools", "lab", "tests", ".github", ".ci")
    for path in sorted((REPO / folder).rglob("*"))
    if path.is_file() and path.suffix in {".py", ".sh", ".toml", ".yml", ".yaml", ".md", ""}
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*[\w/]")


def _generator() -> ModuleType:
    return load_script(GENERATOR)


def _slug(heading: str) -> str:
    """The id GitHub gives a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def test_options_reference_is_generated_from_the_table() -> None:
    generator = _generator()
    page = REPO / "docs" / "reference" / "options.md"
    assert page.read_text(encoding="utf-8") == generator.render(), (
        "docs/reference/options.md is stale: python tools/gen_options_reference.py"
    )


def test_options_reference_notes_name_existing_options() -> None:
    assert _generator().stale_notes() == []


def test_every_relative_link_in_the_docs_resolves() -> None:
    broken: list[str] = []
    for page in MARKDOWN:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto: not checked offline
            path_part, _, anchor = target.partition("#")
            resolved = (page.parent / path_part).resolve() if path_part else page
            where = f"{page.relative_to(REPO)}: {target}"
            if not resolved.exists():
                broken.append(where)
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{where} (no such heading)")
    assert broken == []


def test_every_docs_path_named_in_the_tree_exists() -> None:
    missing: list[str] = []
    for source in [*MARKDOWN, *SOURCES]:
        text = source.read_text(encoding="utf-8", errors="replace")
        for name in DOCS_PATH.findall(text):
            if not (REPO / name).exists():
                missing.append(f"{source.relative_to(REPO)}: {name}")
    assert missing == []
