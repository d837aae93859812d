"""One row of the options table (``config/table.py``): an option written once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pytest_specperf.config.parsers import Parser, text_or_none

OptionKind = Literal["value", "flag", "append"]


@dataclass(frozen=True)
class OptionSpec:
    """One option: written once, registered in pytest, ini files and the ``specperf`` CLI."""

    flag: str  # the pytest flag, e.g. "--specperf-backend"
    key: str  # build_settings' name; the ini key is specperf_<key>
    help: str
    default: str | None = None  # as it would be typed; None: not set
    parse: Parser = text_or_none
    kind: OptionKind = "value"  # value: one string; flag: on/off; append: repeatable
    ini: bool = True  # also settable as specperf_<key> in [tool.pytest.ini_options]
    commands: tuple[str, ...] = ()  # `specperf` subcommands that take it
    short: str | None = None  # the `specperf` CLI's own name for it, e.g. "--url"
    env: str | None = None  # an environment variable read when the command line gives none
    # (subcommand, help) where a subcommand takes the option otherwise than pytest does (one
    # depth where pytest takes several): its --help must say what it takes.
    command_help: tuple[tuple[str, str], ...] = ()

    @property
    def dest(self) -> str:
        return f"specperf_{self.key}"

    @property
    def ini_name(self) -> str:
        return f"specperf_{self.key}"

    def help_for(self, command: str) -> str:
        """The help ``specperf <command> --help`` shows."""
        return dict(self.command_help).get(command, self.help)

    def cli_flags(self) -> tuple[str, ...]:
        return (self.short, self.flag) if self.short else (self.flag,)

    def value(self, raw: Any, *, option: str | None = None) -> Any:
        """The parsed value of ``raw`` (None or an empty list: the default)."""
        given = raw if raw not in (None, []) else self.default
        return self.parse(option or self.flag, given)


__all__ = ["OptionKind", "OptionSpec"]
