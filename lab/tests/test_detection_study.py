"""lab/studies/detection_study.py runs against the gate as it is now (a few seeded trials)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[2] / "lab" / "studies" / "detection_study.py"


def test_study_runs_and_a_large_slowdown_is_always_red() -> None:
    arguments = ["--trials", "4", "--scenario", "a", "--repeats", "1", "--slowdowns", "0", "0.2"]
    done = run_script(STUDY, *arguments)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| a | 1 |")]
    assert len(rows) == 2, done.stdout
    slowed = rows[1].split("|")
    assert slowed[3].strip() == "20%" and slowed[4].strip() == "100.0%", rows[1]
