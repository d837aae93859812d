"""Six tiny nights on the simulator in one history store (tests/support/nights.py): a slowdown
from night 4 is named by night 4 and attributed to step time, in every throughput series
(steps=3 and the control, C = 1 and 4). The 5% of the issue's done-when, and no change point
anywhere but night 4, are the full demo's job (lab/studies/nightly_demo.py): these nights are
too short for that at C=4 (tests/support/nights.py says what they do there)."""

from __future__ import annotations

import pytest

from pytest_specperf.history.changes import ChangePoint
from pytest_specperf.history.report import findings
from pytest_specperf.history.store import HistoryStore
from tests.support.nights import Nights
from tests.support.scripts import run_in_repo

# The throughput halves from night 4: agg tok/s changes by -50%. C=1 nights agree within 0.3%;
# C=4 ones flip between levels up to 14% apart, which moves the step by up to about 4 points.
STEP_TOLERANCE = {1: 0.02, 4: 0.06}


@pytest.fixture(scope="module")
def changes(nights: Nights) -> list[ChangePoint]:
    store = HistoryStore.open(nights.store)
    try:
        return findings(store).changes
    finally:
        store.close()


def test_a_slowdown_from_night_4_is_named_by_night_4_in_every_throughput_series(
    nights: Nights, changes: list[ChangePoint]
) -> None:
    agg = [change for change in changes if change.key.metric == "agg_tok_s"]
    named = sorted((c.key.depth, c.key.concurrency, str(c.night.commit)) for c in agg)
    assert named == [(0, 1, "night04"), (0, 4, "night04"), (3, 1, "night04"), (3, 4, "night04")], (
        nights.demo_output
    )
    for change in agg:
        assert change.attribution == "step time", nights.demo_output
        assert abs(change.step + 0.5) <= STEP_TOLERANCE[change.key.concurrency], nights.demo_output


def test_the_steady_single_stream_series_have_no_other_change_point(
    nights: Nights, changes: list[ChangePoint]
) -> None:
    single_stream = {str(c.night.commit) for c in changes if c.key.concurrency == 1}
    assert single_stream == {"night04"}, nights.demo_output


def test_the_store_keeps_every_night_complete_with_its_commit(nights: Nights) -> None:
    shown = run_in_repo(
        "-m", "pytest_specperf.cli", "history", "show", "--history", str(nights.store)
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    store = shown.stdout
    assert [f"night0{n}" in store for n in range(1, 7)] == [True] * 6
    assert store.count(" complete ") == 6
