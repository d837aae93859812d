"""lab/studies/seed_floor.py: the floor a merged baseline gives, now and with more machines."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.scripts import run_script

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "lab" / "studies" / "seed_floor.py"
H100 = ROOT / "baselines" / "qwen3-next-real-width-fp8-mtp" / "1x-h100-80gb-hbm3" / "steps-3.json"


def pooled_floors(output: str) -> list[float]:
    return [float(found) for found in re.findall(r"pooled -(\d+\.\d)%", output)]


def test_two_machines_give_the_five_percent_prior_and_a_third_narrows_it() -> None:
    done = run_script(STUDY, str(H100))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 machines" in done.stdout
    now, *more = pooled_floors(done.stdout)
    assert now > 10.0  # between machines taken as at least 5%
    assert len(more) == 3 and more[0] < 5.0
    assert more == sorted(more, reverse=True)
