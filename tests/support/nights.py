"""Six simulator nights into one history store, run once per test session and read by the
history tests (tests/e2e/test_history_nights.py, tests/e2e/test_history_site_browser.py).

lab/studies/nightly_demo.py, shortened: depths 0 and 3 (the control beside steps=3), C = 1 and
4, 64 tokens, one 0.2 s sample a point after one warm-up round, throughput halved from night 4,
the losslessness tests left out.
C=4 on the simulator flips between levels from sample to sample (the streams' prefills
falling together or apart, 12 or 16 requests in a 0.2 s sample): at 32 tokens without a
warm-up about 5% apart, and at 64 tokens with one warm-up round still up to 14% in one CI run
of six nights (steps=3 C=4: 2,563-2,688 tok/s before night 4, 1,283 then 1,460 and 1,457
after). The C=1 series agree within 0.3%. So the tests hold C=4 to what such nights can
show (tests/e2e/test_history_nights.py); the full demo checks every series strictly."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from pytest_specperf.history.report import findings
from pytest_specperf.history.store import HistoryStore
from tests.support.scripts import run_slowdown_nights


@dataclass(frozen=True)
class Nights:
    store: Path
    run_id: str  # the first run after the slowdown, as the store names it
    commit: str
    demo_output: str  # what nightly_demo.py printed: its PASS and FAIL lines


def _shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test session that every xdist worker sees (pytest-xdist's own recipe
    for a session fixture computed once): the nights are run by the first worker to ask."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _run_nights(work: Path) -> Nights:
    done = run_slowdown_nights(
        work,
        "--depths=0,3",
        "--concurrency=1,4",
        "--tokens=64",
        "--warmup-rounds=1",
        # The history tests read the throughput series; the greedy-output comparison was a
        # quarter of each night (3.3 of 12 s).
        "--select=not losslessness",
        timeout=900,
    )
    assert "PASS: a throughput change point with an attribution" in done.stdout, (
        done.stdout + done.stderr
    )
    store = HistoryStore.open(work / "history.sqlite")
    try:
        found = findings(store)
    finally:
        store.close()
    step = next(c for c in found.changes if c.key.metric == "agg_tok_s" and c.key.depth == 3)
    return Nights(work / "history.sqlite", step.night.run_id, step.night.commit, done.stdout)


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    shared = _shared_dir(tmp_path_factory)
    work = shared / "history-nights"
    ready = shared / "history-nights.json"
    with FileLock(str(shared / "history-nights.lock")):
        if not ready.exists():
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            made = _run_nights(work)
            ready.write_text(
                json.dumps([str(made.store), made.run_id, made.commit, made.demo_output])
            )
    store, run_id, commit, demo_output = json.loads(ready.read_text())
    return Nights(Path(store), run_id, commit, demo_output)
