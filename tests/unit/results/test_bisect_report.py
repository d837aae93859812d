"""bisect.md as a stopped bisection leaves it: the range's change and the cost say what is known;
another bisection's outputs in --out set aside."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.results.bisect_report import set_aside_other, summary_markdown, write_outputs
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
        why="rerun the same command to go on from the pairs measured",
        interrupted="interrupted (SIGTERM) in step 1",
    )


def test_a_step_stopped_before_its_verdict_counts_its_pairs_and_leaves_the_range_unknown() -> None:
    summary = summary_markdown(stopped_in_step_one(pairs=2, server_seconds=370.4))
    assert "bad against good: unknown (step 1 reached no verdict)." in summary
    assert (
        "\nInterrupted (SIGTERM) in step 1: rerun the same command to go on from the pairs "
        "measured.\n" in summary
    )
    assert summary.lower().count("interrupted (sigterm)") == 1
    assert "| 1 (range) | `bbbbbbbbbbbb`  | `aaaaaaaaaaaa` | interrupted | 2 |" in summary
    assert "Cost: 1 step(s), 2 pair(s) of boots, 370 server-seconds." in summary


def earlier_bisection(out: Path, name: str) -> None:
    """A bisection's outputs in ``out``: bisect.json and .md, a step's boots, the pair log."""
    result = msgspec.structs.replace(stopped_in_step_one(1, 10.0), name=name)
    write_outputs(result, out)
    (out / "step1-bbbbbbbbbbbb" / "ab" / "steps3" / "pair1-base").mkdir(parents=True)
    (out / "history.sqlite").write_text("pairs")


def test_another_bisections_outputs_in_out_are_set_aside(tmp_path: Path) -> None:
    """Found as a new user reusing --out for another range: the earlier bisection's step
    folders stayed beside the new one's, and a step folder of the same name (step 4 of the
    same commit) took the new boots over the earlier's, those of its later pairs left in."""
    earlier_bisection(tmp_path, "k1")
    moved = set_aside_other(tmp_path, "k2", GOOD, "c" * 40)
    assert {"bisect.json", "bisect.md", "step1-bbbbbbbbbbbb"} <= set(moved)
    assert (tmp_path / "previous" / "step1-bbbbbbbbbbbb" / "ab").is_dir()
    assert not (tmp_path / "step1-bbbbbbbbbbbb").exists()
    assert not (tmp_path / "bisect.json").exists()
    assert (tmp_path / "history.sqlite").read_text() == "pairs"


@pytest.mark.parametrize(("name", "bad"), [("k1", "c" * 40), ("", BAD)])
def test_a_rerun_of_the_same_bisection_keeps_its_outputs(
    tmp_path: Path, name: str, bad: str
) -> None:
    """The same name; or none (an earlier version's bisect.json) and the same range."""
    earlier_bisection(tmp_path, name)
    assert set_aside_other(tmp_path, "k1", GOOD, bad) == []
    assert (tmp_path / "step1-bbbbbbbbbbbb" / "ab").is_dir()


def test_no_plots_leaves_the_picture_out(tmp_path: Path) -> None:
    """Found as a new user: --specperf-no-plots after '--' still drew bisect.png."""
    written = write_outputs(stopped_in_step_one(1, 10.0), tmp_path, plots=False)
    assert [path.name for path in written] == ["bisect.json", "bisect.md"]
    assert not (tmp_path / "bisect.png").exists()


def named(own: AbChange, whole: AbChange) -> BisectResult:
    """A culprit named with its own change against its parent, the range's change beside it."""
    return BisectResult(
        outcome="culprit",
        good=GOOD,
        bad=BAD,
        commits=[BisectCommit(sha=GOOD), BisectCommit(sha=BAD)],
        culprit=BAD,
        culprit_change=own,
        range_change=whole,
        explained_share=math.log1p(own.change) / math.log1p(whole.change),
    )


def test_a_culprit_smaller_than_the_range_explains_its_share() -> None:
    summary = summary_markdown(
        named(AbChange(change=-0.10, low=-0.12, high=-0.08), AbChange(change=-0.14))
    )
    assert "- explains 70% of the range's change" in summary


def test_a_culprit_read_larger_than_the_range_within_its_noise_explains_all_of_it() -> None:
    """The real-SGLang bisection's culprit: -15.6% [-20.5%, -10.5%] against its parent, the
    range -12.6%: 126%, one change measured twice."""
    summary = summary_markdown(
        named(AbChange(change=-0.156, low=-0.205, high=-0.105), AbChange(change=-0.126))
    )
    assert "- explains all of the range's change: its own -15.6% against the range's" in summary
    assert "(126%) is the two measurements' noise" in summary


def test_a_culprit_larger_than_the_range_beyond_its_interval_says_part_was_won_back() -> None:
    summary = summary_markdown(
        named(AbChange(change=-0.20, low=-0.23, high=-0.17), AbChange(change=-0.08))
    )
    assert "- its own -20.0% is more than the range's -8.0% (268%)" in summary
    assert "won part of it back" in summary


def test_a_culprit_read_larger_than_the_range_beside_another_change_keeps_its_figure() -> None:
    """The simulator's two slowdowns: a culprit read at 106% of the range while the commit
    before it already differs from good; "all of the range's change" would contradict it."""
    result = named(AbChange(change=-0.11, low=-0.14, high=-0.08), AbChange(change=-0.104))
    result.remaining = "another change remains before the culprit: its side of the range"
    summary = summary_markdown(result)
    assert "- explains 106% of the range's change" in summary
    assert "all of the range's change" not in summary
