"""Change points of one series: found where the step is, attributed, quiet series left alone."""

from __future__ import annotations

import math
import random

import pytest

from pytest_specperf.history.changes import DetectionSettings, detect, new_in_last_night
from pytest_specperf.history.series import Night, Series, SeriesKey

KEY = SeriesKey("p", "hw", "greedy", 3, 16, "agg_tok_s")


def series(
    nights: int,
    *,
    step_at: int | None = None,
    tok_step: float = 0.0,
    accept_step: float = 0.0,
    noise: float = 0.005,
    seed: int = 1,
) -> Series:
    """Nights whose tok/s = accept length x verify steps/s; a step moves one or the other."""
    rng = random.Random(seed)
    made = Series(KEY)
    for night in range(nights):
        after = step_at is not None and night >= step_at
        accept = 3.0 * (1 + accept_step if after else 1.0)
        steps = 400.0 * (1 + tok_step if after else 1.0) * math.exp(rng.gauss(0, noise))
        made.nights.append(
            Night(night, f"r{night}", f"2026-12-{night + 1:02d}", f"c{night}", "0.5")
        )
        made.values.append(accept * steps)
        made.samples.append([])
        made.accept_length.append(accept)
        made.verify_steps_s.append(steps)
        made.position_accept.append([0.9, 0.8 * (0.8 if after and accept_step else 1.0)])
    return made


def test_a_step_in_step_time_is_named_by_its_first_night() -> None:
    (change,) = detect(series(12, step_at=6, tok_step=-0.05))
    assert (change.index, change.night.commit, change.attribution) == (6, "c6", "step time")
    assert change.step == pytest.approx(-0.05, abs=0.01)
    assert change.step_low < change.step < change.step_high


def test_a_drop_in_acceptance_is_attributed_to_acceptance() -> None:
    (change,) = detect(series(12, step_at=6, accept_step=-0.2))
    assert change.attribution == "acceptance"
    assert change.position_drop is not None and change.position_drop.position == 2


def test_quiet_series_rarely_have_a_change_point() -> None:
    found = sum(len(detect(series(30, noise=0.02, seed=seed))) for seed in range(20))
    assert found <= 3  # of 600 nights; the rate itself: lab/studies/changepoint_study.py


def test_a_step_below_the_minimum_effect_is_not_reported() -> None:
    assert detect(series(12, step_at=6, tok_step=-0.01), DetectionSettings(min_effect=0.02)) == []


def test_a_change_is_new_only_on_the_night_it_appears() -> None:
    grown = series(8, step_at=6, tok_step=-0.1)  # the 2nd night after: min_size
    assert new_in_last_night([grown]) != []
    longer = series(11, step_at=6, tok_step=-0.1)
    assert detect(longer) != []
    assert new_in_last_night([longer]) == []


def test_the_search_proposes_what_pelt_over_the_l2_cost_proposes() -> None:
    """KernelCPD (linear kernel), the fast search detect() runs, finds ruptures.Pelt's
    l2 breakpoints on series with and without steps."""
    import numpy as np
    import ruptures

    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(4, 60))
        signal = rng.standard_normal((n, 1))
        for _step in range(int(rng.integers(0, 3))):
            signal[int(rng.integers(0, n)) :] += rng.normal(0, 3)
        penalty = 3.0 * math.log(n)
        pelt = ruptures.Pelt(model="l2", min_size=2, jump=1).fit(signal).predict(pen=penalty)
        kernel = ruptures.KernelCPD(kernel="linear", min_size=2, jump=1).fit(signal)
        assert [int(b) for b in kernel.predict(pen=penalty)] == pelt
