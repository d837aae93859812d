"""The speculation depth rule, kept in one place: a depth is a whole number 1..MAX_DEPTH.

Options, the launch builder and the baselines all check a depth through this module.
"""

from __future__ import annotations

from pytest_specperf.errors import UsageError

MIN_DEPTH = 1
MAX_DEPTH = 16


def depth_problem(depth: int) -> str | None:
    """Why ``depth`` is not a speculation depth, or None when it is one."""
    if isinstance(depth, bool) or not isinstance(depth, int):
        return f"speculation depth must be a whole number, got {depth!r}"
    if not MIN_DEPTH <= depth <= MAX_DEPTH:
        return f"speculation depth must be {MIN_DEPTH}..{MAX_DEPTH}, got {depth}"
    return None


def check_depth(depth: int) -> int:
    """``depth`` itself, or a one-line UsageError."""
    problem = depth_problem(depth)
    if problem is not None:
        raise UsageError(problem)
    return depth
