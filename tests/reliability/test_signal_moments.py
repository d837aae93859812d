"""Fault injection: SIGINT or SIGTERM at seeded random moments of real runs on the simulator.

Each run gets a first signal at a random delay after one of the moments a sender can see
(signal_moments.TRIGGERS, taken in turn, so every phase gets some: before boot, boot and
readiness, warm-up, the points, the depth's checks and teardown, writing results, report, plots
and baselines, printing the report and exiting), then up to 5 more at short gaps, which land in
the interrupted run's teardown and hurry it. Every signal must leave the run ended as
interrupted: exit status 2, no baseline, no process left, results.json readable and marked. The
long version: lab/studies/signal_soak.py.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.signal_moments import Outcome, clean_run_seconds, moments, run_moment

SEED = 23
SIGNALS_AT_LEAST = 50
RUNS_AT_MOST = 40
STRATA = 14  # two runs per trigger
MOST_SIGNALS = 6
AT_ONCE = 2


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, int, list[str]]:
    return clean_run_seconds(tmp_path_factory.mktemp("clean"))


@pytest.fixture(scope="module")
def outcomes(
    tmp_path_factory: pytest.TempPathFactory, clean_run: tuple[float, int, list[str]]
) -> list[Outcome]:
    """Runs, two at a time, until at least SIGNALS_AT_LEAST signals were sent."""
    root = tmp_path_factory.mktemp("moments")
    done: list[Outcome] = []
    seed = SEED
    with ThreadPoolExecutor(AT_ONCE) as pool:
        while sum(o.signals_sent for o in done) < SIGNALS_AT_LEAST and len(done) < RUNS_AT_MOST:
            batch = moments(STRATA, seed, most_signals=MOST_SIGNALS)
            seed += 1
            for start in range(0, len(batch), AT_ONCE):
                group = batch[start : start + AT_ONCE]
                dirs = [root / f"s{seed}-m{m.index}" for m in group]
                done.extend(pool.map(run_moment, group, dirs))
                if sum(o.signals_sent for o in done) >= SIGNALS_AT_LEAST:
                    break
    return done


def test_an_uninterrupted_run_writes_its_baseline(
    clean_run: tuple[float, int, list[str]],
) -> None:
    """The control: without a signal the same run exits 0 and records the baseline."""
    _span, returncode, baselines = clean_run
    assert returncode == 0
    assert len(baselines) == 1


def test_every_signal_ends_the_run_as_interrupted(outcomes: list[Outcome]) -> None:
    """Exit status 2, no baseline, no process left, results.json readable and marked, the
    interrupted point never one already measured: for every run, whatever its moments."""
    sent = sum(o.signals_sent for o in outcomes)
    assert sent >= SIGNALS_AT_LEAST, [o.describe() for o in outcomes]
    wrong = [f"{o.describe()}: {'; '.join(o.problems())}" for o in outcomes if o.problems()]
    assert wrong == [], (
        "\n".join(wrong) + "\n" + next((o.output_tail for o in outcomes if o.problems()), "")
    )


def test_the_first_signals_reach_every_phase_of_a_run(outcomes: list[Outcome]) -> None:
    """The moments are not all in one place: at least four of the seven phases seen from
    outside. The short ones (before boot, the depth's checks) are seen late on a loaded
    machine: a CI run saw five of seven; the 300-signal soak (lab/studies/signal_soak.py) saw all
    seven."""
    phases = {o.phase for o in outcomes if o.sent}
    assert len(phases) >= 4, phases
