"""How the project's own tests are laid out: the product's under tests/, the lab scripts' under
lab/tests/, both run by CI; shared test data is imported from tests/support, never from a
conftest (a conftest holds fixtures and hooks only)."""

from __future__ import annotations

import ast
import re
import tomllib

from tests.support.data import REPO

TEST_FOLDERS = ("tests", "lab/tests")


def _imported_modules(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_test_imports_a_conftest() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {module}"
        for folder in TEST_FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
        for module in sorted(_imported_modules(path.read_text(encoding="utf-8")))
        if "conftest" in module.split(".")
    ]
    assert offenders == []


def test_ci_and_a_plain_pytest_run_both_test_folders() -> None:
    """lab/tests/ sits outside tests/: CI's pytest command names it, and so does testpaths."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["pytest"]["ini_options"]["testpaths"] == list(TEST_FOLDERS)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    (command,) = re.findall(r"^.*python -m pytest tests\b.*$", ci, flags=re.MULTILINE)
    assert command.split("python -m pytest ", 1)[1].split()[:2] == list(TEST_FOLDERS)
    assert all(any((REPO / folder).rglob("test_*.py")) for folder in TEST_FOLDERS)
