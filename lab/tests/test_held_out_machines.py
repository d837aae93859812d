"""lab/studies/held_out_machines.py: each machine judged against a baseline of the others."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.data import REPO
from tests.support.scripts import run_script

STUDY = REPO / "lab" / "studies" / "held_out_machines.py"
MACHINES = sorted(
    (REPO / "lab" / "runs" / "seed-class-nightly-machines" / "1x-h100-80gb-hbm3").glob(
        "*.results.json"
    )
)


def slowed(source: Path, factor: float, where: Path) -> Path:
    """A copy of a run whose throughput samples read ``factor`` times the measured ones."""
    data = json.loads(source.read_text())
    for run in data["runs"]:
        for point in run["points"]:
            for item in (point, *point["samples"]):
                for metric in ("agg_tok_s", "per_req_tok_s"):
                    item[metric] *= factor
    where.write_text(json.dumps(data))
    return where


def test_each_machine_is_judged_against_the_others_only() -> None:
    done = run_script(STUDY, *map(str, MACHINES))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(MACHINES) >= 4
    assert all(f"against {len(MACHINES) - 1} other machine(s)" in line for line in lines)


def test_a_run_a_tenth_slower_is_red_and_the_same_run_unchanged_is_not(tmp_path: Path) -> None:
    own = MACHINES[0]
    slow = slowed(own, 0.9, tmp_path / "slow.results.json")
    done = run_script(STUDY, *map(str, MACHINES), "--judge", str(slow), str(own))
    assert done.returncode == 0, done.stderr[-2000:]
    *_, slow_line, same_line = done.stdout.splitlines()
    assert slow_line.startswith("slow.results.json") and ": regression" in slow_line
    assert ": pass" in same_line, same_line


def test_slowdowns_count_the_machines_whose_night_a_share_slower_is_red() -> None:
    done = run_script(STUDY, *map(str, MACHINES), "--slowdowns", "0", "0.1")
    assert done.returncode == 0, done.stderr[-2000:]
    unchanged, tenth = done.stdout.splitlines()[-2:]
    assert unchanged.startswith(f"0% slower: red on 0 of {len(MACHINES)} machines"), unchanged
    assert tenth.startswith(f"10% slower: red on {len(MACHINES)} of {len(MACHINES)}"), tenth
    assert tenth.count("regression") == len(MACHINES)
