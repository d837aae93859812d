"""A signal policy of the test's own, installed in place of the process's for one test."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import pytest

from pytest_specperf import interrupts


@contextlib.contextmanager
def own_policy(monkeypatch: pytest.MonkeyPatch) -> Iterator[interrupts.SignalPolicy]:
    """A fresh SignalPolicy as interrupts.POLICY, installed over Python's default handlers;
    the outer run's handlers and policy come back afterwards."""
    saved = {signum: signal.getsignal(signum) for signum in interrupts.SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    policy = interrupts.SignalPolicy()
    monkeypatch.setattr(interrupts, "POLICY", policy)
    try:
        assert policy.install()
        yield policy
    finally:
        policy.uninstall()
        policy.ending()
        for signum, handler in saved.items():
            signal.signal(signum, handler)
