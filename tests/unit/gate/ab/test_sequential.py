"""gate/ab/sequential.py: Lan-DeMets boundaries and the t multipliers of the repeated intervals."""

from __future__ import annotations

import pytest

from pytest_specperf.gate.ab.sequential import spent, t_multiplier, z_boundaries

FIVE_LOOKS = (0.2, 0.4, 0.6, 0.8, 1.0)


def test_one_look_is_the_fixed_sample_quantile() -> None:
    assert z_boundaries(0.05, (1.0,), "pocock") == pytest.approx((1.95996,), abs=1e-4)


def test_pocock_type_boundaries_match_the_published_table() -> None:
    # Lan-DeMets Pocock-type spending, two-sided 5%, five equally spaced looks.
    expected = (2.438, 2.427, 2.410, 2.397, 2.386)
    assert z_boundaries(0.05, FIVE_LOOKS, "pocock") == pytest.approx(expected, abs=2e-3)


def test_obrien_fleming_type_spends_little_early_and_ends_near_the_fixed_quantile() -> None:
    bounds = z_boundaries(0.05, FIVE_LOOKS, "obrien-fleming")
    assert bounds[0] > 4 and list(bounds) == sorted(bounds, reverse=True)
    assert 1.96 < bounds[-1] < 2.1


@pytest.mark.parametrize("spending", ["pocock", "obrien-fleming"])
def test_the_whole_level_is_spent_by_the_last_look(spending: str) -> None:
    assert spent(0.02, 1.0, spending) == pytest.approx(0.02)  # type: ignore[arg-type]
    assert spent(0.02, 0.0, spending) == 0.0  # type: ignore[arg-type]


def test_the_multiplier_shrinks_with_pairs_and_exceeds_the_fixed_t_quantile() -> None:
    multipliers = [t_multiplier(0.02, n, 12, "pocock") for n in range(2, 13)]
    assert multipliers == sorted(multipliers, reverse=True)
    # A fixed-sample 98% t interval at 12 pairs uses 2.718: repeated looks must cost more.
    assert multipliers[-1] > 2.72


def test_a_look_outside_the_design_is_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        t_multiplier(0.02, 13, 12, "pocock")
