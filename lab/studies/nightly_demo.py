"""Nights that remember, on the simulator: N nightly runs into one history store, a change
from night K on, then `specperf history changes` must name night K and nothing else.

    python lab/studies/nightly_demo.py --scenario slowdown     # --sim-slowdown=0.05 from K
    python lab/studies/nightly_demo.py --scenario acceptance   # --sim-acceptance lowered from K

Each night is `pytest perf_tests --specperf-run-profile=nightly --specperf-backend=sim
--specperf-history STORE` with fewer points than the nightly profile (the options given on
the command line win over the run profile's), its tested commit set by SPECPERF_TESTED_COMMIT
to `nightNN`. Exit status 0 when every check holds; each check is printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_specperf.history.report import findings
from pytest_specperf.history.store import HistoryStore

REPO = Path(__file__).resolve().parents[2]
# scenario -> (the sim flag, its default value, the attribution the change must get)
SCENARIOS = {
    "slowdown": ("--sim-slowdown", 0.05, "step time"),
    "acceptance": ("--sim-acceptance", 0.9, "acceptance"),
}


def scenario_flag(args: argparse.Namespace) -> str:
    flag, default, _cause = SCENARIOS[args.scenario]
    return f"{flag}={args.amount if args.amount is not None else default}"


def expected_step(args: argparse.Namespace) -> float | None:
    """The throughput step a slowdown makes (F fewer tok/s); an acceptance change: unknown."""
    if args.scenario != "slowdown":
        return None
    return -(args.amount if args.amount is not None else SCENARIOS["slowdown"][1])


def night_command(store: Path, out: Path, args: argparse.Namespace, changed: bool) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "perf_tests",
        "-q",
        "-p",
        "no:randomly",
        "--specperf-run-profile=nightly",
        "--specperf-backend=sim",
        f"--specperf-history={store}",
        f"--specperf-out={out}",
        f"--spec-steps={args.depths}",
        f"--specperf-concurrency={args.concurrency}",
        f"--specperf-max-new-tokens={args.tokens}",
        f"--specperf-repeats={args.repeats}",
        f"--specperf-min-point-seconds={args.min_point_seconds}",
        f"--specperf-sim-speedup={args.sim_speedup}",
        # The demo judges the store's change points, not each night's gate (its shorter
        # points have no baseline: an exploratory run).
        "--specperf-history-on-change=warn",
        "--specperf-allow-no-baseline",
    ]
    if args.warmup_rounds is not None:
        command.append(f"--specperf-warmup-rounds={args.warmup_rounds}")
    if args.select:
        command += ["-k", args.select]
    if changed:
        command.append(f"--specperf-server-arg={scenario_flag(args)}")
    return command


def run_nights(args: argparse.Namespace, store: Path, work: Path) -> None:
    for night in range(1, args.nights + 1):
        changed = night >= args.change_night
        env = {**os.environ, "SPECPERF_TESTED_COMMIT": f"night{night:02d}"}
        done = subprocess.run(
            night_command(store, work / f"night{night:02d}", args, changed),
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print(
            f"night {night:2d}{' (changed)' if changed else '':10s} exit {done.returncode}: "
            f"{tail[0]}",
            flush=True,
        )


def check(args: argparse.Namespace, store_path: Path) -> bool:
    store = HistoryStore.open(store_path)
    found = findings(store)
    expected_night = f"night{args.change_night:02d}"
    cause = SCENARIOS[args.scenario][2]
    step = expected_step(args)
    print(f"\n$ specperf history changes --history {store_path}")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_specperf.cli",
            "history",
            "changes",
            "--history",
            str(store_path),
        ],
        check=False,
    )
    named = {c.night.commit for c in found.changes}
    ok = True

    def verdict(what: str, holds: bool) -> None:
        nonlocal ok
        ok = ok and holds
        print(f"{'PASS' if holds else 'FAIL'}: {what}")

    verdict(
        f"every change point names {expected_night} (named: {sorted(map(str, named))})",
        named == {expected_night},
    )
    throughput = [c for c in found.changes if c.key.metric == "agg_tok_s" and c.attribution]
    verdict("a throughput change point with an attribution", bool(throughput))
    verdict(
        f"attribution '{cause}' ({[c.attribution for c in throughput]})",
        bool(throughput) and all(c.attribution == cause for c in throughput),
    )
    if step is not None:
        steps = [c.step for c in found.changes if c.key.metric == "agg_tok_s"]
        verdict(
            f"agg tok/s step within 2 points of {step:+.0%} ({[f'{s:+.1%}' for s in steps]})",
            bool(steps) and all(abs(s - step) <= 0.02 for s in steps),
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="slowdown")
    parser.add_argument("--amount", type=float, default=None, help="the sim flag's value")
    parser.add_argument("--nights", type=int, default=12)
    parser.add_argument("--change-night", type=int, default=7)
    parser.add_argument("--depths", default="0,3")
    parser.add_argument("--concurrency", default="4,16")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--min-point-seconds", type=float, default=0.3)
    # Slower simulated time (1 instead of the default 5) keeps a loaded machine's CPU
    # jitter small against the simulated step times.
    parser.add_argument("--sim-speedup", type=float, default=5.0)
    parser.add_argument("--work", type=Path, default=None, help="keep the store and outputs here")
    parser.add_argument(
        "--warmup-rounds",
        type=int,
        default=None,
        help="each boot's warm-up rounds (default: the run profile's; the simulator needs none "
        "unless told to have cold shapes)",
    )
    parser.add_argument(
        "--select",
        default=None,
        metavar="EXPR",
        help="run only the perf tests pytest's -k EXPR selects (default: the run profile's)",
    )
    parser.add_argument(
        "--check-only", action="store_true", help="judge the store already in --work, run nothing"
    )
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="specperf-nights-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / "history.sqlite"
    if args.check_only:
        if not store.exists():
            parser.error(f"--check-only: no {store}")
        return 0 if check(args, store) else 1
    if store.exists():
        parser.error(f"{store} exists: give a fresh --work directory")
    run_nights(args, store, work)
    return 0 if check(args, store) else 1


if __name__ == "__main__":
    sys.exit(main())
