"""The ``specperf`` command: the suite's parts without pytest (``command.py`` is its parser)."""

from pytest_specperf.cli.command import main

__all__ = ["main"]
