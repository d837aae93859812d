"""gate/bisect.py: the decisions of a bisection's steps, and its search."""

from __future__ import annotations

import math

import pytest

from pytest_specperf.gate.ab.estimate import Estimate
from pytest_specperf.gate.bisect import (
    Search,
    candidate_outcome,
    explained_share,
    pooled_prior,
    search_steps,
)

SLOWER = math.log(0.92)  # the range's change: bad 8% slower than good


def interval(low: float, high: float) -> Estimate:
    return Estimate((low + high) / 2, 0.02, 4, (math.log1p(low), math.log1p(high)), None)


@pytest.mark.parametrize(
    ("low", "high", "outcome"),
    [
        (-0.09, -0.06, "like-bad"),  # wholly beyond half the range's change (-4.1%)
        (-0.02, 0.01, "like-good"),  # wholly on zero's side of it
        (-0.06, -0.02, "continue"),  # across the middle: another pair
    ],
)
def test_a_candidate_reads_like_the_end_its_interval_lies_towards(
    low: float, high: float, outcome: str
) -> None:
    assert candidate_outcome(interval(low, high), SLOWER, last=False) == outcome


def test_a_candidate_across_the_middle_and_zero_at_its_last_pair_is_undecided() -> None:
    assert candidate_outcome(interval(-0.06, 0.005), SLOWER, last=True) == "undecided"


def test_a_candidate_across_the_middle_and_bad_at_its_last_pair_is_undecided() -> None:
    assert candidate_outcome(interval(-0.09, -0.03), SLOWER, last=True) == "undecided"


@pytest.mark.parametrize(
    ("low", "high", "outcome"),
    [
        # changed (wholly below zero), short of bad (above -8%), nearer zero: the larger after
        (-0.06, -0.02, "between-larger-after"),
        # the same, nearer bad: the larger before
        (-0.075, -0.035, "between-larger-before"),
    ],
)
def test_a_candidate_between_zero_and_the_range_at_its_last_pair_goes_toward_the_larger(
    low: float, high: float, outcome: str
) -> None:
    """Neither like good nor like bad in its most pairs, yet changed and short of bad: two
    changes, one on each side of it; the search goes on toward the larger."""
    assert candidate_outcome(interval(low, high), SLOWER, last=True) == outcome
    assert candidate_outcome(interval(low, high), SLOWER, last=False) == "continue"


def test_a_between_candidate_narrows_the_search_toward_the_larger_change() -> None:
    after = Search([f"c{i}" for i in range(9)])
    after.learn(4, "between-larger-after")
    assert (after.good, after.bad) == (4, 8)
    before = Search([f"c{i}" for i in range(9)])
    before.learn(4, "between-larger-before")
    assert (before.good, before.bad) == (0, 4)


def test_before_the_first_look_a_candidate_has_no_interval_and_goes_on() -> None:
    assert candidate_outcome(Estimate(-0.08, None, 2, None, None), SLOWER, last=False) == "continue"


def test_an_improvement_range_is_searched_the_same_way_mirrored() -> None:
    faster = math.log(1.10)
    assert candidate_outcome(interval(0.07, 0.12), faster, last=False) == "like-bad"
    assert candidate_outcome(interval(-0.01, 0.02), faster, last=False) == "like-good"


def test_the_search_halves_what_is_left_and_ends_at_neighbours() -> None:
    """A 24-commit range: the middle first, then the middle of the half left, until the last
    like-good and the first like-bad commits are neighbours: 5 steps (ceil log2 24)."""
    search = Search([f"c{i}" for i in range(25)])
    culprit = 17
    asked = []
    while (index := search.next_candidate()) is not None:
        asked.append(index)
        search.learn(index, "like-bad" if index >= culprit else "like-good")
    assert asked == [12, 18, 15, 16, 17]
    assert (search.good, search.bad) == (16, 17)
    assert search_steps(24) == 1 + 5 + 1


def test_with_nothing_skipped_the_next_candidate_is_the_middle_of_what_is_left() -> None:
    for commits in range(2, 12):
        for good in range(commits):
            for bad in range(good + 1, commits + 1):
                search = Search([f"c{i}" for i in range(commits + 1)], good=good, bad=bad)
                expected = None if bad - good <= 1 else (good + bad) // 2
                assert search.next_candidate() == expected


def test_a_skipped_candidate_gives_way_to_the_open_commit_nearest_the_middle() -> None:
    search = Search([f"c{i}" for i in range(9)])
    assert search.next_candidate() == 4
    search.skip(4)
    assert search.next_candidate() == 3  # 3 and 5 as near: the earlier
    search.skip(3)
    assert search.next_candidate() == 5
    search.learn(5, "like-good")
    assert search.next_candidate() == 6  # 6 and 7 as near to 6.5
    search.learn(6, "like-bad")
    assert search.next_candidate() is None and (search.good, search.bad) == (5, 6)
    assert search.found


def test_only_skipped_commits_left_between_good_and_bad_ends_the_search_unfound() -> None:
    past_it = Search(["c0", "c1", "c2", "c3"])
    past_it.skip(1)
    past_it.learn(2, "like-good")
    assert past_it.next_candidate() is None and past_it.found  # 3 against its parent 2
    before_it = Search(["c0", "c1", "c2", "c3"])
    before_it.skip(1)
    before_it.learn(2, "like-bad")
    assert before_it.next_candidate() is None and not before_it.found  # 1 or 2
    with pytest.raises(ValueError, match="outside the range"):
        before_it.skip(3)


def test_a_step_that_could_not_tell_narrows_nothing() -> None:
    search = Search(["a", "b", "c"])
    with pytest.raises(ValueError, match="narrows nothing"):
        search.learn(1, "undecided")


def test_the_earlier_steps_pool_their_pair_spread_as_a_prior() -> None:
    """Each step's changes about its own mean (the commits differ, the runner does not)."""
    prior = pooled_prior([[0.01, -0.01, 0.0], [-0.09, -0.07, -0.08]], "two steps")
    assert prior is not None
    assert prior.spread == pytest.approx(0.01)
    assert prior.dof == 4
    assert pooled_prior([[0.0]], "one pair") is None


def test_the_culprit_explains_its_share_of_the_range() -> None:
    assert explained_share(math.log(0.90), math.log(0.96 * 0.90)) == pytest.approx(0.72, abs=0.01)
