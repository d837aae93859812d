"""lab/studies/ab_study.py runs against the A/B gate as it is now (a few seeded trials)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[2] / "lab" / "studies" / "ab_study.py"


def test_study_runs_and_a_large_regression_is_always_red_and_none_is_never() -> None:
    arguments = [
        *("--trials", "6", "--frozen-trials", "2", "--boot-cv", "0.01"),
        *("--effects", "0", "0.2"),
    ]
    done = run_script(STUDY, *arguments)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("| 1% |")]
    assert [row[3].strip() for row in rows] == ["0%", "20%"], done.stdout
    no_change, regression = rows
    assert no_change[4].strip() == "0.0%" and regression[4].strip() == "100.0%", done.stdout
    # Sequential: a 20% regression is decided at once (first look: 3 pairs), nearly always.
    assert float(regression[7]) <= 4.0, done.stdout
