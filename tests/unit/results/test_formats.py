"""pytest_specperf.results.formats: how a figure reads, one relative change everywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_specperf.results.formats import (
    BETTER_WORSE,
    MISSING,
    change_interval,
    ratio_of,
    relative_change,
)

ratios = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
PACKAGE = Path(__file__).resolve().parents[3] / "pytest_specperf"


def _read_back(text: str, words: tuple[str, str] | None) -> float:
    """The percent a formatted change says, signed by its sign or by its words."""
    if words is None:
        found = re.fullmatch(r"([+-]\d+\.\d)%", text)
        assert found, text
        return float(found.group(1))
    found = re.fullmatch(rf"(\d+\.\d)% ({words[0]}|{words[1]})", text)
    assert found, text
    return float(found.group(1)) * (1 if found.group(2) == words[0] else -1)


@given(ratios, st.sampled_from([None, BETTER_WORSE, ("faster", "slower")]))
def test_a_change_reads_the_percent_of_its_ratio(
    ratio: float, words: tuple[str, str] | None
) -> None:
    """Signed or in words, the figure shown is 100 (r - 1), rounded to one decimal."""
    assert _read_back(relative_change(ratio, words), words) == pytest.approx(
        100 * (ratio - 1), abs=0.05 + 1e-9
    )


def test_an_improvement_reads_as_its_ratio_not_its_log() -> None:
    """Issue 49's case: 1,162.3 against 613.9 is 89.3% better (its log, 63.8%, is no change)."""
    assert relative_change(1162.3 / 613.9, BETTER_WORSE) == "89.3% better"
    assert relative_change(1162.3 / 613.9) == "+89.3%"


def test_a_drop_says_its_direction_in_words() -> None:
    """A ratio under 1 takes the second word, and its figure has no sign."""
    assert relative_change(0.807, ("faster", "slower")) == "19.3% slower"


def test_no_ratio_reads_as_missing() -> None:
    """None (a figure not measured) and a ratio that is not a number read as a dash."""
    assert relative_change(None) == MISSING and relative_change(float("nan")) == MISSING


def test_a_stored_fraction_is_read_as_its_ratio() -> None:
    """results.json keeps A/B changes as measured / reference - 1: its ratio is 1 more."""
    assert ratio_of(-0.05) == pytest.approx(0.95) and ratio_of(None) is None


def test_an_interval_reads_like_its_bounds() -> None:
    """Both bounds as the change they are, percent signs included."""
    assert change_interval(0.91, 0.928) == "[-9.0%, -7.2%]"
    assert change_interval(None, 0.9) == MISSING


def test_no_module_formats_a_signed_change_of_its_own() -> None:
    """Every signed percent goes through relative_change: a format spec with + beside a
    figure (f-string or %-format, in Python or a template) anywhere else is a second
    formatter of a relative change."""
    signed = re.compile(r":\+[.,\d]*[fge%]|%\+[.\d]*[fg]")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*"))
        if path.suffix in {".py", ".html", ".js"} and path.name != "formats.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if signed.search(line)
    ]
    assert found == []
