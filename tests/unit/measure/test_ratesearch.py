"""The SLO rate search: bracket, then bisect, in a bounded number of probes."""

from __future__ import annotations

from pytest_specperf.measure.ratesearch import MAX_PROBES, next_rate, search_result
from pytest_specperf.results.schema import RateProbe


def probe(rate: float, capacity: float) -> RateProbe:
    meets = rate <= capacity
    return RateProbe(
        rate=rate,
        meets_slo=meets,
        attainment=1.0 if meets else 0.5,
        goodput_tok_s=rate,
        agg_tok_s=rate,
        achieved_rate=rate,
    )


def search(rates: list[float], capacity: float) -> tuple[list[RateProbe], str]:
    probes = [probe(rate, capacity) for rate in rates]
    searched = 0
    while True:
        rate, why = next_rate(probes, searched=searched)
        if rate is None:
            return probes, why
        probes.append(probe(rate, capacity))
        searched += 1


def test_a_bracket_is_bisected_to_within_ten_percent() -> None:
    probes, why = search([2.0, 16.0], capacity=5.0)
    found = search_result(probes, why)
    assert why == "resolution"
    assert found.max_rate is not None and found.high is not None
    assert found.max_rate <= 5.0 < found.high <= found.max_rate * 1.1


def test_every_rate_met_doubles_until_one_misses() -> None:
    probes, why = search([1.0, 2.0], capacity=9.0)
    found = search_result(probes, why)
    assert found.max_rate is not None and 8.1 < found.max_rate <= 9.0


def test_no_rate_met_halves_and_gives_up() -> None:
    probes, why = search([4.0], capacity=0.01)
    assert search_result(probes, why).max_rate is None
    assert why in ("no rate met", "probes")


def test_the_probes_are_bounded() -> None:
    probes, why = search([1.0], capacity=1e9)
    assert len(probes) == 1 + MAX_PROBES and why == "probes"
