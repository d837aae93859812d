"""The options' parsers: a raw value (as typed, or from an ini file) -> a checked value.

Each raises UsageError with one line naming the option and the bad value.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pytest_specperf.depth import MAX_DEPTH, MIN_DEPTH
from pytest_specperf.errors import UsageError
from pytest_specperf.measure.number_list import parse_number_list
from pytest_specperf.measure.workload import WORKLOADS, Endpoint
from pytest_specperf.server.hardware import key_problem
from pytest_specperf.server.launch import BACKENDS, Backend

MAX_CONCURRENCY = 4096
ENDPOINTS: tuple[Endpoint, ...] = ("generate", "completions")
ConfirmMode = Literal["fresh-boot", "same-boot", "off"]
CONFIRM_MODES: tuple[ConfirmMode, ...] = ("fresh-boot", "same-boot", "off")
T = TypeVar("T", bound=str)
# A parser takes (the flag it reports errors under, the raw value or None) -> the parsed value.
Parser = Callable[[str, Any], Any]


def parse_int_list(option: str, raw: str, *, low: int, high: int) -> tuple[int, ...]:
    """``"1,2,3"`` -> (1, 2, 3): sorted, unique, each within [low, high]."""
    text = str(raw).strip()
    if not text:
        raise UsageError(f"{option}: empty value; expected a number or a list like 1,2,3")

    def out_of_range(number: int, _item: str) -> str | None:
        in_range = low <= number <= high
        return None if in_range else f"{number} is out of range {low}..{high} (got {raw!r})"

    return parse_number_list(option, raw, int, kind="a whole number", problem=out_of_range)


def parse_depths(raw: str, option: str = "--spec-steps") -> tuple[int, ...]:
    return parse_int_list(option, raw, low=MIN_DEPTH, high=MAX_DEPTH)


def parse_concurrency(raw: str, option: str = "--specperf-concurrency") -> tuple[int, ...]:
    return parse_int_list(option, raw, low=1, high=MAX_CONCURRENCY)


def parse_float(
    option: str, raw: Any, *, low: float, high: float = math.inf, low_open: bool = False
) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{option}: {raw!r} is not a number") from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise UsageError(f"{option}: {raw!r} must be {bound}{upper}")
    return value


def parse_whole_number(option: str, raw: Any, *, low: int) -> int:
    """A whole number >= ``low``."""
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise UsageError(f"{option}: {raw!r} is not a whole number") from None
    if value < low:
        raise UsageError(f"{option}: {raw!r} must be >= {low}")
    return value


def parse_positive_int(option: str, raw: Any) -> int:
    return parse_whole_number(option, raw, low=1)


def parse_count(option: str, raw: Any) -> int:
    """A whole number >= 0."""
    return parse_whole_number(option, raw, low=0)


def parse_choice(option: str, raw: Any, choices: Sequence[T], *, any_case: bool = False) -> T:
    """``raw`` as the one of ``choices`` it names (spaces around it ignored)."""
    value = str(raw).strip()
    for choice in choices:
        if value == choice or (any_case and value.lower() == choice):
            return choice
    raise UsageError(f"{option}: {raw!r} is not one of {', '.join(choices)}")


def parse_backend(raw: str, option: str = "--specperf-backend") -> Backend:
    return parse_choice(option, raw, BACKENDS, any_case=True)


def parse_endpoint(raw: str, option: str = "--specperf-endpoint") -> Endpoint:
    return parse_choice(option, raw, ENDPOINTS)


def parse_workload(raw: str, option: str = "--specperf-workload") -> str:
    """A workload name, or ``trace:PATH`` (the path is read when the settings are built)."""
    text = str(raw).strip()
    if text.startswith("trace:"):
        if not text.removeprefix("trace:").strip():
            raise UsageError(f"{option}: trace: needs a file, e.g. trace:traces/mooncake.jsonl")
        return text
    if text == "trace":
        raise UsageError(
            f"{option}: trace needs its file: trace:PATH (trace:synthetic for the trace "
            "shipped with the package)"
        )
    return parse_choice(option, raw, WORKLOADS)


def parse_hardware_key(option: str, raw: Any) -> str | None:
    """A hardware key exactly as typed (None: found from the server); anything that is not
    a key is refused, never turned into another one (``../../etc`` was once ``etc``)."""
    if raw is None or raw == "":
        return None
    text = str(raw)
    problem = key_problem(text)
    if problem is not None:
        raise UsageError(f"{option}: {problem}")
    return text


def parse_url(raw: str, option: str = "--specperf-url") -> str:
    text = str(raw).strip().rstrip("/")
    scheme, _, rest = text.partition("://")
    if scheme not in ("http", "https") or not rest or any(c.isspace() for c in rest):
        raise UsageError(f"{option}: {raw!r} is not an http(s) URL like http://host:30000")
    return text


def parse_server_args(
    raw: list[str] | None, option: str = "--specperf-server-arg"
) -> tuple[str, ...]:
    """Each value is split like a shell would: ``"--mem-fraction-static 0.8"`` is two items."""
    args: list[str] = []
    for value in raw or ():
        try:
            args.extend(shlex.split(value))
        except ValueError as exc:
            raise UsageError(f"{option}: cannot split {value!r}: {exc}") from None
    if args and not args[0].startswith("-"):
        raise UsageError(f"{option}: {args[0]!r} must start with '--' (a server flag)")
    return tuple(args)


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_server_env(raw: list[str] | None, option: str) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` values, in order (a later one for a name wins where they are applied);
    the value may name the suite's own environment as ``$NAME`` (expanded at launch)."""
    found: list[tuple[str, str]] = []
    for value in raw or ():
        name, sep, text = str(value).partition("=")
        if not sep or not _ENV_NAME.fullmatch(name):
            raise UsageError(
                f"{option}: {value!r} is not NAME=VALUE with NAME an environment variable name"
            )
        found.append((name, text))
    return tuple(found)


def parse_dir_list(raw: str | list[str] | None) -> tuple[str, ...]:
    """Directories given as a comma list, as repeated values, or both: ``a,b`` == ``a`` ``b``."""
    values = [raw] if isinstance(raw, str) else list(raw or ())
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def text_or_none(option: str, raw: Any) -> str | None:
    return str(raw) if raw else None


def required_text(option: str, raw: Any) -> str:
    text = str(raw or "").strip()
    if not text:
        raise UsageError(f"{option}: empty value")
    return text


def positive_int_or_none(option: str, raw: Any) -> int | None:
    return parse_positive_int(option, raw) if raw else None


def float_in(
    low: float, high: float = math.inf, *, low_open: bool = False, optional: bool = False
) -> Parser:
    def parse(option: str, raw: Any) -> float | None:
        if optional and not raw:
            return None
        return parse_float(option, raw, low=low, high=high, low_open=low_open)

    return parse


def flag(option: str, raw: Any) -> bool:
    return bool(raw)


def parse_confirm(option: str, raw: Any) -> ConfirmMode:
    return parse_choice(option, raw, CONFIRM_MODES)
