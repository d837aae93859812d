"""lab/gpu/gpu-session-seed-nightly.sh: which phases run in the device time left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.data import REPO

DRIVER = REPO / "lab" / "gpu" / "gpu-session-seed-nightly.sh"


def drive(proof: Path, order: str, left_s: int) -> str:
    """The driver.log of a run of ``order`` on the simulator with ``left_s`` device seconds."""
    env = {
        **os.environ,
        "LENT_H200": "",
        "BACKEND": "sim",
        "PYTHON": sys.executable,
        "PROOF": str(proof),
        "ORDER": order,
        "LEFT_S": str(left_s),
    }
    subprocess.run(["bash", str(DRIVER)], cwd=REPO, env=env, timeout=120, check=True)
    return (proof / "driver.log").read_text()


def test_a_bisection_that_cannot_reach_one_pair_is_skipped_with_a_line(tmp_path: Path) -> None:
    log = drive(tmp_path / "proof", "bisect", 300)
    assert "skip bisect: it takes about 450 s" in log
    assert not (tmp_path / "proof" / "bisect").exists()


def test_a_phase_it_does_not_know_is_named_with_the_ones_it_does(tmp_path: Path) -> None:
    log = drive(tmp_path / "proof", "bisekt", 10_000)
    assert "no phase bisekt: the phases are" in log
    assert "bisect" in log.split("no phase bisekt: the phases are", 1)[1]


def test_a_red_night_that_could_not_re_measure_a_borderline_look_is_skipped(
    tmp_path: Path,
) -> None:
    log = drive(tmp_path / "proof", "red", 600)
    assert "skip red: it takes about 680 s, " in log
    assert not (tmp_path / "proof" / "red").exists()
