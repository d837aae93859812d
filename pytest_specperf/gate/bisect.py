"""specperf bisect's decisions: which commit of a range holds its change, step by step.

Pure: no git, no server. run/bisect/ measures; this module reads each step's A/B pairs and
says what they show. A bisection of the commits from ``good`` to ``bad`` (on ``bad``'s
first-parent line) takes these steps, each an A/B of two commits in pairs of fresh boots (gate/ab/):

1. **The range**: ``bad`` against ``good``. The A/B's own verdict decides: a regression or an
   improvement is the range's change D (log scale); no regression of the minimum effect is
   ``no-change`` (the night was the machine or noise: no culprit); undecided ends the
   bisection undecided.
2. **The search**: a candidate between the last commit known to read like ``good`` and the
   first known to read like ``bad`` (their middle), against ``good``. Its change e is *like
   bad* when the A/B's ``1 - 2 alpha`` repeated interval of e lies wholly beyond D / 2 on D's
   side, *like good* when it lies wholly on zero's side; else another pair, up to the A/B's
   most pairs. A candidate like bad was measured bad with error at most ``alpha``, one like
   good likewise, whatever the stopping (repeated intervals). With its most pairs spent, a
   candidate whose interval lies wholly between zero and D is *between two changes*: changed
   against good, and short of bad. Either side then holds a change; the search goes on
   toward the larger (``between-larger-before`` narrows as like bad, ``between-larger-after``
   as like good), and the other is said to remain. Else the step "could not tell" and the
   bisection ends undecided with the range narrowed so far. A candidate that cannot be served
   (its build or its server fails) is skipped: the next is the open commit nearest the middle.
3. **The culprit**: once the last like-good commit and the first like-bad one are neighbours,
   the first is the candidate; it is then measured against its parent, a direct A/B. Named
   as the culprit only if that A/B calls a change in D's direction: its change with its
   interval, its attribution (acceptance or step time, per draft position), and the part of
   D it explains. A range holding two changes converges on one of them (the one whose side
   of D / 2 the middle candidates fall on: the larger, when one is more than half of D) and
   says what part of D remains for the other.

The steps share one runner: the pair spread the earlier steps measured is each later step's
prior (gate/ab/prior.py, as the runner's history is for a plain A/B), so a step need not
learn the noise afresh from its own few pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_specperf.gate.ab.estimate import Estimate
from pytest_specperf.gate.ab.prior import PRIOR_DOF, PairPrior
from pytest_specperf.gate.ab.verdict import AbLook

RangeOutcome = Literal["changed", "no-change", "undecided", "continue"]
CandidateOutcome = Literal[
    "like-good",
    "like-bad",
    "between-larger-before",
    "between-larger-after",
    "undecided",
    "continue",
]
# The candidate outcomes that narrow the search toward the range's end (bad) or its start.
NARROWS_TO_BAD = ("like-bad", "between-larger-before")
NARROWS_TO_GOOD = ("like-good", "between-larger-after")
BisectOutcome = Literal["culprit", "no-change", "undecided"]


def range_outcome(found: AbLook) -> RangeOutcome:
    """Step 1, ``bad`` against ``good``: the A/B's verdict on the range as a whole."""
    if found.outcome in ("regression", "improvement"):
        return "changed"
    if found.outcome == "no-regression":
        return "no-change"
    return "undecided" if found.outcome == "undecided" else "continue"


def candidate_outcome(estimate: Estimate, range_change: float, *, last: bool) -> CandidateOutcome:
    """A candidate against ``good``: which end of the range its change e is nearer, beyond
    the noise (the repeated interval wholly on one side of D / 2); ``last``: the step's most
    pairs are spent, so not deciding now is ``undecided``."""
    if estimate.wide is not None:
        low, high = estimate.wide
        middle = range_change / 2
        toward_bad = high < middle if range_change < 0 else low > middle
        toward_good = low > middle if range_change < 0 else high < middle
        if toward_bad:
            return "like-bad"
        if toward_good:
            return "like-good"
        if last:
            return between_changes(estimate.change, low, high, range_change)
    return "undecided" if last else "continue"


def between_changes(
    change: float, low: float, high: float, range_change: float
) -> CandidateOutcome:
    """A candidate that read neither like good nor like bad in its most pairs: between two
    changes when its interval excludes both zero and D (changed, and short of bad), and then
    toward the larger of its change e and the rest D - e; else undecided."""
    slower = range_change < 0
    changed = high < 0 if slower else low > 0
    short_of_bad = low > range_change if slower else high < range_change
    if not (changed and short_of_bad):
        return "undecided"
    if abs(change) >= abs(range_change - change):
        return "between-larger-before"
    return "between-larger-after"


def culprit_confirmed(found: AbLook, range_change: float) -> bool:
    """The culprit's direct A/B (it against its parent) called a change in D's direction."""
    wanted = "regression" if range_change < 0 else "improvement"
    return found.outcome == wanted


@dataclass
class Search:
    """The range's commits (``good`` first, ``bad`` last) and what is known: the last index
    read like good, the first read like bad, and the commits that could not be served (their
    build or their server failed: skipped, as ``git bisect skip`` does, neither good nor bad)."""

    commits: Sequence[str]
    good: int = 0
    bad: int = -1
    skipped: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if len(self.commits) < 2:
            raise ValueError("a range needs a good and a bad commit")
        if self.bad < 0:
            self.bad = len(self.commits) - 1

    def next_candidate(self) -> int | None:
        """The commit nearest the middle of what is left that was not skipped, the earlier of
        two as near (with none skipped, the middle itself); None: none is left to measure."""
        open_ = [i for i in range(self.good + 1, self.bad) if i not in self.skipped]
        if not open_:
            return None
        middle = (self.good + self.bad) / 2
        return min(open_, key=lambda i: (abs(i - middle), i))

    def skip(self, index: int) -> None:
        """A candidate that could not be served: the search goes on around it."""
        if not self.good < index < self.bad:
            raise ValueError(
                f"candidate {index} is outside the range left ({self.good}, {self.bad})"
            )
        self.skipped.add(index)

    @property
    def found(self) -> bool:
        """The last like-good commit and the first like-bad one are neighbours: the latter is
        the candidate culprit. False while skipped commits lie between them."""
        return self.bad - self.good == 1

    def learn(self, index: int, outcome: str) -> None:
        if not self.good < index < self.bad:
            raise ValueError(
                f"candidate {index} is outside the range left ({self.good}, {self.bad})"
            )
        if outcome in NARROWS_TO_GOOD:
            self.good = index
        elif outcome in NARROWS_TO_BAD:
            self.bad = index
        else:
            raise ValueError(f"a {outcome} step narrows nothing")

    @property
    def left(self) -> int:
        """Commits that may still hold the change."""
        return self.bad - self.good

    def steps_left(self) -> int:
        """Search steps still needed at most: ceil(log2(left))."""
        return math.ceil(math.log2(self.left)) if self.left > 1 else 0


def search_steps(commits: int) -> int:
    """Steps a range of ``commits`` after ``good`` takes: the range, the search, the culprit."""
    return 1 + (math.ceil(math.log2(commits)) if commits > 1 else 0) + 1


def pooled_prior(steps: Sequence[Sequence[float]], where: str) -> PairPrior | None:
    """The pair spread of the steps so far (each step's pair changes about its own mean: the
    commits differ between steps, the runner does not), on their pooled degrees of freedom."""
    squares = 0.0
    dof = 0
    for changes in steps:
        if len(changes) < 2:
            continue
        mean = sum(changes) / len(changes)
        squares += sum((c - mean) ** 2 for c in changes)
        dof += len(changes) - 1
    if dof < 2:
        return None
    return PairPrior(spread=math.sqrt(squares / dof), dof=min(dof, PRIOR_DOF), where=where)


def explained_share(culprit_change: float, range_change: float) -> float:
    """The part of the range's change the culprit's own change is (both log scale)."""
    return culprit_change / range_change if range_change else math.nan
