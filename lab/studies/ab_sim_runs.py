"""Repeat one A/B command on the simulator and tabulate each run's verdict (issue 19's
simulator checks: "green 5 of 5", "red 5 of 5 naming step time").

    python lab/studies/ab_sim_runs.py --runs 5 --out /tmp/ab-aa
    python lab/studies/ab_sim_runs.py --runs 5 --out /tmp/ab-slow --head-arg=--sim-slowdown=0.05
    python lab/studies/ab_sim_runs.py --runs 1 --out /tmp/ab-acc \\
        --base-arg=--sim-acceptance=0.995 --head-arg=--sim-acceptance=0.9

Each run is `pytest perf_tests --spec-steps=3 --specperf-backend=sim` with base on
`--sim-seed=1` and head on `--sim-seed=2`, both `--sim-noise=0.01` (the issue's command), plus
the given arguments; `--run-profile pr-ab` (the default here) shortens the sweep, `none` runs
the suite's defaults. Every run's terminal output and results go to OUT/runN/; the table is
printed and written to OUT/summary.md.

With ``--history-runs N`` (issue 38), N plain runs of the same sweep go into a history store
first (OUT/history.sqlite, each at ``--history-noise``, a fresh boot factor each), and every
A/B run reads it (``--specperf-history``): the runner's pair spread becomes the verdict's
prior. ``--history PATH`` reads (and extends) an existing store instead.

    python lab/studies/ab_sim_runs.py --runs 5 --out /tmp/ab-hist --history-runs 10 \
        --history-noise 0.06 --head-arg=--sim-noise=0.06 --base-arg=--sim-noise=0.06 \
        --head-arg=--sim-slowdown=0.11
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import msgspec
from _study import Summary

from pytest_specperf.results.schema import AbChange, RunResults

PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider")
ISSUE_COMMAND = [
    "perf_tests",
    "--spec-steps=3",
    "--specperf-backend=sim",
    "--specperf-base-server-arg=--sim-seed=1",
    "--specperf-server-arg=--sim-seed=2",
    "--specperf-server-arg=--sim-noise=0.01",
    "--specperf-base-server-arg=--sim-noise=0.01",
]


PLAIN_COMMAND = ["perf_tests", "--spec-steps=3", "--specperf-backend=sim"]


def _percent(change: AbChange) -> str:
    interval = ""
    if change.low is not None and change.high is not None:
        interval = f" [{change.low:+.1%}, {change.high:+.1%}]"
    return f"{change.change:+.1%}{interval}"


def history_run(out: Path, store: Path, extra: list[str]) -> str:
    """One plain run of the sweep into the history store (no baseline: nothing is gated)."""
    out.mkdir(parents=True, exist_ok=True)
    command = [
        *PYTEST,
        *PLAIN_COMMAND,
        f"--specperf-out={out}",
        f"--specperf-history={store}",
        "--specperf-allow-no-baseline",
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    (out / "pytest.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    return f"{out.name}: exit {done.returncode}"


def one_run(out: Path, extra: list[str]) -> str:
    out.mkdir(parents=True, exist_ok=True)
    command = [*PYTEST, *ISSUE_COMMAND, f"--specperf-out={out}", *extra]
    begun = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - begun
    (out / "pytest.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    pytest_outcome = "green" if done.returncode == 0 else f"red (exit {done.returncode})"
    try:
        results = msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        missing = f"no results.json: {exc}"
        return (
            f"| {out.name} | {missing} | - | - | - | - | - | - | {pytest_outcome} | {seconds:.0f} |"
        )
    rows = []
    for comparison in results.ab:
        pooled = _percent(comparison.pooled) if comparison.pooled else "-"
        why = comparison.pooled.why if comparison.pooled else ""
        changes = ", ".join(f"{p.change:+.1%}" for p in comparison.pair_changes)
        prior = comparison.message.partition("; with the runner's ")[2] or "-"
        rows.append(
            f"| {out.name} | {comparison.outcome} | {pooled} | {why} | {comparison.pairs} | "
            f"{changes} | {prior} | {comparison.server_seconds:.0f} | {pytest_outcome} | "
            f"{seconds:.0f} |"
        )
    none = (
        f"| {out.name} | no A/B comparison | - | - | - | - | - | - | {pytest_outcome} | "
        f"{seconds:.0f} |"
    )
    return "\n".join(rows) or none


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--head-arg", action="append", default=[], help="a head server flag")
    parser.add_argument("--base-arg", action="append", default=[], help="a base server flag")
    parser.add_argument("--run-profile", default="pr-ab", help="a run profile, or none")
    parser.add_argument("--history-runs", type=int, default=0, help="plain runs into a store")
    parser.add_argument("--history-noise", type=float, default=0.06)
    parser.add_argument("--history", type=Path, default=None, help="an existing store")
    args = parser.parse_args()
    extra = [f"--specperf-server-arg={a}" for a in args.head_arg]
    extra += [f"--specperf-base-server-arg={a}" for a in args.base_arg]
    profile = [] if args.run_profile == "none" else [f"--specperf-run-profile={args.run_profile}"]
    extra += profile
    store = args.history
    if args.history_runs and store is None:
        store = args.out / "history.sqlite"
    for night in range(1, args.history_runs + 1):
        assert store is not None
        noise = [f"--specperf-server-arg=--sim-noise={args.history_noise}", *profile]
        print(history_run(args.out / f"history{night:02d}", store, noise), flush=True)
    if store is not None:
        extra.append(f"--specperf-history={store}")
    summary = Summary(args.out / "summary.md")
    summary.add(
        f"command: pytest {' '.join(ISSUE_COMMAND + extra)}",
        "",
        "| run | verdict | pooled change [98% repeated interval] | why | pairs | pair changes | "
        "prior | server-s | pytest | s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    )
    for index in range(1, args.runs + 1):
        summary.add(one_run(args.out / f"run{index}", extra))
    summary.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
