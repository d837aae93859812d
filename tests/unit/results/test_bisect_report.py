"""bisect.md as a stopped bisection leaves it: the range's change and the cost say what is known."""

from __future__ import annotations

from pytest_specperf.results.bisect_report import summary_markdown
from pytest_specperf.results.bisect_schema import BisectCommit, BisectResult, BisectStep
from pytest_specperf.results.schema import AbChange

GOOD, BAD = "a" * 40, "b" * 40


def stopped_in_step_one(pairs: int, server_seconds: float) -> BisectResult:
    step = BisectStep(
        number=1,
        kind="range",
        commit=BAD,
        against=GOOD,
        index=8,
        verdict="interrupted",
        pairs=pairs,
        change=AbChange(change=-0.137, low=-0.25, high=-0.02),
        server_seconds=server_seconds,
    )
    return BisectResult(
        outcome="undecided",
        good=GOOD,
        bad=BAD,
        commits=[BisectCommit(sha=GOOD), BisectCommit(sha=BAD)],
        steps=[step],
        server_seconds=server_seconds,
        why="interrupted: rerun the same command to go on from the pairs measured",
        interrupted="interrupted (SIGTERM) in step 1",
    )


def test_a_step_stopped_before_its_verdict_counts_its_pairs_and_leaves_the_range_unknown() -> None:
    summary = summary_markdown(stopped_in_step_one(pairs=2, server_seconds=370.4))
    assert "bad against good: unknown (step 1 reached no verdict)." in summary
    assert "| 1 (range) | `bbbbbbbbbbbb`  | `aaaaaaaaaaaa` | interrupted | 2 |" in summary
    assert "Cost: 1 step(s), 2 pair(s) of boots, 370 server-seconds." in summary
