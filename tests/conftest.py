"""Shared test setup: pytester for the plugin's end-to-end tests, and tests/support's fixtures."""

import signal

import pytest

pytest_plugins = ["pytester", "tests.support.sim", "tests.support.e2e"]

# A job a non-interactive shell starts in the background (`cmd &`) inherits SIGINT ignored,
# and so would every process these tests start: their Ctrl-C would then do nothing, and the
# tests of what Ctrl-C does would fail for the way CI was started. Ctrl-C means Ctrl-C here.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_history_store_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's $SPECPERF_HISTORY is pytest's --specperf-history too: the runs these
    tests start must not record into it."""
    monkeypatch.delenv("SPECPERF_HISTORY", raising=False)
