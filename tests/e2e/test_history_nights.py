"""Six tiny nights on the simulator in one history store (tests/support/nights.py): a slowdown
from night 4 is named by night 4 and attributed to step time, in every series (steps=3 and the
control, C = 1 and 4). The 5% of the issue's done-when is the full demo's job
(lab/studies/nightly_demo.py)."""

from __future__ import annotations

from tests.support.nights import Nights
from tests.support.scripts import run_in_repo


def test_a_slowdown_from_night_4_is_named_by_night_4(nights: Nights) -> None:
    assert "PASS: every change point names night04" in nights.demo_output, nights.demo_output
    assert "PASS: attribution 'step time'" in nights.demo_output
    assert nights.commit == "night04"


def test_the_store_keeps_every_night_complete_with_its_commit(nights: Nights) -> None:
    shown = run_in_repo(
        "-m", "pytest_specperf.cli", "history", "show", "--history", str(nights.store)
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    store = shown.stdout
    assert [f"night0{n}" in store for n in range(1, 7)] == [True] * 6
    assert store.count(" complete ") == 6
