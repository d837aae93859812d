"""lab/studies/ab_stall_rule.py runs against the gate as it is now (a few seeded trials)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[3] / "lab" / "studies" / "ab_stall_rule.py"


def test_no_sample_is_left_out_of_plain_noise_and_a_stall_is() -> None:
    done = run_script(STUDY, "--trials", "30", "--pair-spread", "0.03", "--point-cv", "0.03")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| 3% |")]
    by_stall = {(row[2], row[3]): row for row in rows}
    assert by_stall[("0%", "none")][4] == "0 in 30", done.stdout
    assert by_stall[("10%", "none")][4] == "0 in 30", done.stdout
    assert by_stall[("0%", "one")][4] == "30 in 30", done.stdout
