"""plugin/session.py: the signal policy wired into pytest (a run of its own, in a subprocess)."""

from __future__ import annotations

import pytest

SWALLOWS = """
import os, signal

def test_swallows_the_signal():
    try:
        os.kill(os.getpid(), signal.{name})
    except KeyboardInterrupt:
        pass  # as a broad except on the way would

def test_after_it():
    pass
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_swallowed_signal_still_ends_the_run_as_interrupted(
    pytester: pytest.Pytester, name: str
) -> None:
    """The next test does not run, and the run exits 2 (interrupted), not 0."""
    pytester.makepyfile(SWALLOWS.format(name=name))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "test_after_it PASSED" not in result.stdout.str()
    result.assert_outcomes(passed=1)
