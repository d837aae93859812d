"""The package's docstrings and comments (its modules' and its shipped TOML files') say why in
plain words: no lab/ path (the lab is not shipped) and no dated run or GPU anecdote; the
evidence lives in docs/, which they link (a ``docs/runs/<date>-<what>`` link is fine)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_specperf"

LAB_PATH = re.compile(r"(?<![\w./-])lab/")
RUN_LINK = re.compile(r"docs/runs/[\w./-]*")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
# A GPU model named in prose is a run's anecdote; a device name (``NVIDIA H200``) is data.
GPU_MODEL = re.compile(r"(?<!NVIDIA )\b[ABH][12]00s?\b")
FOUND = (("a lab/ path", LAB_PATH), ("a dated figure", DATE), ("a GPU run's figure", GPU_MODEL))


def prose(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment and each docstring (a string standing as a statement)."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def toml_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment line of a TOML file (the shipped ones have no other)."""
    for line, text in enumerate(source.splitlines(), start=1):
        if text.lstrip().startswith("#"):
            yield line, text


def findings(source: str, *, toml: bool = False) -> list[str]:
    """``line N: what`` for each lab/ path, date or GPU anecdote in the prose of ``source``
    (a module's, or with ``toml`` a TOML file's comments)."""
    found = []
    for line, text in toml_comments(source) if toml else prose(source):
        text = RUN_LINK.sub("docs/runs/", text)
        for what, pattern in FOUND:
            for match in pattern.finditer(text):
                found.append(f"line {line}: {what}: {match.group()!r}")
    return found


def test_no_docstring_or_comment_names_lab_or_quotes_a_dated_gpu_figure() -> None:
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.toml")]):
        name = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        found += [f"{name} {line}" for line in findings(source, toml=path.suffix == ".toml")]
    assert found == []


def test_each_kind_is_found_and_a_run_link_is_not() -> None:
    source = (
        '"""Measured on the lent H200 on 2026-12-05 (lab/studies/x.py)."""\n'
        "# see docs/runs/2026-12-04-placement-h200 for the run\n"
        "NAMES = ['NVIDIA H200']  # the names nvidia-smi gives\n"
        "HELP = 'a string that is not a docstring: lab/runs/, 2026-12-05, an H100'\n"
    )
    assert findings(source) == [
        "line 1: a lab/ path: 'lab/'",
        "line 1: a dated figure: '2026-12-05'",
        "line 1: a GPU run's figure: 'H200'",
    ]


def test_a_toml_comment_is_read_and_its_values_are_not() -> None:
    source = (
        '# boots of 175 s on an H200 (2026-11-30)\nwhy = "about a minute of capture on an H200"\n'
    )
    assert findings(source, toml=True) == [
        "line 1: a dated figure: '2026-11-30'",
        "line 1: a GPU run's figure: 'H200'",
    ]
