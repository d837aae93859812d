"""lab/gpu/gpu_ab_proof.py's summary gives the pairs' changes and their spread (the A/A pair
spread a placement's row in docs/runs/ab-gating-journal.md reads)."""

from __future__ import annotations

import tarfile
from types import ModuleType

import msgspec
import pytest

from pytest_specperf.results.schema import RunResults
from tests.support.data import REPO
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def proof() -> ModuleType:
    return load_script(REPO / "lab" / "gpu" / "gpu_ab_proof.py")


def test_the_h200_ab_pairs_give_their_changes_and_spread(proof: ModuleType) -> None:
    """docs/runs/2026-12-05-ladder-slow10-h200: pairs -9.5, -14.9, -14.2%."""
    tarball = REPO / "lab" / "runs" / "2026-12-05-ladder-slow10-h200" / "proof.tar.xz"
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("proof/ab/slow10/results.json")
        assert member is not None
        results = msgspec.json.decode(member.read(), type=RunResults)
    line = proof.pair_spread_line(results.ab[0].pair_changes)
    assert line == (
        "pair changes: -9.5%, -14.9%, -14.2%; their spread 3.3% (standard deviation, log scale)"
    )
