"""run/ab/pairs.py (and boots.py's base side): pairs of boots in ABBA order until gate/ab/
decides, and the comparison as results.json keeps it (boots replaced by fakes)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.results.schema import AbComparison, DepthRun
from pytest_specperf.run.ab.boots import base_settings
from pytest_specperf.run.ab.pairs import boot_order, run_ab
from tests.support.points import make_point


def settings(tmp_path: Path, **options: object) -> Settings:
    values: dict[str, object] = {"backend": "sim", "concurrency": "1,4", **options}
    return build_settings(lambda key: values.get(key), tmp_path)


def _run(agg: dict[int, float], failure: str | None = None) -> DepthRun:
    return DepthRun(
        depth=3,
        profile="p",
        backend="sim",
        hardware="h",
        workload={},
        failure=failure,
        points=[
            make_point(c, value, value, requests=1, tokens=1, accept_length=3.0)
            for c, value in agg.items()
        ],
    )


class FakeBoots:
    """Each boot: its own boot factor (1% CV); head is ``change`` slower or faster."""

    def __init__(self, change: float) -> None:
        self.change = change
        self.rng = random.Random(7)
        self.booted: list[str] = []

    def __call__(self, pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        runs = {}
        for side in order:
            self.booted.append(side)
            factor = math.exp(self.rng.gauss(0, 0.01)) * (1 + self.change if side == "head" else 1)
            runs[side] = _run({1: 100.0 * factor, 4: 350.0 * factor})
        return runs, 20.0


def test_no_base_option_is_not_ab_mode_and_any_one_is(tmp_path: Path) -> None:
    assert not settings(tmp_path).ab_mode
    assert settings(tmp_path, base_server_arg=["--sim-seed=1"]).ab_mode
    assert settings(tmp_path, base_url="http://127.0.0.1:9").ab_mode


def test_the_base_side_gets_its_own_flags_python_and_no_injected_slowdown(tmp_path: Path) -> None:
    head = settings(
        tmp_path,
        server_arg=["--sim-slowdown=0.1"],
        base_server_arg=["--sim-seed=1"],
        base_python="/opt/base/bin/python",
        inject_slowdown="0.01",
    )
    base = base_settings(head)
    assert base.server_args == ("--sim-seed=1",) and base.python == "/opt/base/bin/python"
    assert base.inject_slowdown_s is None and head.inject_slowdown_s == 0.01


def test_boots_alternate_abba() -> None:
    assert [side for pair in range(4) for side in boot_order(pair)] == [
        "base",
        "head",
        "head",
        "base",
        "base",
        "head",
        "head",
        "base",
    ]


def test_a_clear_regression_stops_at_the_first_look_and_counts_its_cost(tmp_path: Path) -> None:
    boots = FakeBoots(-0.10)
    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=boots)
    assert found.last is not None and found.last.outcome == "regression"
    assert len(found.pairs) == 3 and found.server_seconds == 60.0
    assert found.boots == ["base", "head", "head", "base", "base", "head"]


def test_the_record_keeps_every_pair_in_boot_order(tmp_path: Path) -> None:
    boots = FakeBoots(-0.10)
    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=boots)
    kept = found.comparison().pair_changes
    assert [p.pair for p in kept] == [1, 2, 3]
    assert all(p.change < 0 for p in kept)


def test_no_change_is_no_regression(tmp_path: Path) -> None:
    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=FakeBoots(0.0))
    assert found.last is not None and found.last.outcome == "no-regression"


def test_a_failed_boot_ends_the_comparison_with_the_reason(tmp_path: Path) -> None:
    def measure(pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        return {"base": _run({1: 100.0}), "head": _run({}, failure="server exited at boot")}, 5.0

    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=measure)
    assert found.failure == "steps=3 A/B: the head boot of pair 1 failed: server exited at boot"
    assert found.last is None
    assert found.failed_side == "head"


def test_both_boots_of_a_pair_failing_is_no_one_sides_failure(tmp_path: Path) -> None:
    def measure(pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        return {side: _run({}, failure="no GPU") for side in order}, 5.0

    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=measure)
    assert found.failed_side == "both"
    assert found.failure == "steps=3 A/B: the base boot of pair 1 failed: no GPU"


def test_an_error_of_a_pair_ends_the_comparison(tmp_path: Path) -> None:
    def measure(pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        raise SpecperfError("no free port")

    found = run_ab(settings(tmp_path, base_server_arg=["--sim-seed=1"]), 3, measure=measure)
    assert found.failure == "steps=3 A/B: pair 1: no free port"


def test_max_pairs_below_the_first_look_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--specperf-ab-max-pairs: at least 3"):
        settings(tmp_path, ab_max_pairs="2")


def test_ab_mode_never_records_a_baseline(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="neither reads nor writes baseline files"):
        settings(tmp_path, base_server_arg=["--sim-seed=1"], update_baselines="1")


def test_an_interrupted_comparison_records_the_pairs_it_measured_then_raises(
    tmp_path: Path,
) -> None:
    boots = FakeBoots(0.0)

    def measure(pair: int, order: tuple[str, str]) -> tuple[dict[str, DepthRun], float]:
        if pair == 2:
            raise KeyboardInterrupt
        return boots(pair, order)

    recorded: list[AbComparison] = []
    with pytest.raises(KeyboardInterrupt):
        run_ab(
            settings(tmp_path, base_server_arg=["--sim-seed=1"]),
            3,
            measure=measure,
            record=lambda found: recorded.append(found.comparison()),
        )
    last = recorded[-1]
    assert last.outcome == "interrupted" and last.pairs == 2
    assert [p.pair for p in last.pair_changes] == [1, 2]
    assert last.message.startswith(
        "steps=3 A/B: interrupted (Ctrl-C / SIGINT) during pair 3, after 2 measured pair(s); "
        "at the last look: steps=3 A/B: not decided yet after 2 pair(s)"
    )


def test_every_pair_is_recorded_as_it_is_measured(tmp_path: Path) -> None:
    recorded: list[int] = []
    run_ab(
        settings(tmp_path, base_server_arg=["--sim-seed=1"]),
        3,
        measure=FakeBoots(-0.10),
        record=lambda found: recorded.append(len(found.pairs)),
    )
    assert recorded == [1, 2, 3]
