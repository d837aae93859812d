"""lab/studies/ab_stall_rule.py runs against the gate as it is now (a few seeded trials)."""

from __future__ import annotations

from pathlib import Path

from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[2] / "lab" / "studies" / "ab_stall_rule.py"


def test_plain_noise_and_heads_stalls_leave_nothing_out_and_a_base_stall_is_left_out() -> None:
    done = run_script(STUDY, "--trials", "20", "--pair-spread", "0.03", "--point-cv", "0.03")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| 3% |")]
    left_out = {(row[2], row[3]): row[4] for row in rows}
    assert left_out == {
        ("0%", "none"): "0",
        ("0%", "base"): "20",
        ("0%", "head"): "0",
        ("0%", "head-half"): "0",
        ("10%", "none"): "0",
        ("10%", "base"): "20",
        ("10%", "head"): "0",
        ("10%", "head-half"): "0",
    }, done.stdout
    # With no stall left out the verdicts are the ones without the rule, column for column.
    for row in rows:
        if row[4] == "0":
            assert row[5] == row[6] and row[7] == row[8], row
