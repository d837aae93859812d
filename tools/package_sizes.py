"""Print the package's sizes: its largest modules in lines, its classes with the most methods
and the modules at its top.

    python tools/package_sizes.py            # the 15 largest modules and classes
    python tools/package_sizes.py --top 40

Figures to read, not limits: a module that holds one role may grow, and one that holds two is
split by role, whatever its length (ARCHITECTURE.md, "Sizes"). tests/unit/test_architecture.py
checks that this report runs and names the largest module.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE_DIR = REPO / "pytest_specperf"


def line_count(source: str) -> int:
    return len(source.splitlines())


def top_level_modules(paths: Iterable[Path], package_dir: Path) -> list[str]:
    """The modules that sit directly in the package's folder (not in one of its parts)."""
    return sorted(p.name for p in paths if p.parent == package_dir and p.suffix == ".py")


def method_counts(source: str) -> dict[str, int]:
    """Each class's methods (properties included, those under an ``if`` of its body too; a
    function inside a method is not one), by the class's name."""

    def methods(body: list[ast.stmt]) -> int:
        found = 0
        for statement in body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                found += 1
            elif isinstance(statement, ast.If):
                found += methods(statement.body) + methods(statement.orelse)
        return found

    return {
        node.name: methods(node.body)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
    }


def sources(package_dir: Path = PACKAGE_DIR) -> dict[str, str]:
    """Each module's source by its path under the package (``gate/decision.py``)."""
    return {
        path.relative_to(package_dir).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(package_dir.rglob("*.py"))
    }


def largest(counts: Mapping[str, int], top: int) -> list[tuple[str, int]]:
    """The ``top`` largest of ``counts``, largest first (a tie in name order)."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]


def report(modules: Mapping[str, str], top: int = 15) -> str:
    """The figures as text: modules and lines in all, the modules at the top, the ``top``
    largest modules and the ``top`` classes with the most methods."""
    lines = {name: line_count(source) for name, source in modules.items()}
    methods = {
        f"{name} {cls}": count
        for name, source in modules.items()
        for cls, count in method_counts(source).items()
    }
    at_top = sorted(name for name in modules if "/" not in name)
    said = [
        f"{len(modules)} modules, {sum(lines.values()):,} lines",
        f"at the top ({len(at_top)}): {', '.join(at_top)}",
        "largest modules (lines):",
        *(f"  {count:5d}  {name}" for name, count in largest(lines, top)),
        "classes with the most methods:",
        *(f"  {count:5d}  {name}" for name, count in largest(methods, top)),
    ]
    return "\n".join(said)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--top", type=int, default=15, help="how many of each to list")
    args = parser.parse_args(argv)
    print(report(sources(), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
