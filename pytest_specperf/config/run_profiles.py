"""Run profiles: named presets of how much to measure (depths, concurrency, tokens, repeats).

Shipped in run_profiles.toml beside this module; a project's own TOML file of the same shape
changes fields of a shipped profile or adds profiles. A run profile only fills options that
were not given: an option on the command line or in the ini file always wins.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

import msgspec

from pytest_specperf.errors import UsageError

SHIPPED_FILE = Path(__file__).with_name("run_profiles.toml")
OPTION = "--specperf-run-profile"

Positive = Annotated[int, msgspec.Meta(ge=1)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
# Depth 0 is the no-speculation control; the depth rule's upper bound is checked with the
# option the profile fills (--spec-steps).
Depth = Annotated[int, msgspec.Meta(ge=0)]


class RunProfile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One run profile; a field left out leaves that option to its default."""

    description: str = ""
    depths: list[Depth] | None = None
    concurrency: list[Positive] | None = None
    max_new_tokens: Positive | None = None
    repeats: Positive | None = None
    # true: an exploratory run, a depth nothing judged does not fail it
    # (--specperf-allow-no-baseline); false or left out: every gated depth needs a verdict.
    allow_no_baseline: bool | None = None
    # A bound on each boot's warm-up, seconds (--specperf-warmup-seconds): where one warm-up
    # round is long (2,048 tokens at C=64: about a minute), it keeps the run to its budget.
    warmup_seconds: PositiveFloat | None = None


# Run profile field -> the option key (options.OPTIONS) it fills.
OPTION_KEYS: Mapping[str, str] = {
    "depths": "spec_steps",
    "concurrency": "concurrency",
    "max_new_tokens": "max_new_tokens",
    "repeats": "repeats",
    "allow_no_baseline": "allow_no_baseline",
    "warmup_seconds": "warmup_seconds",
}


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"run profiles file {path}: not found") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"run profiles file {path}: {exc}") from None
    for name, table in data.items():
        if not isinstance(table, dict):
            raise UsageError(f"run profiles file {path}: {name!r} is not a [table]")
    return data


def load_run_profiles(extra_file: Path | None = None) -> dict[str, RunProfile]:
    """The shipped run profiles, with ``extra_file``'s fields laid over them by name."""
    tables = _read(SHIPPED_FILE)
    sources = {name: SHIPPED_FILE for name in tables}
    if extra_file is not None:
        for name, table in _read(extra_file).items():
            tables[name] = {**tables.get(name, {}), **table}
            sources[name] = extra_file
    profiles = {}
    for name, table in tables.items():
        try:
            profiles[name] = msgspec.convert(table, RunProfile)
        except msgspec.ValidationError as exc:
            raise UsageError(f"run profile {name!r} ({sources[name]}): {exc}") from None
    return profiles


def resolve_run_profile(name: str, extra_file: Path | None = None) -> RunProfile:
    profiles = load_run_profiles(extra_file)
    try:
        return profiles[name]
    except KeyError:
        known = ", ".join(sorted(profiles))
        raise UsageError(f"{OPTION}: {name!r} is not a run profile (known: {known})") from None


def option_defaults(profile: RunProfile) -> dict[str, str]:
    """The option values the profile sets, written as they would be typed (``1,2,3``)."""
    values: dict[str, str] = {}
    for field, key in OPTION_KEYS.items():
        value = getattr(profile, field)
        if value is None or value is False:
            continue
        if value is True:
            values[key] = "1"  # an on/off option, on
            continue
        values[key] = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return values


def with_run_profile(get: Callable[[str], Any], profile: RunProfile | None) -> Callable[[str], Any]:
    """``get`` with the profile's values for the options that were not given."""
    if profile is None:
        return get
    defaults = option_defaults(profile)

    def get_or_profile(key: str) -> Any:
        value = get(key)
        if value in (None, []) and key in defaults:
            return defaults[key]
        return value

    return get_or_profile
