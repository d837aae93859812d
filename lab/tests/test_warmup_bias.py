"""lab/studies/warmup_bias.py --records: how low the first sample of a recorded boot reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.data import REPO
from tests.support.scripts import run_script

STUDY = REPO / "lab" / "studies" / "warmup_bias.py"
SIXTH = (
    REPO
    / "lab"
    / "runs"
    / "seed-class-nightly-machines"
    / "1x-h100-80gb-hbm3"
    / "2026-12-06-seed-nightly-h100-sixth.results.json"
)


def summary(output: str) -> tuple[int, int, float]:
    found = re.search(r"first sample lowest in (\d+) of (\d+) boots .*: ([\d.]+)%\)", output)
    assert found, output
    return int(found[1]), int(found[2]), float(found[3])


def reversed_samples(source: Path, where: Path) -> Path:
    """A copy of a run whose samples of each point are in the opposite order."""
    data = json.loads(source.read_text())
    for run in data["runs"]:
        for point in run["points"]:
            point["samples"].reverse()
    where.write_text(json.dumps(data))
    return where


def test_a_boot_whose_first_sample_is_lowest_counts_with_the_chance_of_its_order() -> None:
    done = run_script(STUDY, "--records", str(SIXTH))
    assert done.returncode == 0, done.stderr[-2000:]
    # 3,946.0 then 4,134.7 and 4,088.6: lowest first, a 1-in-3 chance by order alone.
    assert summary(done.stdout) == (1, 1, 33.33)
    assert "| 0.960 | yes |" in done.stdout


def test_the_same_samples_in_another_order_do_not_count(tmp_path: Path) -> None:
    done = run_script(STUDY, "--records", str(reversed_samples(SIXTH, tmp_path / "r.json")))
    assert done.returncode == 0, done.stderr[-2000:]
    lowest, boots, _ = summary(done.stdout)
    assert (lowest, boots) == (0, 1)
    assert "| no |" in done.stdout


def test_every_row_of_the_recorded_runs_is_in_the_count() -> None:
    records = sorted((REPO / "lab" / "runs" / "seed-class-nightly-machines").glob("*/*.json"))
    done = run_script(STUDY, "--records", *map(str, records))
    assert done.returncode == 0, done.stderr[-2000:]
    lowest, boots, _ = summary(done.stdout)
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    rows = table[2:]  # below the header and its rule
    assert len(rows) == boots
    assert sum(" | yes | " in row for row in rows) == lowest
