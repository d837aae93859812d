"""lab/gpu/red_night_target.py: the slowdown a red night has to show on one machine."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.data import REPO
from tests.support.scripts import load_script, run_script

SCRIPT = REPO / "lab" / "gpu" / "red_night_target.py"
H100 = REPO / "baselines" / "qwen3-next-real-width-fp8-mtp" / "1x-h100-80gb-hbm3" / "steps-3.json"
H100_RUNS = REPO / "lab" / "runs" / "seed-class-nightly-machines" / "1x-h100-80gb-hbm3"


def floor_of(output: str) -> float:
    """The floor the script prints, in percent (4.4 for -4.4%)."""
    found = re.search(r"floor for 3 samples: -(\d+\.\d)%", output)
    assert found is not None, output
    return float(found[1])


def target_of(output: str) -> float:
    """The ``TARGET=`` share the script prints."""
    found = re.search(r"^TARGET=(\S+)$", output, re.M)
    assert found is not None, output
    return float(found[1])


@pytest.fixture(scope="module")
def red_night() -> ModuleType:
    return load_script(SCRIPT)


def test_a_floor_under_five_percent_leaves_the_issues_five_percent(red_night: ModuleType) -> None:
    """The issue's question as asked, even where this machine's lead may hide part of it."""
    assert red_night.target(0.042, 0.015, 0.025) == 0.05


def test_a_wider_floor_adds_the_machines_lead_and_the_margin(red_night: ModuleType) -> None:
    assert red_night.target(0.067, 0.015, 0.015) == pytest.approx(0.097)


def test_a_machine_reading_below_the_baseline_does_not_shrink_the_target(
    red_night: ModuleType,
) -> None:
    assert red_night.target(0.067, -0.02, 0.015) == pytest.approx(0.082)


def test_the_sleeps_bracket_the_target_at_the_slope(red_night: ModuleType) -> None:
    """10% at 2% a ms: 5 ms, and 3.75 and 6.25 ms around it."""
    assert red_night.sleeps_around(0.10, 0.02) == [0.00375, 0.005, 0.00625]


def test_the_target_of_a_machine_on_record_passes_its_floor() -> None:
    nightly = sorted(H100_RUNS.glob("*.results.json"))[-1]
    done = run_script(SCRIPT, str(H100), str(nightly))
    assert done.returncode == 0, done.stderr[-2000:]
    floor = floor_of(done.stdout)
    target = target_of(done.stdout)
    assert target * 100 > floor
    sleeps = re.search(r"^SLEEPS=(.+)$", done.stdout, re.M)[1].split()  # type: ignore[index]
    assert len(sleeps) == 3 and sleeps == sorted(sleeps, key=float)


def test_a_baseline_without_noise_is_held_to_its_fixed_tolerance(tmp_path: Path) -> None:
    """One machine, one boot: no pooled floor; the red night has to pass the fixed 10%."""
    data = json.loads(H100.read_text())
    for point in data["points"].values():
        point["noise"] = {}
    baseline = tmp_path / "steps-3.json"
    baseline.write_text(json.dumps(data))
    nightly = sorted(H100_RUNS.glob("*.results.json"))[-1]
    done = run_script(SCRIPT, str(baseline), str(nightly))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "floor for 3 samples: -10.0% (fixed tolerance: no calibrated noise)" in done.stdout


def test_without_the_machines_nightly_the_fastest_machine_on_record_stands_in(
    tmp_path: Path,
) -> None:
    """With no nightly of this machine, its lead is the fastest machine's level on record: the
    target is the floor + that lead + the margin (the shipped H100 baseline's noise said to
    rest on 2 machines, so that its floor is wider than the issue's 5%)."""
    data = json.loads(H100.read_text())
    for point in data["points"].values():
        for noise in point["noise"].values():
            noise["machines"] = noise["boots"] = 2
    baseline = tmp_path / "steps-3.json"
    baseline.write_text(json.dumps(data))
    # Levels are stored on the log scale.
    fastest = math.exp(max(run["agg_level"] for run in data["machines"]["runs"])) - 1
    done = run_script(SCRIPT, str(baseline))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"its lead taken as the fastest machine's on record, {fastest:+.1%}" in done.stdout
    floor = floor_of(done.stdout)
    assert floor > 5.0
    target = target_of(done.stdout)
    assert target * 100 == pytest.approx(floor + fastest * 100 + 2.5, abs=0.1)


def test_a_floor_under_five_percent_on_record_targets_the_issues_five_percent() -> None:
    """The shipped H100 baseline (5 machines, floor -3.1%): the red night is the issue's 5%."""
    done = run_script(SCRIPT, str(H100))
    assert done.returncode == 0, done.stderr[-2000:]
    floor = floor_of(done.stdout)
    assert floor < 5.0
    assert "TARGET=0.0500" in done.stdout.splitlines()
