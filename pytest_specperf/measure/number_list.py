"""A comma list of numbers as typed (depths, concurrencies, request rates) -> the numbers.

One parser for config/ (depths, concurrency levels) and measure/ (request rates): measure/
may not import config/, config/ may import measure/.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pytest_specperf.errors import UsageError

Number = TypeVar("Number", int, float)


def parse_number_list(
    option: str,
    raw: Any,
    number: Callable[[str], Number],
    *,
    kind: str,
    problem: Callable[[Number, str], str | None],
) -> tuple[Number, ...]:
    """``"4, 1,4"`` -> (1, 4): sorted and unique.

    Each item is read by ``number`` (``kind`` names what it should be when that fails) and
    then checked by ``problem(value, item)``, which says what is wrong or None; either way
    the UsageError is one line that names ``option``.
    """
    values: set[Number] = set()
    for part in str(raw).strip().split(","):
        item = part.strip()
        try:
            value = number(item)
        except ValueError:
            raise UsageError(f"{option}: {item!r} is not {kind} (got {raw!r})") from None
        trouble = problem(value, item)
        if trouble is not None:
            raise UsageError(f"{option}: {trouble}")
        values.add(value)
    return tuple(sorted(values))
