"""xdist: all tests of one depth on one worker, so that each depth boots one server."""

from __future__ import annotations

import re

_DEPTH_IN_ID = re.compile(r"\[(?:[^\]]*-)?(steps\d+)(?:-[^\]]*)?\]$")


def depth_scope(nodeid: str) -> str:
    """The scheduling scope of a test: its depth (``steps3``) for the suite's tests, else itself.

    The suite's tests carry the depth in their parameter ids (``test_x[steps3-c16]``).
    """
    match = _DEPTH_IN_ID.search(nodeid)
    return f"specperf-{match.group(1)}" if match else nodeid
