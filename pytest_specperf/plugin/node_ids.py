"""The suite's test ids read back: which depth's throughput test a report is of.

A test's node id carries its parameters (``test_throughput_floor[steps3-c16]``,
``test_open_loop_floor[steps3-trace]``, made by
``collection.py``); the session reads from it the depth of each throughput test that ran, and
the run's end (``run_end.py``) asks each such depth for a throughput verdict.
"""

from __future__ import annotations

import re

# An open-loop point's test gates its depth as a closed-loop one does: a trace replay or a
# rate sweep run alone must not pass with nothing judged.
_THROUGHPUT_TEST = re.compile(
    r"::test_(?:throughput_(?:floor|depth)|open_loop_floor)\[steps(\d+)(?:-|\])"
)


def throughput_test_depth(nodeid: str) -> int | None:
    """The depth of a shipped throughput test's node id (closed-loop or open-loop), None for
    any other test."""
    found = _THROUGHPUT_TEST.search(nodeid)
    return int(found.group(1)) if found else None
