"""The performance model and its calibration against the seed (virtual time, no HTTP)."""

from __future__ import annotations

import random

import pytest

from pytest_specperf.sim import model
from pytest_specperf.sim.model import SEED_PROFILE as P


def test_step_time_formula_matches_design() -> None:
    assert model.decode_step_ms(P, 1, 3) == pytest.approx(15.5 + 0.264 * 4 + 0.07 * 3)
    assert model.decode_step_ms(P, 17, 3) == pytest.approx(15.5 + 0.264 * 68 + 0.21)
    assert model.decode_step_ms(P, 5, 0) == pytest.approx(15.5 + 0.264 * 5)


def test_kv_capacity_exact_and_extrapolated_positive() -> None:
    assert [model.kv_capacity(P, s) for s in (1, 2, 3)] == [455_357, 377_207, 295_931]
    assert [model.max_running_requests(P, s) for s in (1, 2, 3)] == [26, 21, 17]
    deep = [model.max_running_requests(P, s) for s in range(4, 12)]
    assert all(d >= 1 for d in deep) and deep == sorted(deep, reverse=True)
    assert model.kv_capacity(P, 0) > model.kv_capacity(P, 1)


def test_accepted_drafts_is_a_leading_success_chain() -> None:
    rng = random.Random(1)
    draws = [model.accepted_drafts(rng, 3, 0.85) for _ in range(20000)]
    assert set(draws) <= {0, 1, 2, 3}
    mean = 1 + sum(draws) / len(draws)
    assert mean == pytest.approx(model.expected_tokens_per_step(3, 0.85), rel=0.02)
    assert model.accepted_drafts(rng, 3, 1.0) == 3
    assert model.accepted_drafts(rng, 0, 1.0) == 0


def seed_deviations(steps: int) -> list[tuple[int, float, float]]:
    pts = model.SEED_TABLE[steps]
    res = model.simulate_sweep(P, steps, tuple(pts))
    return [
        (
            r.concurrency,
            r.agg_tok_s / pts[r.concurrency][0] - 1,
            r.per_req_tok_s / pts[r.concurrency][1] - 1,
        )
        for r in res
    ]


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_model_reproduces_seed_table_within_15_percent(steps: int) -> None:
    for c, d_agg, d_per in seed_deviations(steps):
        assert abs(d_agg) < 0.15, (steps, c, "agg", d_agg)
        assert abs(d_per) < 0.15, (steps, c, "per-req", d_per)


def test_model_is_comfortably_inside_the_band() -> None:
    worst = max(max(abs(a), abs(p)) for s in (1, 2, 3) for _, a, p in seed_deviations(s))
    assert worst < 0.11


def test_sampled_workload_accepts_less() -> None:
    greedy = model.simulate_point(P, 3, 1, 2, max_new_tokens=400)
    sampled = model.simulate_point(P, 3, 1, 2, max_new_tokens=400, alpha=P.alpha_sampled)
    assert sampled.accept_length < greedy.accept_length
    assert 2.9 < sampled.accept_length < 3.6


@pytest.mark.parametrize(
    ("needs", "running", "kv_used", "max_running", "budget", "admitted"),
    [
        ([10, 10, 10], 0, 0, 8, 25, 2),  # third does not fit the KV budget
        ([10, 30, 1], 0, 0, 8, 35, 1),  # no overtaking: the 1-token request waits
        ([1, 1, 1, 1], 2, 0, 3, 100, 1),  # max_running counts those already running
        ([5], 0, 96, 8, 100, 0),  # budget already used
    ],
)
def test_admission_is_fifo_under_both_limits(
    needs: list[int], running: int, kv_used: int, max_running: int, budget: int, admitted: int
) -> None:
    assert model.admit_count(needs, running, kv_used, max_running, budget) == admitted
