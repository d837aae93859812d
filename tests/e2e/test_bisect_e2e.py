"""specperf bisect on the simulator: repositories whose commits change the server it serves.

Each test builds a small repository (tests/support/bisect_repos.py) and runs the command as a
user does, in a subprocess; the statistics of many bisections at the issue's noise and range
are a study (lab/studies/bisect_study.py), not these tests.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.bisect_repos import (
    bisect_args,
    make_repository,
    noise_args,
    server_flags,
)


def bisect_command(repo: Path, good: str, bad: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest_specperf.cli",
        *bisect_args(repo, good, bad, out, suite=noise_args(0.01)),
    ]


def run_bisect(repo: Path, good: str, bad: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        bisect_command(repo, good, bad, out), capture_output=True, text=True, timeout=600
    )


def result_of(out: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((out / "bisect.json").read_text())
    return found


def test_a_slowdown_is_named_and_an_interrupted_bisection_goes_on_without_measuring_again(
    tmp_path: Path,
) -> None:
    """Six commits, 15% slower from commit 4: Ctrl-C in step 4's second pair, then the same
    command again: the interrupted step and its measured pair are in the outputs and their
    cost, the first three steps and step 4's pair are read back from the pair log, and commit
    4 is named, its change put on step time."""
    hashes = make_repository(tmp_path / "repo", 6, {4: server_flags(slowdown=0.15)})
    out = tmp_path / "out"
    command = bisect_command(tmp_path / "repo", hashes[0], hashes[6], out)
    started = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert started.stdout is not None
    seen = []
    deadline = time.monotonic() + 300
    for line in started.stdout:
        seen.append(line)
        if line.startswith("step 3 "):
            break
        assert time.monotonic() < deadline, "".join(seen)
    # Pair 2's boots start once pair 1 is measured and logged.
    while not list(out.glob("step4-*/ab/*/pair2-*")):
        assert time.monotonic() < deadline and started.poll() is None, "".join(seen)
        time.sleep(0.1)
    started.send_signal(signal.SIGINT)
    rest = started.communicate(timeout=120)[0]
    assert started.returncode == 130, "".join(seen) + rest
    first = result_of(out)
    assert first["interrupted"] == "interrupted (Ctrl-C / SIGINT) in step 4"
    assert [(s["number"], s["verdict"]) for s in first["steps"]][3:] == [(4, "interrupted")]
    interrupted = first["steps"][3]
    assert interrupted["pairs"] == 1 and interrupted["server_seconds"] > 0
    assert first["server_seconds"] == pytest.approx(
        sum(s["server_seconds"] for s in first["steps"]), abs=0.5
    )
    pairs = sum(s["pairs"] for s in first["steps"])
    assert f"Cost: 4 step(s), {pairs} pair(s) of boots" in (out / "bisect.md").read_text()
    assert "step 4 (of at most" in rest and "interrupted after 1 pair(s)" in rest
    assert "specperf: interrupted" not in rest  # the bisection's own line says it, once

    again = run_bisect(tmp_path / "repo", hashes[0], hashes[6], out)
    assert again.returncode == 0, again.stdout + again.stderr
    # The rerun's estimate is at the pace of the pairs it found; it tells of new pairs only.
    assert f"of the {pairs} pair(s) in the pair log" in again.stdout
    assert "  step 4, pair 2: " in again.stdout and "  step 4, pair 1: " not in again.stdout
    assert "  step 1, pair" not in again.stdout
    found = result_of(out)
    assert found["outcome"] == "culprit" and found["culprit"] == hashes[4]
    steps = found["steps"]
    for before, now in zip(first["steps"][:3], steps[:3], strict=True):
        assert (now["commit"], now["pairs"], now["resumed_pairs"]) == (
            before["commit"],
            before["pairs"],
            before["pairs"],
        )
    assert (steps[3]["commit"], steps[3]["resumed_pairs"]) == (interrupted["commit"], 1)
    assert steps[-1]["kind"] == "culprit" and steps[-1]["against"] == hashes[3]
    change = found["culprit_change"]
    assert change["change"] < -0.10
    assert abs(change["step_time_change"]) > abs(change["acceptance_change"])
    summary = (out / "bisect.md").read_text()
    assert f"**Culprit: `{hashes[4]}`** commit 4: server --sim-slowdown=0.15" in summary
    assert "verify steps/s" in summary
    assert not list((out / "worktrees").glob("*"))


def test_a_range_whose_ends_do_not_differ_ends_after_its_first_step(tmp_path: Path) -> None:
    hashes = make_repository(tmp_path / "repo", 3)
    done = run_bisect(tmp_path / "repo", hashes[0], hashes[3], tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    found = result_of(tmp_path / "out")
    assert (found["outcome"], found.get("culprit"), len(found["steps"])) == ("no-change", None, 1)
    assert "the range's ends do not differ" in (tmp_path / "out" / "bisect.md").read_text()
    # Its pairs live under a run of its own kind, which no nightly series reads.
    store = str(tmp_path / "out" / "history.sqlite")
    listed = subprocess.run(
        [sys.executable, "-m", "pytest_specperf.cli", "history", "show", "--history", store],
        capture_output=True,
        text=True,
    )
    assert " bisect " in listed.stdout, listed.stdout + listed.stderr


def test_a_commit_whose_server_cannot_start_is_skipped_and_the_range_narrowed_around_it(
    tmp_path: Path,
) -> None:
    """Commit 1's server exits as it starts; commit 2 is slower. Like ``git bisect skip``, the
    search goes around 1; with only 1 left before the first bad commit, it cannot say which of
    the two it is, and says so (no commit named)."""
    hashes = make_repository(tmp_path / "repo", 2, {2: server_flags(slowdown=0.15)}, broken={1})
    done = run_bisect(tmp_path / "repo", hashes[0], hashes[2], tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    found = result_of(tmp_path / "out")
    assert [step["verdict"] for step in found["steps"]] == ["changed", "skipped"]
    assert "head boot of pair 1 failed" in found["steps"][1]["message"]
    assert (found["outcome"], found.get("culprit")) == ("undecided", None)
    assert found["narrowed_to"] == hashes[1:]
    assert f"only commits that could not be served ({hashes[1][:12]}) are left" in found["why"]
    summary = (tmp_path / "out" / "bisect.md").read_text()
    assert f"- `{hashes[1][:12]}`: " in summary.split("Skipped (could not be served")[1]


def test_fewer_accepted_drafts_at_one_commit_is_named_and_put_on_acceptance(
    tmp_path: Path,
) -> None:
    hashes = make_repository(tmp_path / "repo", 4, {2: server_flags(acceptance=0.7)})
    done = run_bisect(tmp_path / "repo", hashes[0], hashes[4], tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    found = result_of(tmp_path / "out")
    assert found["culprit"] == hashes[2]
    change = found["culprit_change"]
    assert change["acceptance_change"] < -0.05
    assert abs(change["acceptance_change"]) > abs(change["step_time_change"])
