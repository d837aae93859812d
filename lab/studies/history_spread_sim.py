"""Issue 38, point 2 on the simulator: a quiet calibration, a noisy runner's history, and the
baseline gate's floors taken from that history.

    python lab/studies/history_spread_sim.py --work /tmp/spread
    python lab/studies/history_spread_sim.py --work /tmp/spread --history-runs 5 --runs none

1. a baseline calibrated over 3 boots at --sim-noise=0.01 (one quiet machine);
2. ``--history-runs`` runs (default 10) into a history store at --sim-noise=0.05, a fresh
   boot factor each (``--sim-noise-seed`` is ``fresh`` by default: machines that differ);
3. runs on a machine 11% slower (--sim-slowdown=0.11) and 33% slower (0.33), each with the
   history store (floors from it) and without (the gate as it was: the calibration alone).

Every pytest run is a subprocess of the suite (`pytest perf_tests --specperf-backend=sim ...`),
its output in WORK/<step>.txt; the table of outcomes with each depth verdict's floor and the
noise it says it used is printed and written to WORK/summary.md. Also printed: the spread of
the history runs by standard deviation and by MAD, with one night replaced by a night 30% slow
(what the MAD is robust to).
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec
from _study import Summary, add_sweep_options

from pytest_specperf.gate.baselines import baseline_from_runs, save_baseline
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.runner_spread import robust_spread, run_levels
from pytest_specperf.results.schema import RunResults

PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly")


def base_args(args: argparse.Namespace) -> list[str]:
    return [
        "perf_tests",
        f"--spec-steps={args.depth}",
        "--specperf-backend=sim",
        f"--specperf-sim-speedup={args.speedup}",
        f"--specperf-max-new-tokens={args.tokens}",
        f"--specperf-concurrency={args.concurrency}",
        "--specperf-min-point-seconds=0",
        f"--specperf-repeats={args.repeats}",
        f"--specperf-baselines={args.work / 'baselines'}",
        "-k",
        "throughput",
    ]


def client_bound(out: Path) -> bool:
    """The run's load generator bounded a point (a busy machine): its verdicts say nothing."""
    text = (
        (out / "results.json").read_text(encoding="utf-8")
        if (out / "results.json").exists()
        else ""
    )
    return '"client_bound"' in text or '"unjudged"' in text


def pytest_run(args: argparse.Namespace, name: str, extra: list[str]) -> tuple[int, float, Path]:
    """One pytest run; run again (up to --attempts) while a point was client-bound."""
    for attempt in range(1, args.attempts + 1):
        code, seconds, out = _pytest_run(args, name, extra)
        if not client_bound(out):
            break
        print(f"  {name}: client-bound (attempt {attempt}), the machine is busy", flush=True)
    return code, seconds, out


def _pytest_run(args: argparse.Namespace, name: str, extra: list[str]) -> tuple[int, float, Path]:
    out = args.work / name
    if out.exists():
        shutil.rmtree(out)
    command = [*PYTEST, *base_args(args), f"--specperf-out={out}", *extra]
    begun = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - begun
    (args.work / f"{name}.txt").write_text(
        " ".join(command) + "\n\n" + done.stdout + done.stderr, encoding="utf-8"
    )
    return done.returncode, seconds, out


def baseline_from_calibration(out: Path, work: Path) -> str:
    """The suite refuses to write a baseline from a calibration that a busy machine's load
    generator bounded at any sample; the study then builds it from the same samples, grouped
    by boot, through gate.baselines (as the suite would), and says so."""
    results = msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    run = results.runs[0]
    boots = sorted({s.boot for p in run.points for s in p.all_samples()})
    per_boot = []
    for boot in boots:
        points = []
        for point in run.points:
            mine = [s for s in point.all_samples() if s.boot == boot]
            if mine:
                points.append(msgspec.structs.replace(mine[0], samples=mine))
        per_boot.append(msgspec.structs.replace(run, points=points, verdicts=[]))
    baseline = baseline_from_runs(
        per_boot,
        how_recorded="history_spread_sim.py from a client-bound calibration",
        source="calibrated",
    )
    path = save_baseline(work / "baselines", baseline)
    return (
        "the suite wrote no baseline (client-bound on this busy machine); built "
        f"{path} from its {len(boots)} boots"
    )


def depth_verdict(out: Path) -> str:
    """The pooled verdict of the depth: outcome, change, floor and the noise it used."""
    try:
        results = msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"no results.json ({exc})"
    for run in results.runs:
        for verdict in run.verdicts:
            if verdict.concurrency is None and verdict.measured and verdict.floor:
                return (
                    f"{verdict.outcome}: {verdict.measured - 1:+.1%} vs floor "
                    f"{verdict.floor - 1:+.1%}; noise: {verdict.noise_source}"
                )
    return "no pooled verdict"


def history_spreads(store_path: Path, depth: int) -> str:
    store = HistoryStore.open(store_path)
    try:
        runs = []
        for row in store.runs(complete_only=True):
            results = msgspec.json.decode(row["results_json"], type=RunResults)
            run = results.depth(depth)
            if run is not None:
                runs.append({p.concurrency: p.agg_tok_s for p in run.points})
    finally:
        store.close()
    levels = run_levels(runs)
    if len(levels) < 3:
        return f"{len(levels)} history runs: too few for a spread"
    bad = [*levels[1:], levels[0] + math.log(0.7)]
    return (
        f"{len(levels)} history runs: spread by standard deviation {statistics.stdev(levels):.1%}, "
        f"by MAD {robust_spread(levels):.1%}; with one night 30% slow instead of the first: "
        f"standard deviation {statistics.stdev(bad):.1%}, MAD {robust_spread(bad):.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--history-runs", type=int, default=10)
    parser.add_argument("--depth", type=int, default=3)
    add_sweep_options(parser, tokens=200)
    parser.add_argument("--attempts", type=int, default=3, help="runs of a client-bound step")
    parser.add_argument("--calibration-noise", type=float, default=0.01)
    parser.add_argument("--history-noise", type=float, default=0.05)
    parser.add_argument(
        "--runs", default="0.11,0.33", help="slowdowns of the checked runs, or none"
    )
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    store = args.work / "history.sqlite"
    summary = Summary(args.work / "summary.md")
    summary.add(f"command: pytest {' '.join(base_args(args))} ...", "")
    code, seconds, _ = pytest_run(
        args,
        "calibrate",
        [
            "--specperf-calibrate",
            "--specperf-calibrate-boots=3",
            f"--specperf-server-arg=--sim-noise={args.calibration_noise}",
        ],
    )
    print(
        f"calibration (3 boots, --sim-noise={args.calibration_noise}): exit {code}, "
        f"{seconds:.0f} s",
        flush=True,
    )
    for night in range(1, args.history_runs + 1):
        code, seconds, out = pytest_run(
            args,
            f"history{night:02d}",
            [
                f"--specperf-history={store}",
                f"--specperf-server-arg=--sim-noise={args.history_noise}",
            ],
        )
        print(
            f"history run {night} (--sim-noise={args.history_noise}): exit {code}, "
            f"{seconds:.0f} s; {depth_verdict(out)}",
            flush=True,
        )
    summary.add(
        history_spreads(store, args.depth),
        "",
        "| run | history | pytest | depth verdict | s |",
        "| --- | --- | --- | --- | --- |",
    )
    slowdowns = [] if args.runs == "none" else [float(x) for x in args.runs.split(",")]
    for slowdown in slowdowns:
        for with_history in (True, False):
            name = f"slow{slowdown:g}-{'history' if with_history else 'alone'}"
            extra = [f"--specperf-server-arg=--sim-slowdown={slowdown}"]
            if with_history:
                extra.append(f"--specperf-history={store}")
            code, seconds, out = pytest_run(args, name, extra)
            row = (
                f"| --sim-slowdown={slowdown:g} | {'yes' if with_history else 'no'} | "
                f"{'green' if code == 0 else f'red (exit {code})'} | {depth_verdict(out)} | "
                f"{seconds:.0f} |"
            )
            summary.add(row)
    summary.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
