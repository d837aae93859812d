"""A project directory whose baselines are the repository's: git tracks them, as in a clone
of this project, so `git status` says what a command did to them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import msgspec

from pytest_specperf.gate.baselines import BaselinePoint, load_baseline, save_baseline
from pytest_specperf.server.profiles import DEFAULT_PROFILE
from tests.support.data import REPO

SHIPPED_CALIBRATED = REPO / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"


def git(root: Path, *args: str) -> str:
    """A git command in ``root`` (as a throwaway author); its output."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def shipped_in_a_repository(root: Path) -> Path:
    """``root`` a git repository whose committed baselines/ holds the shipped calibrated
    steps-3 of the simulator; its path."""
    target = root / "baselines" / DEFAULT_PROFILE / "sim-x5" / "steps-3.json"
    target.parent.mkdir(parents=True)
    shutil.copy(SHIPPED_CALIBRATED, target)
    git(root, "init", "-q")
    git(root, "add", "baselines")
    git(root, "commit", "-q", "-m", "shipped")
    return target


def c1_baseline(root: Path, tokens: int, hardware: str = "sim-x10") -> Path:
    """The shipped simulator steps-3 cut to C=1 at ``tokens`` for ``hardware``, its figures
    under the fixed rule with floors at a tenth of them: one sample of a loaded machine never
    fails C=1 (KV and acceptance are the simulator's own, as shipped); its path under
    ``root``, a baselines directory."""
    shipped = load_baseline(SHIPPED_CALIBRATED)
    assert shipped is not None
    point = shipped.points["1"]
    one_point = msgspec.structs.replace(
        shipped,
        hardware=hardware,
        points={"1": BaselinePoint(agg_tok_s=point.agg_tok_s, per_req_tok_s=point.per_req_tok_s)},
        workload={**shipped.workload, "max_new_tokens": tokens},
        recorded_by="published",
        tolerance=msgspec.structs.replace(shipped.tolerance, throughput=0.9),
    )
    return save_baseline(root, one_point)
