"""A baseline merged across machines, then fresh nights against it: green unchanged, red 5% slower.

    python lab/studies/machines_study.py --machines 3 --nights 8 --out /tmp/machines-study

Issue 50's loop on the simulator, with the commands a user runs: each "machine" is one run
of the suite on a fresh simulator boot whose step time carries its own factor (``--sim-noise``:
the spread between machines, 1% by default, near the 0.7-1.0% two H100s and two H200s read
at the seed-class point) and repeats that move within the boot (``--sim-point-noise``, 1.5%
by default, as the H100s' agg tok/s did). The runs are merged with ``specperf baseline merge``;
then each of ``--nights`` fresh machines runs the nightly against the merged baseline twice,
unchanged and with ``--sim-slowdown`` (5% by default), and the study counts green and red and
reads each night's ``gate floor:`` line. Writes summary.md in --out (each command in it).

The floor it reports is the gate's, from the merged noise (at least 5% between machines from
fewer than 3 machines, the 60% upper bound from fewer than 5): the question is whether a
fresh machine at the measured spread then stays green and a slowdown of the target size goes
red, end to end.
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from _study import Summary

REPO = Path(__file__).resolve().parents[2]
FLOOR = re.compile(r"gate floor: steps=3: (-\d+\.\d)% vs baseline \((\w+), ([+-]\d+\.\d)%\)")


def suite_command(args: argparse.Namespace, out: Path, extra: list[str]) -> list[str]:
    server = [
        f"--specperf-server-arg=--sim-noise={args.machine_spread:g}",
        f"--specperf-server-arg=--sim-point-noise={args.within:g}",
        "--specperf-server-arg=--sim-point-noise-period=1",
    ]
    return [
        sys.executable, "-m", "pytest", "perf_tests", "-q", "-p", "no:randomly",
        "-p", "no:cacheprovider", "--spec-steps=3", "--specperf-backend=sim",
        f"--specperf-concurrency={args.concurrency}", f"--specperf-max-new-tokens={args.tokens}",
        f"--specperf-repeats={args.repeats}", "--specperf-warmup-rounds=0",
        f"--specperf-min-point-seconds={args.min_point_seconds}",
        f"--specperf-sim-speedup={args.speedup:g}", f"--specperf-out={out}",
        "-k", "test_throughput", *server, *extra,
    ]  # fmt: skip


def run(command: list[str], log: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command``; its output is kept in ``log``."""
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    return done


def floor_of(output: str) -> tuple[float, str, float] | None:
    found = FLOOR.search(output)
    if found is None:
        return None
    return float(found.group(1)), found.group(2), float(found.group(3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--machines", type=int, default=3, help="runs merged into the baseline")
    parser.add_argument("--nights", type=int, default=8, help="fresh machines judged against it")
    parser.add_argument("--machine-spread", type=float, default=0.01, help="--sim-noise")
    parser.add_argument("--within", type=float, default=0.015, help="--sim-point-noise")
    parser.add_argument(
        "--slowdown", type=float, default=0.05, help="--sim-slowdown of the red night"
    )
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-point-seconds", type=float, default=1.0)
    parser.add_argument("--speedup", type=float, default=10.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary = Summary(args.out / "summary.md")
    summary.add(f"# machines study: {' '.join(map(shlex.quote, sys.argv[1:]))}", "")

    runs = []
    for machine in range(1, args.machines + 1):
        out = args.out / f"machine-{machine}"
        done = run(suite_command(args, out, ["--specperf-allow-no-baseline"]), out / "pytest.txt")
        if not (out / "results.json").is_file():
            summary.add(f"machine {machine}: no results.json (exit {done.returncode})")
            summary.add(done.stdout[-3000:] + done.stderr[-3000:])
            summary.write()
            return 1
        runs.append(str(out / "results.json"))
        summary.add(f"- machine {machine}: exit {done.returncode}")
    baselines = args.out / "baselines"
    merge = [
        sys.executable, "-m", "pytest_specperf.cli", "baseline", "merge", *runs,
        "--spec-steps", "3", "--baselines", str(baselines), "--force",
    ]  # fmt: skip
    merged = run(merge, args.out / "merge.txt")
    if merged.returncode != 0:
        summary.add(f"merge failed (exit {merged.returncode}):", merged.stdout + merged.stderr)
        summary.write()
        return 1
    rests = [line.strip() for line in merged.stdout.splitlines() if "rests on" in line]
    summary.add("", f"merged: {rests[0] if rests else '(no machines line)'}", "")
    summary.add("| night | unchanged | its floor line | slowed | its floor line |")
    summary.add("| --- | --- | --- | --- | --- |")
    green = red = missing = 0
    floors: list[float] = []
    changes: dict[str, list[float]] = {"unchanged": [], "slowed": []}
    gate = [f"--specperf-baselines={baselines}"]
    slow = [f"--specperf-server-arg=--sim-slowdown={args.slowdown:g}"]
    for night in range(1, args.nights + 1):
        cells = []
        for kind, extra in (("unchanged", gate), ("slowed", gate + slow)):
            out = args.out / f"night-{night}-{kind}"
            done = run(suite_command(args, out, extra), out / "pytest.txt")
            read = floor_of(done.stdout)
            verdict = "green" if done.returncode == 0 else f"red (exit {done.returncode})"
            if read is not None:
                floors.append(read[0])
                changes[kind].append(read[2])
                line = f"floor {read[0]:+.1f}%, {read[1]}, {read[2]:+.1f}%"
            else:  # the line's format changed, or the run judged nothing: say so, exit 1
                line = "no pooled floor line"
                missing += 1
            green += kind == "unchanged" and done.returncode == 0
            red += kind == "slowed" and done.returncode == 1
            cells += [verdict, line]
        summary.add(f"| {night} | " + " | ".join(cells) + " |")
    summary.add(
        "",
        f"unchanged nights green: {green} of {args.nights}; "
        f"{args.slowdown:.0%} slower red: {red} of {args.nights}",
    )
    if floors:
        summary.add(f"floors: {min(floors):+.1f}% to {max(floors):+.1f}%")
    for kind, values in changes.items():
        if values:
            summary.add(
                f"{kind}: change against the baseline median {statistics.median(values):+.1f}% "
                f"({min(values):+.1f}% to {max(values):+.1f}%)"
            )
    command = shlex.join(suite_command(args, Path("OUT"), []))
    summary.add("", f"each machine's and night's command: {command}")
    summary.add("merge: " + shlex.join(merge))
    if missing:
        summary.add(f"{missing} run(s) printed no pooled 'gate floor:' line: see their output")
    summary.write()
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
