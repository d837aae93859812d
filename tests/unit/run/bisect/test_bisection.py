"""run/bisect/bisection.py: the steps from the range to the culprit, over a real repository
and the real statistics, each boot replaced by a fake that reads which commit its tree holds;
the budget's stop; the estimate said before the first step."""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path

import pytest

from pytest_specperf.cli.bisect import suite_settings
from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.results.bisect_schema import BisectResult, BisectStep
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.run.bisect import steps
from pytest_specperf.run.bisect.bisection import Bisection, BisectRequest, plan_line
from tests.support.bisect_repos import make_repository
from tests.support.points import make_point


class FakeServers:
    """Each boot serves the commit in its tree (``commit i`` in its CHANGES file): from each
    commit of ``slower`` on, that share slower (shares compound), a failed boot at the
    ``broken`` ones, 1% noise a boot."""

    def __init__(self, slower: dict[int, float], broken: set[int]) -> None:
        self.slower = slower
        self.broken = broken
        self.rng = random.Random(11)

    def speed(self, commit: int) -> float:
        return math.prod(1 - share for at, share in self.slower.items() if commit >= at)

    def _commit(self, env: tuple[tuple[str, str], ...]) -> int:
        tree = Path(dict(env)["TREE"])
        return int((tree / "CHANGES").read_text(encoding="utf-8").split()[1])

    def __call__(
        self, settings: Settings, depth: int, pair: int, order: tuple[str, str]
    ) -> tuple[dict[str, DepthRun], float]:
        assert settings.base is not None
        envs = {"head": settings.server_env, "base": settings.base.server_env}
        runs = {}
        for side in order:
            commit = self._commit(envs[side])
            failure = "server exited at boot" if commit in self.broken else None
            value = 1000.0 * self.speed(commit)
            value *= math.exp(self.rng.gauss(0, 0.01))
            points = [] if failure else [make_point(4, value, value / 4, accept_length=3.0)]
            runs[side] = DepthRun(
                depth=depth,
                profile="p",
                backend="sim",
                hardware="h",
                workload={},
                failure=failure,
                points=points,
            )
        return runs, 10.0


def bisect(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    commits: int,
    servers: FakeServers,
    said: list[str] | None = None,
) -> BisectResult:
    monkeypatch.setattr(steps, "measure_pair", servers)
    hashes = make_repository(tmp_path / "repo", commits)
    values = {"backend": "sim", "concurrency": "4"}
    settings = build_settings(lambda key: values.get(key), tmp_path)
    request = BisectRequest(
        repo=tmp_path / "repo",
        good=hashes[0],
        bad=hashes[-1],
        server_env=(("TREE", "{worktree}"),),
        build=None,
        out=tmp_path / "out",
    )
    lines = said if said is not None else []
    bisection = Bisection(settings, request, log=None, say=lines.append)
    try:
        return bisection.run()
    finally:
        bisection.remove_trees()


def test_a_candidate_that_cannot_be_served_is_skipped_and_the_culprit_still_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = bisect(tmp_path, monkeypatch, 8, FakeServers({6: 0.15}, broken={4}))
    assert found.outcome == "culprit"
    assert found.culprit == found.commits[6].sha
    walked = [(step.index, step.verdict) for step in found.steps]
    assert walked == [
        (8, "changed"),
        (4, "skipped"),
        (3, "like-good"),
        (5, "like-good"),
        (6, "like-bad"),
        (6, "confirmed"),
    ]


def test_of_two_slowdowns_the_larger_is_named_and_the_other_said_to_remain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4% slower from commit 2, a further 10% from commit 5: commit 5 is named, explaining
    about 72% of the range's change, and the rest is said to lie elsewhere. The same scenario
    on the simulator, over many bisections and with its noise, is the bisection study's
    (docs/explanation/bisect.md, ``--scenario two``)."""
    found = bisect(tmp_path, monkeypatch, 6, FakeServers({2: 0.04, 5: 0.10}, broken=set()))
    assert found.outcome == "culprit" and found.culprit == found.commits[5].sha
    assert found.remaining is not None and found.remaining.startswith("another change remains")
    assert found.explained_share is not None and 0.6 < found.explained_share < 0.85


def test_three_candidates_in_a_row_that_cannot_be_served_stop_the_bisection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = bisect(tmp_path, monkeypatch, 8, FakeServers({6: 0.15}, broken={3, 4, 5}))
    assert found.outcome == "undecided" and found.culprit is None
    assert [step.verdict for step in found.steps] == ["changed", "skipped", "skipped", "skipped"]
    assert "3 candidates in a row could not be served" in found.why
    assert found.narrowed_to == [c.sha for c in found.commits[1:]]


def test_a_good_commit_that_cannot_be_served_is_no_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = bisect(tmp_path, monkeypatch, 4, FakeServers({3: 0.15}, broken={0}))
    assert found.outcome == "undecided"
    assert [step.verdict for step in found.steps] == ["failed"]
    assert "base boot of pair 1 failed" in found.steps[0].message


def test_each_pair_is_told_as_it_is_measured_then_each_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    found = bisect(tmp_path, monkeypatch, 2, FakeServers({2: 0.15}, broken=set()), said)
    first = found.steps[0]
    told = [line for line in said if line.startswith("  step 1, pair ")]
    assert len(told) == first.pairs
    assert re.fullmatch(r"  step 1, pair 1: -1\d\.\d%; 10 server-seconds", told[0]), told
    # From the first look on, the step's change so far with its interval.
    assert re.fullmatch(
        r"  step 1, pair 3: -1\d\.\d%; so far -1\d\.\d% \[-\d+\.\d%, -\d+\.\d%\]; "
        r"10 server-seconds",
        told[2],
    ), told
    assert said.index(told[-1]) + 1 == said.index(
        next(line for line in said if line.startswith("step 1 (of at most"))
    )


def _bisection(tmp_path: Path, budget_s: float) -> Bisection:
    hashes = make_repository(tmp_path / "repo", 6)
    values = {"backend": "sim", "concurrency": "4"}
    settings = build_settings(lambda key: values.get(key), tmp_path)
    request = BisectRequest(
        repo=tmp_path / "repo",
        good=hashes[0],
        bad=hashes[6],
        server_env=(),
        build=None,
        out=tmp_path / "out",
        budget_s=budget_s,
    )
    return Bisection(settings, request, log=None, say=lambda line: None)


def _range_step(pairs: int, resumed: int, seconds: float) -> BisectStep:
    return BisectStep(
        number=1,
        kind="range",
        commit="b",
        against="g",
        index=6,
        verdict="changed",
        pairs=pairs,
        resumed_pairs=resumed,
        server_seconds=seconds,
    )


def test_a_rerun_past_the_budget_starts_no_step(tmp_path: Path) -> None:
    """Found as a new user: a bisection stopped by --budget-s after step 1, rerun with the
    same command, read step 1's pairs back and then ran step 2 anyway (the pace was taken
    from new pairs only, and a rerun had none): each rerun took one more step past the
    budget. Its pairs read back count, as they count in its cost."""
    bisection = _bisection(tmp_path, budget_s=10.0)
    bisection.steps = [_range_step(pairs=3, resumed=3, seconds=9.0)]
    bisection.server_seconds = 9.0
    assert bisection._over_budget()
    assert bisection._no_room() == (
        "the budget (--budget-s 10) leaves no room for step 2 (9 server-seconds spent)"
    )
    # 9 s spent, 3 pairs at 3 s: a step of 3 more pairs ends at 18 s.
    bisection.request = dataclasses.replace(bisection.request, budget_s=18.0)
    assert not bisection._over_budget()


def test_a_step_resumed_then_extended_paces_all_its_pairs(tmp_path: Path) -> None:
    """6 pairs read back and 1 new, 21 s: 3 s a pair (not 21 s a pair, the new pair's
    share of the step's seconds all put on it)."""
    bisection = _bisection(tmp_path, budget_s=31.0)
    bisection.steps = [_range_step(pairs=7, resumed=6, seconds=21.0)]
    bisection.server_seconds = 21.0
    assert not bisection._over_budget()


SEED_CLASS = [
    "--spec-steps=3",
    "--specperf-backend=sglang",
    "--specperf-profile=qwen3-next-real-width-fp8-mtp",
    "--specperf-concurrency=64",
    "--specperf-max-new-tokens=256",
]


def test_a_first_run_takes_one_first_boot_and_later_ones_at_the_profiles_figures(
    tmp_path: Path,
) -> None:
    settings = dataclasses.replace(suite_settings(SEED_CLASS, tmp_path), ab_max_pairs=16)
    line = plan_line(settings, 8)
    assert line.startswith("8 commit(s) after good: at most 5 steps (the range, 3 to search")
    # A step of 3 pairs: 6 boots, 240 s + 5 x 90 s, and 6 warm-ups and 6 samples at their
    # least (no baseline: 6 s and 2.5 s): 741 s; of 16 pairs, 32 boots: 3,302 s. Five steps
    # boot first once: 4 x 150 s less.
    assert line.endswith(
        "about 3,105 to 15,910 server-seconds (at least: no baseline gives the speed) (the "
        "first boot at 240 s, the later ones at 90 s, profile qwen3-next-real-width-fp8-mtp)"
    )


def test_a_rerun_takes_the_pace_of_the_pairs_in_its_log(tmp_path: Path) -> None:
    settings = dataclasses.replace(suite_settings(SEED_CLASS, tmp_path), ab_max_pairs=16)
    line = plan_line(settings, 8, [180.0, 190.0])
    # 5 steps of 3 to 16 pairs at 185 s a pair.
    assert line.endswith(
        "each 3 to 16 pairs of boots: about 2,775 to 14,800 server-seconds in all, at the "
        "185 s a pair of the 2 pair(s) in the pair log (measured: 370 server-seconds)"
    )
