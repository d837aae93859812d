"""lab/gpu/poll.sh: a poll of the background driver brings back what is there, always."""

from __future__ import annotations

import os
import subprocess
import tarfile
import time
from pathlib import Path

from tests.support.data import REPO

POLL = REPO / "lab" / "gpu" / "poll.sh"


def poll(proof: Path, out: Path, seconds: int, pattern: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(POLL), str(seconds), pattern],
        env={**os.environ, "PROOF": str(proof), "OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_wait_that_runs_out_still_tars_what_the_phase_wrote(tmp_path: Path) -> None:
    proof, out = tmp_path / "proof", tmp_path / "out"
    (proof / "red").mkdir(parents=True)
    out.mkdir()
    (proof / "driver.log").write_text("red 2026-12-06T10:32:09Z\n")
    (proof / "red" / "results.json").write_text("{}")
    done = poll(proof, out, 1, "^end ")
    assert done.returncode == 0, done.stderr
    assert "red 2026-12-06T10:32:09Z" in done.stdout
    with tarfile.open(out / "proof.tar.gz") as tar:
        assert "proof/red/results.json" in tar.getnames()


def test_the_line_awaited_ends_the_wait(tmp_path: Path) -> None:
    proof, out = tmp_path / "proof", tmp_path / "out"
    proof.mkdir()
    out.mkdir()
    (proof / "driver.log").write_text("end 2026-12-06T10:45:00Z\n")
    started = time.monotonic()
    done = poll(proof, out, 30, "^end ")
    assert done.returncode == 0 and time.monotonic() - started < 20
    assert (out / "proof.tar.gz").is_file()
