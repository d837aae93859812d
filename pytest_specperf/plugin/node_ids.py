"""The suite's test ids read back: which depth's throughput test a report is of.

A test's node id carries its parameters (``test_throughput_floor[steps3-c16]``, made by
``collection.py``); the session reads from it the depth of each throughput test that ran, and
the run's end (``run_end.py``) asks each such depth for a throughput verdict.
"""

from __future__ import annotations

import re

_THROUGHPUT_TEST = re.compile(r"::test_throughput_(?:floor|depth)\[steps(\d+)(?:-|\])")


def throughput_test_depth(nodeid: str) -> int | None:
    """The depth of a shipped throughput test's node id, None for any other test."""
    found = _THROUGHPUT_TEST.search(nodeid)
    return int(found.group(1)) if found else None
