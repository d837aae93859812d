"""The repository a bisection walks: its commits, a checked-out tree per commit, their builds.

Plain git through subprocess (the user's own git, as they would type it). Each commit a step
measures gets its own tree, a ``git worktree`` under the bisection's folder, reused by later
steps and removed at the end; ``--build``, when given, runs once per commit in that tree (its
log kept, a marker left in the tree's git folder when it succeeded, so it goes with the
tree): no commit is built twice in one tree, and a tree made afresh, by a rerun after the
end removed the last one, is built again (with --keep-worktrees its build stays).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pytest_specperf.errors import SpecperfError, UsageError
from pytest_specperf.results.bisect_schema import BisectCommit

WORKTREE = "{worktree}"
BUILT = "specperf-built"  # the marker of a tree's --build, in the tree's git folder
_FIELD = "\x1f"


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``'s output; its own message, one line, when it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise SpecperfError(f"git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise SpecperfError(f"git {' '.join(args)}: {said[-1] if said else 'failed'}")
    return done.stdout


def check_repository(repo: Path) -> None:
    """``--repo`` refused in one line unless it is a git checkout (else every revision would
    read as "not a commit of" it)."""
    if not repo.is_dir():
        raise UsageError(f"--repo: {repo} is not a directory")
    try:
        git(repo, "rev-parse", "--git-dir")
    except SpecperfError:
        raise UsageError(f"--repo: {repo} is not a git repository") from None


def resolve(repo: Path, revision: str, option: str) -> str:
    """A revision's full commit hash; a one-line usage error naming the option otherwise."""
    try:
        # Named first, then peeled: ``^{commit}`` after a ``:/message`` would be its text.
        found = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", revision)
        return git(repo, "rev-parse", "--verify", "--quiet", f"{found.strip()}^{{commit}}").strip()
    except SpecperfError:
        raise UsageError(f"{option}: {revision!r} is not a commit of {repo}") from None


def commit_range(repo: Path, good: str, bad: str) -> list[BisectCommit]:
    """``good``, then each commit of ``bad``'s first-parent line after it, oldest first: each
    commit's parent is the one before it (a branch merged in the range is its merge commit,
    as ``git bisect --first-parent`` walks; taken commit by commit, the commits of two
    branches interleave by date, and a commit of one would be measured against the other's
    as if against its parent)."""
    if good == bad:
        raise UsageError("--good and --bad name the same commit: there is nothing to bisect")
    try:
        git(repo, "merge-base", "--is-ancestor", good, bad)
    except SpecperfError:
        raise UsageError(
            f"--good {good[:12]} is not an ancestor of --bad {bad[:12]}: give the last good "
            "night's commit first, then the red one's"
        ) from None
    lines = git(repo, "rev-list", "--reverse", "--first-parent", "--parents", f"{good}..{bad}")
    chain = [line.split() for line in lines.splitlines()]
    if chain[0][1:2] != [good]:
        # Where the line meets good's history (none: it ends at a root of its own).
        joined = chain[0][1:2]
        meets = f", e.g. {joined[0][:12]}, where it meets --good's history" if joined else ""
        raise UsageError(
            f"--good {good[:12]} is not on the first-parent line of --bad {bad[:12]} (its "
            f"branch was merged in): give --good a commit of that line{meets}"
        )
    return [describe(repo, sha) for sha in [good, *(line[0] for line in chain)]]


def describe(repo: Path, sha: str) -> BisectCommit:
    text = git(repo, "show", "-s", f"--format=%H{_FIELD}%s{_FIELD}%an <%ae>{_FIELD}%cI", sha)
    full, subject, author, date = [*text.rstrip("\n").split(_FIELD), "", "", ""][:4]
    return BisectCommit(sha=full, subject=subject, author=author, date=date)


def with_tree(value: str, tree: Path) -> str:
    """``{worktree}`` in an --server-env or --build value, replaced by that commit's tree."""
    return value.replace(WORKTREE, str(tree))


class BuildFailed(SpecperfError):
    """``--build`` failed for one commit (``sha``): that commit cannot be served."""

    def __init__(self, message: str, sha: str) -> None:
        super().__init__(message)
        self.sha = sha


class Trees:
    """One checked-out tree per commit under ``root``, made on first use and reused."""

    def __init__(self, repo: Path, root: Path) -> None:
        self.repo = repo
        self.root = root
        self.made: list[Path] = []

    def tree(self, sha: str) -> Path:
        path = self.root / sha[:12]
        if (path / ".git").exists():
            head = git(path, "rev-parse", "HEAD").strip()
            if head == sha:
                return path
            git(path, "checkout", "--quiet", "--detach", sha)
            return path
        self.root.mkdir(parents=True, exist_ok=True)
        git(self.repo, "worktree", "add", "--quiet", "--detach", str(path), sha)
        self.made.append(path)
        return path

    def remove_all(self) -> list[str]:
        """Every tree under ``root`` removed, its folder there or gone (one line per one that
        could not be). Only these: the repository's other worktrees are the user's, a stale
        one too (``git worktree prune`` would drop one whose folder is on a drive not
        mounted now, and that tree would no longer work)."""
        problems = []
        try:
            listed = git(self.repo, "worktree", "list", "--porcelain").splitlines()
        except SpecperfError as exc:
            problems.append(str(exc))
            listed = []
        root = self.root.resolve()
        trees = {Path(line[9:]).resolve() for line in listed if line.startswith("worktree ")}
        ours = {path for path in trees if path.is_relative_to(root)}
        ours |= set(root.glob("*")) if root.is_dir() else set()
        for path in sorted(ours):
            try:
                git(self.repo, "worktree", "remove", "--force", str(path))
            except SpecperfError as exc:
                problems.append(f"{path}: {exc}")
        return problems


def build(command: str, sha: str, tree: Path, logs: Path) -> bool:
    """``--build`` for one commit in its tree, once: False when an earlier build of this
    commit by this command succeeded in this tree (nothing run), True when it ran now; a
    failure names the commit and its log's last lines."""
    logs.mkdir(parents=True, exist_ok=True)
    # In the tree's own git folder: removed with the tree, as what the build made in it is.
    done_marker = tree / git(tree, "rev-parse", "--git-path", BUILT).strip()
    if done_marker.is_file() and done_marker.read_text(encoding="utf-8") == command + "\n":
        return False
    log = logs / f"{sha}.log"
    # Split first: a tree's path with a space in it stays one argument.
    argv = [with_tree(part, tree) for part in shlex.split(command)]
    if not argv:
        raise UsageError("--build: the command is empty")
    with log.open("w", encoding="utf-8") as out:
        try:
            done = subprocess.run(argv, cwd=tree, stdout=out, stderr=subprocess.STDOUT, check=False)
        except OSError as exc:
            raise BuildFailed(f"--build for {sha[:12]}: {exc.strerror or exc}", sha) from None
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        said = ": " + " | ".join(tail) if tail else " (it printed nothing)"
        raise BuildFailed(f"--build for {sha[:12]} exited {done.returncode} ({log}){said}", sha)
    done_marker.write_text(command + "\n", encoding="utf-8")
    return True


def side_environment(pairs: Sequence[tuple[str, str]], tree: Path) -> tuple[tuple[str, str], ...]:
    """One side's server environment: the --server-env pairs with ``{worktree}`` its tree's."""
    return tuple((name, with_tree(value, tree)) for name, value in pairs)
