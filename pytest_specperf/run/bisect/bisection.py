"""A bisection from start to end: the range, the search, the culprit (gate/bisect.py's steps).

Each step is one A/B (steps.py); before each, the time the step may take is held to
--budget-s, and after each, one progress line. The steps' pair spreads, pooled, are the prior
of the steps after them: the commits change from step to step, the runner does not. Whatever
ends the bisection (a culprit, no change, a step that could not tell, the budget, a failed
boot, Ctrl-C) it returns what it knows as a ``BisectResult``; the caller writes it. A
candidate whose own build or boot fails is skipped (as ``git bisect skip``): the search goes
on with the open commit nearest the middle, and a range left with only such commits between
its last good and first bad commit ends undecided, narrowed to them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pytest_specperf import interrupts
from pytest_specperf.config.settings import BaseSide, Settings
from pytest_specperf.gate.ab.estimate import pooled_change
from pytest_specperf.gate.ab.verdict import change_record
from pytest_specperf.gate.bisect import (
    NARROWS_TO_BAD,
    NARROWS_TO_GOOD,
    Search,
    candidate_outcome,
    culprit_confirmed,
    explained_share,
    pooled_prior,
    range_outcome,
    search_steps,
)
from pytest_specperf.results.bisect_report import change_text
from pytest_specperf.results.bisect_schema import (
    BisectCommit,
    BisectResult,
    BisectStep,
    StepKind,
    StepVerdict,
)
from pytest_specperf.results.formats import relative_change
from pytest_specperf.run.ab.budget import FIRST_LOOK
from pytest_specperf.run.ab.pairs import AbRun
from pytest_specperf.run.bisect.repository import Trees, check_repository, commit_range, resolve
from pytest_specperf.run.bisect.steps import PairLog, Sides, StepPlan, pair_changes, run_step
from pytest_specperf.run.budget import estimate

# The one-sided level at which a part of the range's change is said to remain beside the
# culprit's own (the A/B's beta side).
REMAINS_Z = 1.645
# Candidates in a row that could not be served before the bisection stops: one broken commit
# is the commit's; several in a row are more likely the runner's, and each costs a boot.
MOST_SKIPS_IN_A_ROW = 3


@dataclass(frozen=True)
class BisectRequest:
    """What the user asked: the range, how each side is served, where it all goes."""

    repo: Path
    good: str
    bad: str
    server_env: tuple[tuple[str, str], ...]
    build: str | None
    out: Path
    budget_s: float | None = None
    # The suite's options as given: they, the range and the sides make the bisection's name
    # in the pair log, so a rerun with the same arguments finds its pairs.
    suite_args: tuple[str, ...] = ()


def bisection_key(request: BisectRequest, good: str, bad: str) -> str:
    parts = [good, bad, *(f"{k}={v}" for k, v in request.server_env), request.build or ""]
    return hashlib.sha256("\0".join([*parts, *request.suite_args]).encode()).hexdigest()[:16]


def plan_line(settings: Settings, commits: int, measured: Sequence[float] = ()) -> str:
    """The estimate said before the first step: how many steps, pairs and server-seconds.

    ``measured``: the server-seconds of the pairs a rerun finds in the pair log. Their mean is
    the pace of this runner, boots and all, which the profile's figures only guess at (its
    boot estimate is a machine's first boot, with its kernels still to compile; a bisection's
    later boots reuse them and are often several times shorter)."""
    steps = search_steps(commits)
    first_look, most = FIRST_LOOK, settings.ab_max_pairs
    head = (
        f"{commits} commit(s) after good: at most {steps} steps (the range, "
        f"{steps - 2} to search, the culprit against its parent), each {first_look} to "
        f"{most} pairs of boots: about "
    )
    if measured:
        pace = sum(measured) / len(measured)
        return head + (
            f"{steps * first_look * pace:,.0f} to {steps * most * pace:,.0f} server-seconds "
            f"in all, at the {pace:,.0f} s a pair of the {len(measured)} pair(s) in the pair "
            f"log (measured: {sum(measured):,.0f} server-seconds)"
        )
    sides = dataclasses.replace(settings, base=BaseSide(python=settings.python))
    found = estimate(sides)
    low = found.first_look_s if found.first_look_s is not None else found.total_s
    # Each step's estimate starts with the run's first boot; the bisection has one.
    later = found.later_boot_s
    spare = (steps - 1) * (found.boot_s - later) if later is not None else 0.0
    boots = (
        f"every boot at {found.boot_s:g} s"
        if later is None
        else f"the first boot at {found.boot_s:g} s, the later ones at {later:g} s"
    )
    return (
        head
        + f"{steps * low - spare:,.0f} to {steps * found.total_s - spare:,.0f} server-seconds"
        + (" (at least: no baseline gives the speed)" if found.lower_bound else "")
        + f" ({boots}, {found.boot_from})"
    )


class Bisection:
    """One bisection's state: the steps so far, what they cost, the search."""

    def __init__(
        self,
        settings: Settings,
        request: BisectRequest,
        *,
        log: PairLog | None,
        say: Callable[[str], None],
    ) -> None:
        if len(settings.depths) != 1:
            raise ValueError("a bisection measures one depth")
        self.settings = settings
        self.request = request
        self.log = log
        self.say = say
        check_repository(request.repo)
        good = resolve(request.repo, request.good, "--good")
        bad = resolve(request.repo, request.bad, "--bad")
        self.commits: list[BisectCommit] = commit_range(request.repo, good, bad)
        self.key = bisection_key(request, good, bad)
        self.trees = Trees(request.repo, request.out / "worktrees")
        self.sides = Sides(
            settings=settings,
            depth=settings.depths[0],
            server_env=request.server_env,
            build=request.build,
            trees=self.trees,
            out=request.out,
        )
        self.steps: list[BisectStep] = []
        self.changes: list[list[float]] = []
        self.server_seconds = 0.0
        self.estimate = ""

    # -- the steps -----------------------------------------------------------------------------
    def run(self) -> BisectResult:
        """Every step until an outcome; Ctrl-C returns what is known, marked interrupted."""
        measured = self.log.pair_seconds() if self.log is not None else []
        self.estimate = plan_line(self.settings, len(self.commits) - 1, measured)
        self.say(f"bisect {self.commits[0].short}..{self.commits[-1].short}: {self.estimate}")
        try:
            return self._steps()
        except KeyboardInterrupt as exc:
            last = self.steps[-1] if self.steps else None
            number = (
                last.number
                if last is not None and last.verdict == "interrupted"
                else len(self.steps) + 1
            )
            return self._result(
                "undecided",
                why="rerun the same command to go on from the pairs measured",
                interrupted=f"interrupted ({interrupts.interrupt_name(exc)}) in step {number}",
            )

    def _steps(self) -> BisectResult:
        good, bad = self.commits[0], self.commits[-1]
        first = self._step("range", bad, good, len(self.commits) - 1, range_decided)
        if first.verdict != "changed":
            outcome = "no-change" if first.verdict == "no-change" else "undecided"
            why = (
                "the range's ends do not differ: the night was the machine or noise"
                if outcome == "no-change"
                else f"step 1 ({bad.short} against {good.short}) {first.verdict}: {first.message}"
            )
            return self._result(outcome, why=why)
        range_log = self._log_change(first)
        search = Search([c.sha for c in self.commits])
        skips_in_a_row = 0
        while (index := search.next_candidate()) is not None:
            if self._over_budget():
                return self._narrowed(search, self._no_room())
            middle_of, _ = self._range_estimate()
            step = self._step(
                "candidate",
                self.commits[index],
                good,
                index,
                partial(candidate_decided, middle=middle_of),
                middle_of,
            )
            if step.verdict == "skipped":
                search.skip(index)
                skips_in_a_row += 1
                if skips_in_a_row >= MOST_SKIPS_IN_A_ROW:
                    return self._narrowed(
                        search,
                        f"{skips_in_a_row} candidates in a row could not be served (the last: "
                        f"{step.message}): the runner may be at fault rather than the commits",
                    )
                continue
            skips_in_a_row = 0
            if step.verdict not in (*NARROWS_TO_GOOD, *NARROWS_TO_BAD):
                return self._narrowed(search, f"step {step.number} {step.verdict}: could not tell")
            search.learn(index, step.verdict)
        if not search.found:
            unserved = ", ".join(self.commits[i].short for i in sorted(search.skipped))
            return self._narrowed(
                search,
                f"only commits that could not be served ({unserved}) are left before the first "
                f"commit read like bad: the change is in one of them or in that commit",
            )
        culprit, parent = self.commits[search.bad], self.commits[search.bad - 1]
        if self._over_budget():
            return self._narrowed(search, self._no_room())
        last = self._step(
            "culprit", culprit, parent, search.bad, lambda run: ab_decided(run), range_log
        )
        if last.verdict != "confirmed":
            return self._narrowed(
                search,
                f"{culprit.short} read like bad, but against its parent it did not change "
                f"the way the range did ({last.verdict})",
            )
        return self._named(culprit, last, range_log)

    def _step(
        self,
        kind: StepKind,
        head: BisectCommit,
        base: BisectCommit,
        index: int,
        decided: Callable[[AbRun], bool],
        range_log: float | None = None,
    ) -> BisectStep:
        number = len(self.steps) + 1
        plan = StepPlan(number=number, kind=kind, head=head, base=base, index=index)
        prior = pooled_prior(self.changes, f"{len(self.changes)} earlier step(s) of this bisection")
        done = run_step(
            self.sides,
            plan,
            bisection=self.key,
            log=self.log,
            decided=decided,
            prior=prior,
            on_pair=lambda run, seconds: self.say(pair_line(number, run, seconds)),
        )
        run = done.comparison
        verdict: StepVerdict = (
            "skipped"
            if kind == "candidate" and done.unserved == head.sha
            else step_verdict(kind, run, range_log)
        )
        self.server_seconds += run.server_seconds
        self.changes.append(pair_changes(run))
        found = run.last
        step = BisectStep(
            number=number,
            kind=kind,
            commit=head.sha,
            against=base.sha,
            index=index,
            verdict=verdict,
            pairs=len(run.pairs),
            resumed_pairs=done.resumed,
            change=change_record(found.pooled) if found is not None else None,
            interval_level=1 - 2 * run.settings.alpha,
            server_seconds=round(run.server_seconds, 1),
            message=run.failure or (found.pooled.attribution.text() if found else ""),
        )
        self.steps.append(step)
        self.say(progress_line(step, len(self.commits) - 1, head, base))
        if done.interrupt is not None:
            raise done.interrupt
        return step

    def _log_change(self, step: BisectStep) -> float:
        assert step.change is not None
        return math.log1p(step.change.change)

    def _range_estimate(self) -> tuple[float, int]:
        """The range's change as every step so far measured it, and the pairs behind it: the
        range step's and each like-bad candidate's change against good (all read bad against
        good), weighted by pairs."""
        read = [
            (self._log_change(step), step.pairs)
            for step in self.steps
            if step.change is not None and (step.kind == "range" or step.verdict == "like-bad")
        ]
        pairs = sum(n for _, n in read)
        return sum(change * n for change, n in read) / pairs, pairs

    def _over_budget(self) -> bool:
        """Whether a step at the fewest pairs would end past --budget-s, at the pace of the
        pairs so far. Those a rerun read from the pair log count too: the budget is the whole
        bisection's, as its cost is (``server_seconds``). Before any pair, nothing is refused:
        step 1 always runs."""
        budget = self.request.budget_s
        pairs = sum(step.pairs for step in self.steps)
        if budget is None or pairs == 0:
            return False
        return self.server_seconds + FIRST_LOOK * self.server_seconds / pairs > budget

    def _no_room(self) -> str:
        return (
            f"the budget (--budget-s {self.request.budget_s:g}) leaves no room for step "
            f"{len(self.steps) + 1} ({self.server_seconds:,.0f} server-seconds spent)"
        )

    # -- the outcome ---------------------------------------------------------------------------
    def _named(self, culprit: BisectCommit, last: BisectStep, range_log: float) -> BisectResult:
        assert last.change is not None
        own = math.log1p(last.change.change)
        share = explained_share(own, range_log)
        remaining = self._remaining(own, range_log)
        result = self._result("culprit", why="")
        result.culprit = culprit.sha
        result.culprit_change = last.change
        result.explained_share = round(share, 4)
        result.remaining = remaining
        return result

    def _remaining(self, own: float, range_log: float) -> str | None:
        """Whether a part of the range's change lies elsewhere than the culprit: a candidate
        after it lay between two changes (the smaller after it), the last commit read like
        good already differs from good (its interval wholly on the range's side of zero), or
        the range's change as the steps read it less the culprit's lies beyond the noise of
        both (one-sided, in the range's direction)."""
        slower = range_log < 0
        for step in self.steps:
            if step.verdict == "between-larger-before" and step.change is not None:
                return (
                    f"another change remains after the culprit: {step.commit[:12]}, after it, "
                    f"reads {relative_change(1 + step.change.change)} against good, short of "
                    f"the range's {relative_change(math.exp(range_log))}"
                )
        before = [s for s in self.steps if s.kind == "candidate" and s.verdict in NARROWS_TO_GOOD]
        nearest = max(before, key=lambda s: s.index, default=None)
        if nearest is not None and nearest.change is not None:
            low, high = nearest.change.low, nearest.change.high
            if low is not None and high is not None and (high < 0 if slower else low > 0):
                return (
                    f"another change remains before the culprit: its side of the range, "
                    f"{nearest.commit[:12]}, already reads "
                    f"{relative_change(1 + nearest.change.change)} [{relative_change(1 + low)}, "
                    f"{relative_change(1 + high)}] against good"
                )
        prior = pooled_prior(self.changes, "")
        if prior is None:
            return None
        measured, pairs = self._range_estimate()
        se = prior.spread * math.sqrt(1 / pairs + 1 / self.steps[-1].pairs)
        rest = measured - own
        if (-rest if slower else rest) / se > REMAINS_Z:
            return (
                f"another change remains: the range's {relative_change(math.exp(measured))} "
                f"less this commit's {relative_change(math.exp(own))} leaves "
                f"{relative_change(math.exp(rest))} elsewhere in the range"
            )
        return None

    def _narrowed(self, search: Search, why: str) -> BisectResult:
        result = self._result("undecided", why=why)
        result.narrowed_to = [c.sha for c in self.commits[search.good + 1 : search.bad + 1]]
        return result

    def _result(self, outcome: str, *, why: str, interrupted: str | None = None) -> BisectResult:
        first = self.steps[0] if self.steps else None
        if first is not None and first.verdict in ("interrupted", "failed"):
            first = None  # the range's change is step 1's verdict's, not a part of its pairs'
        return BisectResult(
            outcome=outcome,  # type: ignore[arg-type]
            good=self.commits[0].sha,
            bad=self.commits[-1].sha,
            name=self.key,
            commits=list(self.commits),
            range_change=first.change if first is not None else None,
            steps=list(self.steps),
            server_seconds=round(self.server_seconds, 1),
            estimate=self.estimate,
            budget_s=self.request.budget_s,
            why=why,
            interrupted=interrupted,
        )

    def remove_trees(self) -> list[str]:
        return self.trees.remove_all()


def range_decided(run: AbRun) -> bool:
    return run.last is not None and range_outcome(run.last) != "continue"


def ab_decided(run: AbRun) -> bool:
    return run.last is not None and run.last.outcome != "continue"


def candidate_decided(run: AbRun, *, middle: float) -> bool:
    """``middle``'s end: the range's change as measured so far (its half is the middle)."""
    if run.last is None:
        return False
    last = len(run.pairs) >= run.settings.max_pairs
    return candidate_outcome(run.last.pooled.estimate, middle, last=last) != "continue"


def step_verdict(kind: StepKind, run: AbRun, range_log: float | None) -> StepVerdict:
    """What a finished step showed (gate/bisect.py's rules)."""
    if run.interrupted is not None:
        return "interrupted"
    found = run.last
    if run.failure is not None or found is None:
        return "failed"
    if kind == "range":
        outcome = range_outcome(found)
        return "undecided" if outcome == "continue" else outcome
    assert range_log is not None
    if kind == "candidate":
        verdict = candidate_outcome(found.pooled.estimate, range_log, last=True)
        return "undecided" if verdict == "continue" else verdict
    if found.outcome in ("undecided", "continue"):
        return "undecided"
    return "confirmed" if culprit_confirmed(found, range_log) else "not-confirmed"


def pair_line(number: int, run: AbRun, seconds: float) -> str:
    """``  step 3, pair 2: -16.3%; so far -16.7% [-25.0%, -8.0%]; 195 server-seconds``: after
    each pair a step measures (the interval from the first look on), so a step of many minutes
    shows it is moving."""
    own = pooled_change(run.pairs[-1])
    line = f"  step {number}, pair {len(run.pairs)}: "
    line += relative_change(math.exp(own.total)) if own is not None else "no common point"
    if run.last is not None and len(run.pairs) > 1:
        line += f"; so far {change_text(change_record(run.last.pooled))}"
    return line + f"; {seconds:,.0f} server-seconds"


def progress_line(step: BisectStep, commits: int, head: BisectCommit, base: BisectCommit) -> str:
    """``step 3 (of at most 7): 1a2b3c4d5e6f 'subject' against good 0f0f...: like-bad after 4
    pairs, -7.9% [-10.2%, -5.5%]; 62 server-seconds``"""
    figure = f", {change_text(step.change)}" if step.change is not None else ""
    resumed = f" ({step.resumed_pairs} from the pair log)" if step.resumed_pairs else ""
    subject = f" {head.subject[:50]!r}" if head.subject else ""
    why = f" ({step.message})" if step.verdict in ("skipped", "failed") and step.message else ""
    return (
        f"step {step.number} (of at most {search_steps(commits)}): {head.short}{subject} "
        f"against {base.short}: {step.verdict} after {step.pairs} pair(s){resumed}{figure}; "
        f"{step.server_seconds:,.0f} server-seconds{why}"
    )
