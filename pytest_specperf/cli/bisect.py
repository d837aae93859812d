"""``specperf bisect``: from a red range of commits to the commit that changed it.

    specperf bisect --repo ../sglang --good GOOD --bad BAD [--server-env NAME=VALUE]...
        [--build CMD] [--out DIR] [--budget-s SECONDS] -- PYTEST_ARGS...

The suite's own options after ``--`` (profile, depth, concurrency, tokens, server args) apply
to both sides of every step; each side's server gets the --server-env pairs with
``{worktree}`` its commit's tree. The front end: it reads the options, opens the history store
that keeps the pairs (the run's --specperf-history, else ``<out>/history.sqlite``), runs
run/bisect/ and writes what it found (results/bisect_report.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

from pytest_specperf import interrupts
from pytest_specperf.config.parsers import parse_float, parse_positive_int, parse_server_env
from pytest_specperf.config.settings import Settings, build_settings
from pytest_specperf.config.table import OPTIONS
from pytest_specperf.errors import UsageError
from pytest_specperf.history.bisect_log import BisectLog
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.bisect_report import SUMMARY_FILE, set_aside_other, write_outputs
from pytest_specperf.results.run_lock import OutDirLock, this_process
from pytest_specperf.results.store import PREVIOUS_RUN_DIR
from pytest_specperf.run.ab.budget import FIRST_LOOK
from pytest_specperf.run.bisect.bisection import Bisection, BisectRequest
from pytest_specperf.run.bisect.repository import WORKTREE
from pytest_specperf.run.bisect.steps import LoggedPair

BISECT = "bisect"
# Where each side's server finds its commit's Python code when --server-env is not given:
# SGLang's package is the tree's python/ folder (its compiled kernels come from the installed
# wheel); the simulator's commits put a sitecustomize.py at the tree's root.
DEFAULT_SERVER_ENV = {
    "sglang": (("PYTHONPATH", "{worktree}/python:$PYTHONPATH"),),
    "sim": (("PYTHONPATH", "{worktree}:$PYTHONPATH"),),
}
# Suite options a bisection chooses itself, or that make no sense for it.
REFUSED = {
    "--specperf-base-python": "each step's base side is a commit of the range",
    "--specperf-base-server-arg": "both sides take the suite's server args",
    "--specperf-base-server-env": "use --server-env with {worktree}",
    "--specperf-base-profile": "both sides take the suite's profile",
    "--specperf-base-url": "every side is booted from its commit's tree",
    "--specperf-url": "every side is booted from its commit's tree",
    "--specperf-update-baselines": "a bisection writes no baseline",
    "--specperf-calibrate": "a bisection writes no baseline",
    "--specperf-server-env": "use --server-env before the --",
    "--specperf-ab-max-pairs": "use --max-pairs before the --",
    "--specperf-out": "use --out before the --",
}
# A step's most pairs: a step that cannot tell ends the bisection undecided, and a candidate
# measured near the middle of the range's change needs many pairs to be told
# (docs/explanation/bisect.md has the figures).
DEFAULT_MAX_PAIRS = 16


def add_bisect_command(commands: Any) -> None:
    bisect = commands.add_parser(
        BISECT,
        help="find the commit of a range that changed the figures: sequential A/B between "
        "commits, with attribution",
        description="Bisect a range of commits with the suite's A/B mode: each step boots "
        "two commits' servers in pairs until it can tell which end of the range a commit "
        "reads like. The suite's options follow '--'.",
    )
    bisect.add_argument("--repo", type=Path, required=True, help="the repository (a git checkout)")
    bisect.add_argument("--good", required=True, help="the last good commit (e.g. a green night's)")
    bisect.add_argument("--bad", required=True, help="the first bad commit (the red night's)")
    bisect.add_argument(
        "--server-env",
        action="append",
        default=[],
        help="NAME=VALUE in each side's server environment, repeatable; {worktree} is that "
        "side's commit tree, $NAME this process's value (default with SGLang: "
        "PYTHONPATH={worktree}/python:$PYTHONPATH; a --server-env replaces it, and one "
        "value must name {worktree})",
    )
    bisect.add_argument(
        "--build",
        default=None,
        help="a command run once per commit in its tree before its first boot ({worktree} "
        "replaced), e.g. 'pip install --no-deps -e {worktree}/python --prefix {worktree}/.p'",
    )
    bisect.add_argument(
        "--out", type=Path, default=Path(".specperf/bisect"), help="where everything goes"
    )
    bisect.add_argument(
        "--budget-s",
        default=None,
        help="server-seconds the bisection may take, reruns included: no step after the "
        "first is started that would end past it; it stops with what it knows",
    )
    bisect.add_argument(
        "--max-pairs",
        default=str(DEFAULT_MAX_PAIRS),
        help=f"a step's most pairs of boots before it could not tell (default {DEFAULT_MAX_PAIRS})",
    )
    bisect.add_argument(
        "--keep-worktrees", action="store_true", help="leave each commit's tree in <out>"
    )
    bisect.add_argument(
        "suite_args",
        nargs=argparse.REMAINDER,
        help="-- then the suite's options (--specperf-profile, --spec-steps, ...)",
    )


def suite_settings(raw: list[str], rootdir: Path) -> Settings:
    """The suite's options after ``--`` as the settings of one run (one depth, no A/B)."""
    args = raw[1:] if raw[:1] == ["--"] else raw
    parser = argparse.ArgumentParser(prog="specperf bisect --", add_help=False)
    actions = {"value": "store", "append": "append", "flag": "store_true"}
    for spec in OPTIONS:
        parser.add_argument(spec.flag, dest=spec.key, action=actions[spec.kind], default=None)
    parsed, unknown = parser.parse_known_args(args)
    if unknown:
        raise UsageError(
            f"specperf bisect: {' '.join(unknown)}: not an option of the suite (the options "
            "after '--' are pytest perf_tests options of pytest-specperf)"
        )
    for flag, why in REFUSED.items():
        spec = next(s for s in OPTIONS if s.flag == flag)
        if getattr(parsed, spec.key) not in (None, [], False):
            raise UsageError(f"specperf bisect: {flag} is not taken after '--': {why}")
    settings = build_settings(lambda key: getattr(parsed, key, None), rootdir)
    if len(settings.depths) != 1:
        raise UsageError(
            f"specperf bisect: --spec-steps: one depth per bisection, got {settings.depths}"
        )
    return settings


class _Pairs:
    """The history store's pair log, in the terms run/bisect/ uses."""

    def __init__(self, log: BisectLog) -> None:
        self.log = log

    def recorded(self, step: str) -> list[LoggedPair]:
        return [
            LoggedPair.decode(
                row["pair"], row["pair_json"], row["server_seconds"], row["boot_order"]
            )
            for row in self.log.recorded(step)
        ]

    def pair_seconds(self) -> list[float]:
        return self.log.pair_seconds()

    def record(self, step: str, logged: LoggedPair, *, base: str, head: str) -> None:
        self.log.record(
            step,
            pair=logged.index,
            base=base,
            head=head,
            boot_order=",".join(logged.order),
            server_seconds=logged.seconds,
            pair_json=logged.encode().decode(),
        )


def run_bisect_command(args: argparse.Namespace) -> int:
    """0 when a commit is named; 1 when none is (no change, undecided, budget)."""
    max_pairs = parse_positive_int("--max-pairs", args.max_pairs)
    if max_pairs < FIRST_LOOK:
        raise UsageError(
            f"--max-pairs: at least {FIRST_LOOK} (the first look of the A/B gate), got {max_pairs}"
        )
    settings = dataclasses.replace(
        suite_settings(args.suite_args, Path.cwd()), ab_max_pairs=max_pairs
    )
    default = DEFAULT_SERVER_ENV[settings.backend]
    server_env = parse_server_env(args.server_env, "--server-env") or default
    if not any(WORKTREE in value for _, value in server_env):
        # Every side would serve the same code, and every step read "no change".
        typed = " ".join(f"'{name}={value}'" for name, value in default)
        raise UsageError(
            "specperf bisect: --server-env: no value names {worktree}, so each commit's server "
            f"would run the same code (a --server-env replaces the default): add --server-env "
            f"{typed}"
        )
    budget = parse_float("--budget-s", args.budget_s, low=0.0) if args.budget_s else None
    out = args.out.resolve()
    request = BisectRequest(
        repo=args.repo.resolve(),
        good=args.good,
        bad=args.bad,
        server_env=tuple(server_env),
        build=args.build,
        out=out,
        budget_s=budget,
        suite_args=tuple(args.suite_args),
    )
    # The range is resolved (or refused) before --out is made: a refusal leaves nothing.
    bisection = Bisection(settings, request, log=None, say=lambda line: print(line, flush=True))
    out.mkdir(parents=True, exist_ok=True)
    lock = OutDirLock(out, this_process(), option="--out")
    lock.acquire()
    try:
        good, bad = bisection.commits[0].sha, bisection.commits[-1].sha
        if set_aside_other(out, bisection.key, good, bad):
            print(
                f"specperf bisect: --out held another bisection's outputs: moved into "
                f"{out / PREVIOUS_RUN_DIR}"
            )
        return _bisect(bisection, keep_trees=args.keep_worktrees)
    finally:
        lock.release()


def _bisect(bisection: Bisection, *, keep_trees: bool) -> int:
    settings, request = bisection.settings, bisection.request
    store = HistoryStore.open(settings.history or request.out / "history.sqlite")
    log = BisectLog(
        store,
        f"bisect-{bisection.key}",
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        commit=bisection.commits[-1].sha,
    )
    bisection.log = _Pairs(log)
    try:
        result = bisection.run()
        log.finish("interrupted" if result.interrupted else "complete")
    finally:
        if not keep_trees:
            for problem in bisection.remove_trees():
                print(f"specperf bisect: worktree not removed: {problem}")
        store.close()
    written = write_outputs(result, request.out, plots=not settings.no_plots)
    print((request.out / SUMMARY_FILE).read_text(encoding="utf-8"))
    print("written: " + ", ".join(str(path) for path in written))
    if result.interrupted:
        print(
            f"specperf bisect: {result.interrupted}; rerun the same command to go on from the "
            "pairs measured (kept in the history store)"
        )
        return interrupts.COMMAND_INTERRUPTED_STATUS
    return 0 if result.outcome == "culprit" else 1
