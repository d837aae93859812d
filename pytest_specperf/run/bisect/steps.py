"""One step of a bisection: the A/B of two commits, each side's server started from its tree.

A step is A/B mode's comparison (run/ab/pairs.py ``run_ab``, its boots run/ab/boots.py) with
the head side served from one commit's tree and the base side from another's: both take the
bisection's suite options, and each gets the --server-env pairs with ``{worktree}`` its own
tree. What stops it is the step's rule (gate/bisect.py); every pair is handed to the
bisection's pair log as soon as it is measured, and a step of an interrupted bisection starts
from the pairs the log holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

import msgspec

from pytest_specperf.config.settings import BaseSide, Settings
from pytest_specperf.gate.ab.estimate import Pair, pooled_change
from pytest_specperf.gate.ab.prior import PairPrior
from pytest_specperf.results.bisect_schema import BisectCommit, StepKind
from pytest_specperf.run.ab.boots import measure_pair
from pytest_specperf.run.ab.pairs import AbRun, Decided, ab_settings, run_ab
from pytest_specperf.run.bisect.repository import BuildFailed, Trees, build, side_environment


@dataclass(frozen=True)
class LoggedPair:
    """One measured pair of a step as the log keeps it: its number in the step (0 first), the
    pair's figures, the seconds its servers were up and the order its sides booted."""

    index: int
    pair: Pair
    seconds: float
    order: tuple[str, str]

    def encode(self) -> bytes:
        return msgspec.json.encode(self.pair)

    @staticmethod
    def decode(index: int, pair_json: bytes | str, seconds: float, order: str) -> LoggedPair:
        base, head = order.split(",")
        return LoggedPair(index, msgspec.json.decode(pair_json, type=Pair), seconds, (base, head))


class PairLog(Protocol):
    """Where a bisection keeps every pair it measured (the history store's, history/)."""

    def recorded(self, step: str) -> list[LoggedPair]: ...

    def record(self, step: str, logged: LoggedPair, *, base: str, head: str) -> None: ...

    def pair_seconds(self) -> list[float]: ...


@dataclass(frozen=True)
class StepPlan:
    """What one step measures: ``head`` against ``base``; ``index``: head's place in the range."""

    number: int
    kind: StepKind
    head: BisectCommit
    base: BisectCommit
    index: int


@dataclass(frozen=True)
class Sides:
    """How each side of every step is served: the suite's options, the --server-env pairs
    (``{worktree}`` in a value is the side's tree), --build, and where trees and logs go."""

    settings: Settings
    depth: int
    server_env: Sequence[tuple[str, str]]
    build: str | None
    trees: Trees
    out: Path


def step_key(bisection: str, base: str, head: str, kind: StepKind) -> str:
    """A step's name in the pair log: the bisection's and the two commits'; the culprit's
    also its kind. Its two commits may be an earlier step's (a culprit right after good is a
    candidate's head against good, or the range's own ends), and the confirmation is a fresh
    A/B, not that step's pairs read again. The other steps' names are as before, so the pair
    log of a bisection interrupted by an earlier version still serves its rerun."""
    parts = [bisection, base, head, *(["culprit"] if kind == "culprit" else [])]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def step_settings(sides: Sides, plan: StepPlan) -> Settings:
    """The suite's settings for one step: head served from ``plan.head``'s tree, base from
    ``plan.base``'s, each built first when --build is given."""
    trees = {commit.sha: sides.trees.tree(commit.sha) for commit in (plan.base, plan.head)}
    if sides.build is not None:
        for sha, tree in trees.items():
            build(sides.build, sha, tree, sides.out / "builds")
    settings = sides.settings
    return dataclasses.replace(
        settings,
        out_dir=sides.out / f"step{plan.number}-{plan.head.short}",
        server_env=side_environment(sides.server_env, trees[plan.head.sha]),
        base=BaseSide(
            python=settings.python,
            server_args=settings.server_args,
            server_env=side_environment(sides.server_env, trees[plan.base.sha]),
        ),
    )


@dataclass(frozen=True)
class StepRun:
    """A step's comparison as it ended, how many of its pairs an earlier run measured, the
    interrupt that ended it (the bisection records the step as far as it got, then raises it),
    and the commit that could not be served when one side's build or boot failed and the
    other's did not."""

    comparison: AbRun
    resumed: int
    interrupt: KeyboardInterrupt | None = None
    unserved: str | None = None


def run_step(
    sides: Sides,
    plan: StepPlan,
    *,
    bisection: str,
    log: PairLog | None,
    decided: Decided,
    prior: PairPrior | None,
    on_pair: Callable[[AbRun, float], None] | None = None,
) -> StepRun:
    """The step's pairs until ``decided``: those the log holds first, then new ones, each
    logged as soon as it is measured. A Ctrl-C or a signal ends the step with the pairs it has
    (``StepRun.interrupt``). ``on_pair(comparison, seconds)``: after each new pair, with the
    seconds its servers were up."""
    key = step_key(bisection, plan.base.sha, plan.head.sha, plan.kind)
    earlier = log.recorded(key) if log is not None else []
    resumed = AbRun(
        depth=sides.depth,
        settings=ab_settings(sides.settings),
        pairs=[logged.pair for logged in earlier],
        server_seconds=sum(logged.seconds for logged in earlier),
        boots=[side for logged in earlier for side in logged.order],
        prior=prior,
    )
    try:
        settings = step_settings(sides, plan)
    except BuildFailed as exc:
        resumed.failure = str(exc)
        return StepRun(resumed, len(earlier), unserved=exc.sha)
    logged = {"pairs": len(earlier), "seconds": resumed.server_seconds}

    def record(result: AbRun) -> None:
        if len(result.pairs) <= logged["pairs"]:
            return  # the call of an interrupt: no new pair
        index = len(result.pairs) - 1
        order = (result.boots[2 * index], result.boots[2 * index + 1])
        seconds = result.server_seconds - logged["seconds"]
        if log is not None:
            entry = LoggedPair(index, result.pairs[index], seconds, order)
            log.record(key, entry, base=plan.base.sha, head=plan.head.sha)
        logged.update(pairs=len(result.pairs), seconds=result.server_seconds)
        if on_pair is not None:
            on_pair(result, seconds)

    try:
        comparison = run_ab(
            settings,
            sides.depth,
            measure=partial(measure_pair, settings, sides.depth),
            record=record,
            resumed=resumed,
            decided=decided,
        )
    except KeyboardInterrupt as exc:
        # run_ab marked ``resumed`` (the comparison it extends) interrupted and logged its pairs.
        return StepRun(resumed, len(earlier), interrupt=exc)
    sides_of = {"base": plan.base.sha, "head": plan.head.sha}
    return StepRun(comparison, len(earlier), unserved=sides_of.get(comparison.failed_side or ""))


def pair_changes(comparison: AbRun) -> list[float]:
    """Each pair's pooled log change (gate/ab/estimate.py), for the next steps' prior."""
    return [c.total for c in (pooled_change(p) for p in comparison.pairs) if c is not None]
