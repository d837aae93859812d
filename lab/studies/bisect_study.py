"""How often specperf bisect names the right commit, and what a bisection costs (issue 52).

Each run builds a fresh repository (tests/support/bisect_repos.py) whose commits change the
simulated server through a sitecustomize.py on its Python path, and runs ``specperf bisect``
on it as a user would (a subprocess per bisection), at per-boot noise --noise, C=4 and 128
tokens (the issue's setting). Scenarios:

- ``slow8``: a range of --commits commits, 8% slower from one commit chosen by the run's seed;
  counted: the right commit named, a wrong one named (never allowed), none named; the steps,
  pairs and server-seconds of each;
- ``none``: no change: ``no-change`` after the first step expected;
- ``accept``: fewer accepted drafts from one commit: named, attributed to acceptance;
- ``two``: 4% slower from one commit and a further 10% from a later one: the 10% named,
  another change said to remain.

    python lab/studies/bisect_study.py OUT --runs 10 --scenario slow8   # the issue's figure
    python lab/studies/bisect_study.py OUT --runs 3 --scenario none accept two

Writes OUT/summary.md (every run's line, then the figures) and keeps each bisection's folder.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _study import Summary

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support.bisect_repos import (
    bisect_args,
    make_repository,
    noise_args,
    server_flags,
)


def scenario_changes(
    name: str, commits: int, rng: random.Random
) -> tuple[dict[int, list[str]], int | None]:
    """The repository's changes and the commit that should be named (None: none)."""
    at = rng.randint(1, commits)
    if name == "slow8":
        return {at: server_flags(slowdown=0.08)}, at
    if name == "none":
        return {}, None
    if name == "accept":
        return {at: server_flags(acceptance=0.7)}, at
    if name == "two":
        small = rng.randint(1, commits - 2)
        large = rng.randint(small + 1, commits)
        return {
            small: server_flags(slowdown=0.04),
            large: server_flags(slowdown=round(1 - 0.96 * 0.90, 4)),
        }, large
    raise ValueError(name)


def bisect(
    repo: Path, good: str, bad: str, out: Path, noise: float
) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_specperf.cli",
            *bisect_args(repo, good, bad, out, suite=noise_args(noise)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    (out / "stdout.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
    return (
        done.returncode,
        json.loads((out / "bisect.json").read_text()),
        time.monotonic() - started,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--commits", type=int, default=24)
    parser.add_argument("--noise", type=float, default=0.02, help="per-boot noise (sigma)")
    parser.add_argument("--scenario", nargs="+", default=["slow8"])
    parser.add_argument("--seed", type=int, default=52)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary = Summary(args.out / "summary.md")
    summary.add(
        f"# specperf bisect on the simulator: {args.runs} run(s) per scenario, "
        f"{args.commits} commits, per-boot noise {args.noise:.0%}, C=4, 128 tokens",
        "",
        f"`python lab/studies/bisect_study.py {args.out} --runs {args.runs} --commits "
        f"{args.commits} --noise {args.noise} --scenario {' '.join(args.scenario)} "
        f"--seed {args.seed}`",
        "",
        "| scenario | run | expected | outcome | named | steps | pairs | server-s | wall s "
        "| note |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    )
    figures: dict[str, list[dict[str, Any]]] = {}
    for scenario in args.scenario:
        for run in range(args.runs):
            rng = random.Random(f"{args.seed}-{scenario}-{run}")
            changes, expected = scenario_changes(scenario, args.commits, rng)
            folder = args.out / f"{scenario}-{run}"
            hashes = make_repository(folder / "repo", args.commits, changes)
            code, found, wall = bisect(
                folder / "repo", hashes[0], hashes[-1], folder / "out", args.noise
            )
            named = hashes.index(found["culprit"]) if found.get("culprit") else None
            pairs = sum(step["pairs"] for step in found["steps"])
            note = ""
            if scenario == "accept" and found.get("culprit_change"):
                change = found["culprit_change"]
                accept, step = change.get("acceptance_change", 0), change.get("step_time_change", 0)
                note = f"acceptance {accept:+.1%}, verify steps/s {step:+.1%}"
            if scenario == "two":
                note = "remaining said" if found.get("remaining") else "remaining not said"
            entry = {
                "expected": expected,
                "named": named,
                "outcome": found["outcome"],
                "steps": len(found["steps"]),
                "pairs": pairs,
                "server_seconds": found["server_seconds"],
                "exit": code,
            }
            figures.setdefault(scenario, []).append(entry)
            summary.add(
                f"| {scenario} | {run} | {expected if expected is not None else '-'} | "
                f"{found['outcome']} | {named if named is not None else '-'} | "
                f"{len(found['steps'])} | {pairs} | {found['server_seconds']:.0f} | {wall:.0f} "
                f"| {note} |"
            )
    summary.add("")
    for scenario, runs in figures.items():
        right = sum(r["named"] == r["expected"] and r["named"] is not None for r in runs)
        wrong = sum(r["named"] is not None and r["named"] != r["expected"] for r in runs)
        none = sum(r["named"] is None for r in runs)
        summary.add(
            f"- {scenario}: right commit named {right} of {len(runs)}, a wrong one named {wrong}, "
            f"none named {none} (outcomes: {', '.join(sorted({r['outcome'] for r in runs}))}); "
            f"per bisection mean {statistics.fmean(r['steps'] for r in runs):.1f} steps "
            f"(most {max(r['steps'] for r in runs)}), "
            f"{statistics.fmean(r['pairs'] for r in runs):.1f} "
            f"pairs, {statistics.fmean(r['server_seconds'] for r in runs):.0f} server-seconds"
        )
    summary.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
