"""Repositories whose commits change the simulated server, for specperf bisect's tests and study.

Each commit's tree may hold a ``sitecustomize.py``: with the tree on the server's Python path
(specperf bisect's default for the simulator, ``PYTHONPATH={worktree}:$PYTHONPATH``), Python
runs it as the simulator starts, and it appends simulator flags to the server's arguments:
``--sim-slowdown`` (a slower step) or ``--sim-acceptance`` (fewer accepted draft tokens).
A commit without changes to it keeps its parent's file, as a real repository keeps code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

# Only the simulator's command line carries --model-path: other Python processes that see the
# tree on their path (none should) are left alone.
_SITECUSTOMIZE = """\
import sys

if "--model-path" in sys.argv:
    sys.argv.extend({flags!r})
"""
# A commit whose server cannot start: the simulator exits before it listens.
_BROKEN = """\
import sys

if "--model-path" in sys.argv:
    raise SystemExit("bisect test repository: this commit's server is broken")
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def server_flags(slowdown: float = 0.0, acceptance: float | None = None) -> list[str]:
    """The simulator flags a commit's sitecustomize adds: slowdown as the share of tokens/s
    lost (0.08: 8% slower), acceptance as the per-draft acceptance probability."""
    flags = [f"--sim-slowdown={slowdown:g}"] if slowdown else []
    if acceptance is not None:
        flags.append(f"--sim-acceptance={acceptance:g}")
    return flags


def make_repository(
    path: Path,
    commits: int,
    changes: Mapping[int, Sequence[str]] | None = None,
    broken: Collection[int] = (),
) -> list[str]:
    """A repository of ``commits + 1`` commits (0 is good); from commit i on, the server gets
    ``changes[i]``'s flags (the latest change at or before a commit wins), except at the
    ``broken`` commits, whose server exits as it starts (the next commit mends it). Its
    hashes, oldest first."""
    changes = changes or {}
    flags: list[str] = []
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    _git(path, "config", "user.email", "bisect@example.invalid")
    _git(path, "config", "user.name", "Bisect Test")
    hashes = []
    for index in range(commits + 1):
        (path / "CHANGES").write_text(f"commit {index}\n", encoding="utf-8")
        if index in changes:
            flags = list(changes[index])
        if index in broken:
            (path / "sitecustomize.py").write_text(_BROKEN, encoding="utf-8")
        elif index in changes or index - 1 in broken:
            (path / "sitecustomize.py").write_text(
                _SITECUSTOMIZE.format(flags=flags), encoding="utf-8"
            )
        _git(path, "add", "-A")
        subject = f"commit {index}" + (
            ": server broken"
            if index in broken
            else f": server {' '.join(changes[index])}"
            if index in changes
            else ""
        )
        _git(path, "commit", "-q", "-m", subject)
        hashes.append(_git(path, "rev-parse", "HEAD"))
    return hashes


def merge_branch(path: Path, fork: str, commits: int, changes: Sequence[str] = ()) -> list[str]:
    """A branch of ``commits`` commits from ``fork``, the first giving the server ``changes``'s
    flags, merged into the checked-out branch (a merge commit, its first parent that
    branch's head). The branch's hashes, then the merge's."""
    head = _git(path, "symbolic-ref", "--short", "HEAD")
    _git(path, "checkout", "-q", "-b", f"side-{fork[:7]}", fork)
    hashes = []
    for index in range(commits):
        (path / "SIDE").write_text(f"side {index}\n", encoding="utf-8")
        if index == 0 and changes:
            (path / "sitecustomize.py").write_text(
                _SITECUSTOMIZE.format(flags=list(changes)), encoding="utf-8"
            )
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", f"side {index}")
        hashes.append(_git(path, "rev-parse", "HEAD"))
    _git(path, "checkout", "-q", head)
    _git(path, "merge", "-q", "--no-ff", "-m", "merge side", hashes[-1])
    return [*hashes, _git(path, "rev-parse", "HEAD")]


# The suite's options of the tests' bisections: one depth, one short point, the simulator fast.
SIM_SUITE_ARGS = (
    "--specperf-backend=sim",
    "--spec-steps=3",
    "--specperf-concurrency=4",
    "--specperf-max-new-tokens=128",
    "--specperf-warmup-rounds=0",
    "--specperf-min-point-seconds=0.5",
    "--specperf-sim-speedup=10",
    "--specperf-no-plots",
)


def bisect_args(
    repo: Path, good: str, bad: str, out: Path, *more: str, suite: Sequence[str] = ()
) -> list[str]:
    """``specperf bisect``'s arguments for a test's or the study's bisection on the simulator:
    ``more`` before the ``--``, the suite's fast options and ``suite`` after it."""
    return [
        "bisect",
        "--repo",
        str(repo),
        "--good",
        good,
        "--bad",
        bad,
        "--out",
        str(out),
        *more,
        "--",
        *SIM_SUITE_ARGS,
        *suite,
    ]


def noise_args(per_boot: float) -> tuple[str, ...]:
    """Per-boot noise on both sides (a fresh draw per boot: the simulator's default seed)."""
    return (f"--specperf-server-arg=--sim-noise={per_boot:g}",)
