"""A repository for ``specperf bisect`` on real SGLang: commits layered on the installed SGLang.

Builds a git repository of ``--commits`` commits after a base commit c0 (the good end), each
tree at most a few small files. From c1 on the trees hold ``sitecustomize.py``
(lab/gpu/slow_scheduler_sitecustomize.py, off); from commit ``--slow-from`` on it sleeps
``--batch-sleep-s`` before every batch of SGLang's scheduler. The other commits change only a
CHANGES file or the README, as a real history would around a regression. Given to the server
as ``--server-env 'PYTHONPATH={worktree}:$PYTHONPATH'``, each commit's tree comes before the
installed SGLang on the path and changes nothing but that.

Where the sleep goes, checked in SGLang's source (0.5.12 as in the GPU bundle, whose
scheduler.py and engine.py are byte for byte the 0.5.12 wheel's, and 0.5.23):

- The scheduler runs in its own process, started with multiprocessing's spawn method (a
  fresh interpreter inheriting the environment, so it runs this sitecustomize too):
  ``mp.set_start_method("spawn", force=True)`` in sglang/srt/entrypoints/engine.py:1305
  (0.5.23: :1995), ``mp.Process(target=run_scheduler_process_func, ...)`` at :613-614
  (0.5.23: ``mp.Process(target=target, args=args)`` at :956, target from :944-946).
- ``Scheduler.run_batch(self, batch, pp_proxy_tensors=None)`` runs once per batch:
  sglang/srt/managers/scheduler.py:2996 (0.5.23: :4614, under
  ``@scheduler_stage_method(SCHEDULER_STAGE_RUN_BATCH)``), called once per loop by
  ``event_loop_normal`` at :1552 and ``event_loop_overlap`` at :1594 (0.5.23: :2048 and
  :2109), the overlap loop being the one EAGLE/MTP runs; the pipeline-parallel, disaggregated
  and multiplexing loops call the same method. ``/slow_down`` sleeps at the same place, inside
  run_batch before the batch is launched (:3007-3009; 0.5.23: :4640-4642), so the ladder's
  figures (lab/gpu/slowdown_ladder.py) size this sleep: on the seed-class profile at C=64,
  256 tokens, 3 ms a batch cost 12.9% (an A/B red after 3 pairs,
  docs/runs/2026-12-05-ladder-slow10-h200). The default is twice that, about 20-25%: each of
  the bisection's steps then decides at or near the A/B's first look of 3 pairs, where at 3 ms
  the like-good steps (interval wholly on zero's side of half the range's change, 6%) need
  more pairs than a 3% pair spread gives in 3, and device time is what this run is short of.

The hashes are the same on every machine for the same options (fixed author, dates and git
configuration), so a bisection interrupted on one lent machine goes on from its history store
on the next one, whose repository this script builds anew.

    python lab/gpu/bisect_repo.py /tmp/bisect-repo --slow-from 5 --batch-sleep-s 0.006
    python lab/gpu/bisect_repo.py /tmp/sim-repo --sim --sim-slowdown 0.15   # the dry run

It prints one line per commit, then ``GOOD=<c0>``, ``BAD=<last>`` and ``CULPRIT=<slow-from>``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).with_name("slow_scheduler_sitecustomize.py")
SLEEP_LINE = "BATCH_SLEEP_S = 0.0\n"
FLAGS_LINE = "SIMULATOR_FLAGS: list[str] = []\n"
DEFAULT_BATCH_SLEEP_S = 0.006
# Fixed so that the same options give the same hashes on every machine.
IDENTITY = "Bisect Repo"
EMAIL = "bisect-repo@example.invalid"
FIRST_DATE = 1_767_225_600  # 2026-01-01T00:00:00Z; each commit one hour after the one before
# The harmless commits: (file, line appended, subject), taken in turn.
HARMLESS = (
    (
        "CHANGES",
        "- tokenizer: a clearer error for an empty prompt",
        "tokenizer: clearer empty-prompt error",
    ),
    (
        "README.md",
        "The scheduler's own log says when the hook is active.",
        "README: the hook's log line",
    ),
    (
        "CHANGES",
        "- docs: the server's flags listed in one table",
        "docs: one table of the server's flags",
    ),
    (
        "README.md",
        "Each commit's tree goes first on the server's PYTHONPATH.",
        "README: how the tree is layered",
    ),
    (
        "CHANGES",
        "- metrics: the batch counter named as in the server log",
        "metrics: batch counter name",
    ),
    ("README.md", "Commit c0 holds no sitecustomize.py at all.", "README: what c0 holds"),
    ("CHANGES", "- server: a typo in a log message", "server: log message typo"),
)


@dataclass(frozen=True)
class Commit:
    index: int
    sha: str
    subject: str


def sitecustomize_source(batch_sleep_s: float, simulator_flags: Sequence[str]) -> str:
    """The template with one commit's values in place of its two defaults."""
    source = TEMPLATE.read_text(encoding="utf-8")
    for line, value in (
        (SLEEP_LINE, f"BATCH_SLEEP_S = {batch_sleep_s!r}\n"),
        (FLAGS_LINE, f"SIMULATOR_FLAGS: list[str] = {list(simulator_flags)!r}\n"),
    ):
        if source.count(line) != 1:
            raise SystemExit(f"{TEMPLATE}: expected one line {line.strip()!r}")
        source = source.replace(line, value)
    return source


def git_environment(index: int) -> dict[str, str]:
    date = f"{FIRST_DATE + 3600 * index} +0000"
    return {
        **os.environ,
        # No user or system configuration (signing, hooks, templates) may change a hash.
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": IDENTITY,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": IDENTITY,
        "GIT_COMMITTER_EMAIL": EMAIL,
        "GIT_COMMITTER_DATE": date,
    }


def git(repo: Path, *args: str, index: int = 0) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env=git_environment(index),
    )
    return done.stdout.strip()


def append_line(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def build_repository(
    repo: Path,
    *,
    commits: int = 8,
    slow_from: int = 5,
    batch_sleep_s: float = DEFAULT_BATCH_SLEEP_S,
    simulator_flags: Sequence[str] = (),
) -> list[Commit]:
    """``commits + 1`` commits in ``repo`` (made; it must not hold anything yet), oldest
    first; from ``slow_from`` on, the scheduler's batches sleep ``batch_sleep_s`` (with
    ``simulator_flags``: the simulator gets those flags instead)."""
    if not 1 <= slow_from <= commits:
        raise ValueError(f"slow_from {slow_from} is not a commit of 1..{commits}")
    if repo.exists() and any(repo.iterdir()):
        raise FileExistsError(f"{repo} is not empty")
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    (repo / "README.md").write_text(
        "# Changes layered on the installed SGLang\n\n"
        "Built by pytest-specperf's lab/gpu/bisect_repo.py for `specperf bisect`.\n",
        encoding="utf-8",
    )
    append_line(repo / "CHANGES", "# Changes")
    subjects = ["start: README and CHANGES"]
    found = [Commit(0, _commit(repo, 0, subjects[0]), subjects[0])]
    for index in range(1, commits + 1):
        if index == slow_from:
            if simulator_flags:
                source = sitecustomize_source(0.0, simulator_flags)
                subject = f"simulator: {' '.join(simulator_flags)}"
            else:
                source = sitecustomize_source(batch_sleep_s, ())
                subject = f"scheduler: sleep {batch_sleep_s * 1000:g} ms before every batch"
            (repo / "sitecustomize.py").write_text(source, encoding="utf-8")
        elif index == 1:
            (repo / "sitecustomize.py").write_text(sitecustomize_source(0.0, ()), encoding="utf-8")
            subject = "sitecustomize: the scheduler hook, off (no sleep)"
        else:
            name, line, subject = HARMLESS[(index - 2) % len(HARMLESS)]
            append_line(repo / name, line)
        found.append(Commit(index, _commit(repo, index, subject), subject))
    return found


def _commit(repo: Path, index: int, subject: str) -> str:
    git(repo, "add", "-A", index=index)
    git(repo, "commit", "-q", "-m", subject, index=index)
    return git(repo, "rev-parse", "HEAD")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="where to build it (absent or empty)")
    parser.add_argument("--commits", type=int, default=8, help="commits after c0 (default 8)")
    parser.add_argument(
        "--slow-from", type=int, default=5, help="the first slow commit, 1..commits (default 5)"
    )
    parser.add_argument(
        "--batch-sleep-s",
        type=float,
        default=DEFAULT_BATCH_SLEEP_S,
        help=f"the sleep before each scheduler batch (default {DEFAULT_BATCH_SLEEP_S})",
    )
    parser.add_argument(
        "--sim",
        action="store_true",
        help="for the simulator: the slow commits add --sim-slowdown to its command line",
    )
    parser.add_argument(
        "--sim-slowdown",
        type=float,
        default=0.15,
        help="with --sim: the share of tokens/s lost (default 0.15)",
    )
    args = parser.parse_args(argv)
    flags = [f"--sim-slowdown={args.sim_slowdown:g}"] if args.sim else []
    try:
        commits = build_repository(
            args.repo,
            commits=args.commits,
            slow_from=args.slow_from,
            batch_sleep_s=args.batch_sleep_s,
            simulator_flags=flags,
        )
    except (ValueError, FileExistsError) as exc:
        print(f"bisect_repo.py: {exc}", file=sys.stderr)
        return 2
    for commit in commits:
        print(f"c{commit.index} {commit.sha} {commit.subject}")
    print(f"GOOD={commits[0].sha}")
    print(f"BAD={commits[-1].sha}")
    print(f"CULPRIT={commits[args.slow_from].sha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
