"""The previous run's files in an out dir, set aside when a new run takes the folder.

An out dir holds one run's files: the run that takes it (results/run_lock.py) first moves
every file the suite writes there into ``previous/``, replacing what that held (the run
before the previous one). The rest of the folder is not the suite's run files and stays: a
history store beside it, a baselines folder of the user's own, ``specperf history plot``'s
trends/, anything else. docs/reference/results.md says so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_specperf.results.exports import BIGGER_IS_BETTER_FILE, SMALLER_IS_BETTER_FILE
from pytest_specperf.results.plots import PLOT_FILES
from pytest_specperf.results.store import PREVIOUS_RUN_DIR, REPORT_FILE, RESULTS_FILE

__all__ = ["PREVIOUS_RUN_DIR", "RUN_FILE_PATTERNS", "move_into_previous", "set_aside_previous_run"]

# Every name a run writes at the top of its out dir, as glob patterns.
RUN_FILE_PATTERNS: tuple[str, ...] = (
    RESULTS_FILE,
    f"{RESULTS_FILE}.corrupt-*",  # an unreadable results.json, moved aside (results/store.py)
    "results.previous.json",  # where versions before previous/ kept the last run's results
    REPORT_FILE,
    BIGGER_IS_BETTER_FILE,
    SMALLER_IS_BETTER_FILE,
    *PLOT_FILES,
    "trend-*.png",  # a nightly's trend plots (history/plots.py's plot_name)
    "server-steps*.log",  # each boot's server log (run/depth_session.py)
    "ab",  # an A/B run's pairs, a folder per depth and pair (run/ab/boots.py)
)


def set_aside_previous_run(out_dir: Path) -> list[str]:
    """Move the previous run's files in ``out_dir`` into ``out_dir/previous/`` (emptied first)
    and return their names; with none there, ``previous/`` is left as it is."""
    if not out_dir.is_dir():
        return []
    found = sorted({path for pattern in RUN_FILE_PATTERNS for path in out_dir.glob(pattern)})
    if not found:
        return []
    return move_into_previous(out_dir, found)


def move_into_previous(out_dir: Path, found: list[Path]) -> list[str]:
    """``found`` (files and folders of ``out_dir``) moved into ``out_dir/previous/``, emptied
    first; their names."""
    previous = out_dir / PREVIOUS_RUN_DIR
    if previous.is_dir() and not previous.is_symlink():
        shutil.rmtree(previous)
    else:
        previous.unlink(missing_ok=True)
    previous.mkdir()
    for path in found:
        path.replace(previous / path.name)
    return [path.name for path in found]
