"""xdist: all tests of one depth on one worker, so that each depth boots one server."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_specperf.plugin.session import SpecperfRun

# xdist modes that would split one depth's tests over several workers (one server each).
SPLITTING_DIST_MODES = ("load", "loadscope", "loadfile", "loadgroup", "worksteal")
_DEPTH_IN_ID = re.compile(r"\[(?:[^\]]*-)?(steps\d+)(?:-[^\]]*)?\]$")


def depth_scope(nodeid: str) -> str:
    """The scheduling scope of a test: its depth (``steps3``) for the suite's tests, else itself.

    The suite's tests carry the depth in their parameter ids (``test_x[steps3-c16]``).
    """
    match = _DEPTH_IN_ID.search(nodeid)
    return f"specperf-{match.group(1)}" if match else nodeid


def worker_input(run: SpecperfRun) -> dict[str, Any]:
    """What the controller hands each worker: the run it writes into and the GPU list."""
    given: dict[str, Any] = {
        "specperf_run_id": run.run_id,
        "specperf_started_at": run.started_at,
    }
    if run.present_gpus is not None:
        given["specperf_gpus"] = list(run.present_gpus.ids)
        given["specperf_gpus_from"] = run.present_gpus.source
    return given
