"""A comma list of numbers as typed -> sorted, unique, checked numbers."""

from __future__ import annotations

import pytest

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.number_list import parse_number_list


def _never(_value: float, _item: str) -> str | None:
    return None


def test_a_list_is_read_sorted_and_unique() -> None:
    numbers = parse_number_list("--x", " 4, 1,4 ", int, kind="a whole number", problem=_never)
    assert numbers == (1, 4)


def test_an_item_that_is_not_a_number_names_the_option_item_and_value() -> None:
    with pytest.raises(UsageError, match=r"^--x: 'a' is not a number \(got '1,a'\)$"):
        parse_number_list("--x", "1,a", float, kind="a number", problem=_never)


def test_the_check_s_problem_is_the_one_line_error() -> None:
    def negative(value: float, item: str) -> str | None:
        return f"{item!r} is negative" if value < 0 else None

    with pytest.raises(UsageError, match=r"^--x: '-2' is negative$"):
        parse_number_list("--x", "1,-2", float, kind="a number", problem=negative)
