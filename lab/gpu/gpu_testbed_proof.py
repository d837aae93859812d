"""Issue 38's testbed measurements on a real GPU; run through lab/gpu/gpu-testbed-proof.sh.

    python lab/gpu/gpu_testbed_proof.py WORK_DIR PHASE

Phases (device seconds estimated for a warm lent H200 with SGLang 0.5.12; a fresh machine adds
about 60 s to its first NGRAM boot and about 170 s to its first seed-class boot):

  placement  the NGRAM smoke profile under each CPU placement (PLACEMENTS, default
             "none sglang-affinity pin-fastest rotate"). MODE=boots (default): 3 boots per
             choice (--specperf-calibrate-boots=3 into a scratch baselines folder), C=1,16,
             R=3, 256 tokens, and the spread of the boots' medians per point; about 210 s a
             choice, 850 s in all. MODE=aa: an A/A of 3 pairs per choice through
             lab/gpu/gpu_ab_proof.py (about 590 s a choice, 2,400 s in all: more than one
             session's device time; give PLACEMENTS one or two choices, or a shorter AA_SWEEP:
             C=1,16 with R=2 took 430-580 s a choice on a lent H100: two choices fit a
             session that must also start the machine, the third was cut in its last pair).
             MODE=interleave: the same A/As (MAX_PAIRS pairs, AA_SWEEP) with the choices'
             pairs interleaved, pair N of every choice before pair N+1 of any, their order
             reversed every other pair, so that the machine's drift over the session is not
             read as a choice's; each boot a plain run (a pair with a boot that did not end
             complete is left out); every choice judged after each round by
             lab/studies/ab_rejudge.py. MAX_PAIRS pairs (an A/B may stop sooner), fewer
             where STOP_AFTER_S is set: no round is started that its longest round so far
             says would end more than STOP_AFTER_S seconds after the first began (give the
             session's device time left, MAX_PAIRS=8, and it runs the pairs that fit). A
             pytest start and report per boot on top of MODE=aa's time. No boot is
             recorded in a history store ($SPECPERF_HISTORY is dropped for them).
  nightly    the issue's command against the committed baseline
             (baselines/smoke-tiny-qwen3-ngram/1x-h200/steps-3.json; nothing is written to
             baselines/), with --specperf-server-cpu=$PLACEMENT (default none): the verdict's
             first line names a testbed that differs from the baseline's; the depth table has
             the GPU busy / Server CPU / Bound columns. About 150 s green, 250 s when a red
             is confirmed on a fresh boot.
  seedpoint  the seed-class profile (qwen3-next-real-width-fp8-mtp, 64 running requests,
             graphs to 64) with the seed-class-gpu-bound run profile (C=16, 64, 2,048 tokens,
             R=2, warm-up bounded to WARMUP_S=120 s): is C=64 GPU-bound? About 700 s (boot
             about 240 s with 35 graph sizes, the points about 340 s), so run it in the
             background across calls.

  bounds     the bound rule on both kinds of point, each sample's scheduler stack read by
             py-spy (--specperf-server-stacks=$STACKS, default on): the seed point (the
             seedpoint phase at C=64 only unless SEED_ARGS says otherwise) and the NGRAM
             smoke's C=16 (256 tokens, R=2). About 340 s + 120 s warm; a fresh machine adds
             about 150 s to the seed boot with graphs 8-64 only.

Each phase writes WORK_DIR/PHASE/summary.md as it goes (every command, its exit, the tables it
read from results.json) and keeps every run's folder beside it.

Environment: BACKEND (sglang | sim, for a dry run), PLACEMENTS, MODE, AA_SWEEP, MAX_PAIRS (the
A/As' pairs, 3 or more; default 3), STOP_AFTER_S (interleave: the rounds' time bound),
PLACEMENT, WARMUP_S,
STACKS (bounds: --specperf-server-stacks), BOUNDS_RUNS (bounds: seed,ngram or one of them),
NIGHTLY_ARGS / SEED_ARGS (extra pytest options).
"""

from __future__ import annotations

import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec
from _lent_gpu import run_suite

from pytest_specperf.results.schema import DepthRun, RunResults

NGRAM = "smoke-tiny-qwen3-ngram"
SEED = "qwen3-next-real-width-fp8-mtp"
PLACEMENTS = "none sglang-affinity pin-fastest rotate"
BOOTS_SWEEP = (
    "--specperf-concurrency=1,16 --specperf-max-new-tokens=256 --specperf-repeats=3 "
    "--specperf-min-point-seconds=2"
)
AA_SWEEP = BOOTS_SWEEP.replace("1,16", "1,4,16")
SAMPLE_LINE = re.compile(r"pair \d+ (base|head) C=")
NIGHTLY = (
    "--spec-steps=3 --specperf-profile=smoke-tiny-qwen3-ngram --specperf-concurrency=1,4,16 "
    "--specperf-max-new-tokens=2048 --specperf-repeats=3"
)


class Summary:
    def __init__(self, path: Path, title: str) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {title}\n\n", encoding="utf-8")

    def add(self, *lines: str) -> None:
        text = "\n".join(lines) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)
        print(text, end="", flush=True)


def backend_args() -> list[str]:
    return [f"--specperf-backend={os.environ.get('BACKEND', 'sglang')}"]


def load(out: Path) -> RunResults | None:
    try:
        return msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def suite(summary: Summary, args: list[str], out: Path) -> RunResults | None:
    summary.add(f"- `pytest {shlex.join(args)}`")
    done = run_suite(args, out / "pytest.txt")
    summary.add(f"  exit {done.exit_code} in {done.seconds:.0f} s (output: {out.name}/pytest.txt)")
    return load(out)


def testbed_lines(results: RunResults | None) -> list[str]:
    """The run's fingerprint (the fields the run recorded, whatever they are)."""
    if results is None:
        return ["  no results.json"]
    lines = []
    for run in results.runs:
        fingerprint = getattr(run, "testbed", None)
        encoded = msgspec.json.encode(fingerprint).decode() if fingerprint is not None else "-"
        lines.append(f"  steps={run.depth} testbed: {encoded}")
    return lines


def point_rows(run: DepthRun) -> list[str]:
    """Per point and boot: agg tok/s median, scheduler share, vCPU speed, GPU busy, bound."""
    rows = [
        "| C | boot | agg tok/s (median) | scheduler share | its GPU wait | vCPU speed | "
        "GPU busy | bound |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for point in sorted(run.points, key=lambda p: p.concurrency):
        for boot in sorted(point.boots()):
            mine = [s for s in point.all_samples() if s.boot == boot]
            agg = statistics.median(s.agg_tok_s for s in mine)
            shares = [s.server_cpu.share for s in mine if s.server_cpu is not None]
            speeds = [
                s.server_cpu.core_speed
                for s in mine
                if s.server_cpu is not None and s.server_cpu.core_speed is not None
            ]
            waits = [
                s.server_cpu.gpu_wait
                for s in mine
                if s.server_cpu is not None and s.server_cpu.gpu_wait is not None
            ]
            busy = [s.gpu.busy for s in mine if s.gpu is not None]
            bounds = sorted({s.bound or "-" for s in mine})
            rows.append(
                f"| {point.concurrency} | {boot + 1} | {agg:,.1f} | "
                f"{_figures(shares, '{:.0%}')} | {_figures(waits, '{:.0%}')} | "
                f"{_figures(speeds, '{:.2f}')} | "
                f"{_figures(busy, '{:.0%}')} | {', '.join(bounds)} |"
            )
    return rows


def _figures(values: list[float], form: str) -> str:
    return ", ".join(form.format(v) for v in values) or "-"


def boot_spread(run: DepthRun) -> list[str]:
    """Per point: the boots' medians, their spread (max/min - 1) and CV."""
    lines = []
    for point in sorted(run.points, key=lambda p: p.concurrency):
        medians = [
            statistics.median(s.agg_tok_s for s in point.all_samples() if s.boot == boot)
            for boot in sorted(point.boots())
        ]
        if len(medians) < 2:
            continue
        spread = max(medians) / min(medians) - 1 if min(medians) > 0 else float("nan")
        cv = statistics.stdev(medians) / statistics.fmean(medians)
        lines.append(
            f"  C={point.concurrency}: boot medians {', '.join(f'{m:,.1f}' for m in medians)}; "
            f"spread {spread:.1%}, CV {cv:.1%}"
        )
    return lines


def placement(work: Path, summary: Summary) -> None:
    mode = os.environ.get("MODE", "boots")
    if mode == "interleave":
        interleaved_aa(work, summary, os.environ.get("PLACEMENTS", PLACEMENTS).split())
        return
    for choice in os.environ.get("PLACEMENTS", PLACEMENTS).split():
        out = work / choice
        summary.add("", f"## --specperf-server-cpu={choice} ({mode})", "")
        if mode == "aa":
            env = {
                **os.environ,
                "PROFILE": NGRAM,
                "MAX_PAIRS": os.environ.get("MAX_PAIRS", "3"),
                "SWEEP": f"{os.environ.get('AA_SWEEP', AA_SWEEP)} --specperf-server-cpu={choice}",
            }
            command = [sys.executable, "lab/gpu/gpu_ab_proof.py", str(out), "aa"]
            summary.add(f"- `SWEEP='{env['SWEEP']}' {shlex.join(command)}`")
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            summary.add(f"  exit {done.returncode}", "", done.stdout[-3000:])
            continue
        args = [
            "perf_tests/test_throughput.py",
            "--spec-steps=3",
            f"--specperf-profile={NGRAM}",
            *backend_args(),
            f"--specperf-out={out}",
            f"--specperf-baselines={out / 'baselines'}",
            "--specperf-calibrate",
            "--specperf-calibrate-boots=3",
            f"--specperf-server-cpu={choice}",
            *shlex.split(BOOTS_SWEEP),
        ]
        results = suite(summary, args, out)
        summary.add(*testbed_lines(results))
        for run in results.runs if results is not None else []:
            if run.server is not None and run.server.free_core_speeds:
                speeds = ", ".join(
                    f"{core}: {speed:.2f}"
                    for core, speed in sorted(run.server.free_core_speeds.items())
                )
                summary.add(f"  vCPUs timed before the last boot (M loops/s): {speeds}")
                summary.add(f"  pinned to vCPU {run.server.pinned_core}")
            summary.add("", *point_rows(run), "", "boot-to-boot:", *boot_spread(run))


def interleaved_aa(work: Path, summary: Summary, choices: list[str]) -> None:
    """An A/A per choice, its pairs interleaved with the other choices' so that a machine that
    changes over the session weighs on every choice alike: pair N of each choice in turn, the
    choices' order and the sides' (base, head / head, base) reversed every other pair. Each
    boot is a plain run (no baseline read) kept as CHOICE/ab/steps3/pairN-SIDE, the folders an
    A/B keeps; after every round each choice's pairs so far are judged by
    lab/studies/ab_rejudge.py, which ends with their changes and spread."""
    pairs = int(os.environ.get("MAX_PAIRS", "3"))
    if pairs < 3:
        raise SystemExit(f"MAX_PAIRS={pairs}: at least 3 (the A/B gate's first look)")
    sweep = shlex.split(os.environ.get("AA_SWEEP", AA_SWEEP))
    stop_after_s = float(os.environ.get("STOP_AFTER_S", "inf"))
    # Each boot is a plain run: recorded, it would count as a nightly between runs.
    os.environ.pop("SPECPERF_HISTORY", None)
    began = time.monotonic()
    longest_round_s = 0.0
    for number in range(1, pairs + 1):
        elapsed_s = time.monotonic() - began
        if number > 1 and elapsed_s + longest_round_s > stop_after_s:
            summary.add(
                "",
                f"stopped before pair {number}: {elapsed_s:.0f} s gone, its longest round "
                f"{longest_round_s:.0f} s would pass STOP_AFTER_S={stop_after_s:.0f}",
            )
            return
        round_began = time.monotonic()
        forward = number % 2 == 1
        summary.add("", f"## pair {number}", "")
        for choice in choices if forward else choices[::-1]:
            for side in ("base", "head") if forward else ("head", "base"):
                out = work / choice / "ab" / "steps3" / f"pair{number}-{side}"
                results = suite(
                    summary,
                    [
                        "perf_tests/test_throughput.py",
                        "--spec-steps=3",
                        f"--specperf-profile={NGRAM}",
                        *backend_args(),
                        f"--specperf-out={out}",
                        f"--specperf-baselines={work / 'no-baselines'}",
                        "--specperf-allow-no-baseline",
                        f"--specperf-server-cpu={choice}",
                        *sweep,
                    ],
                    out,
                )
                if results is None or any(run.status != "complete" for run in results.runs):
                    summary.add("  NOT COMPLETE: this pair is left out of the judgement")
        for choice in choices:
            steps = work / choice / "ab" / "steps3"
            command = [sys.executable, "lab/studies/ab_rejudge.py", str(steps)]
            command += ["--max-pairs", str(pairs)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            # Its verdict and the pairs' changes, without its heading and per-sample lines.
            judged = [
                line
                for line in done.stdout.splitlines()
                if not SAMPLE_LINE.match(line) and not line.startswith("## ")
            ]
            summary.add("", f"--specperf-server-cpu={choice} after pair {number}:", *judged)
            if done.returncode != 0:
                summary.add(f"  ab_rejudge exit {done.returncode}: {done.stderr[-500:]}")
        longest_round_s = max(longest_round_s, time.monotonic() - round_began)


def nightly(work: Path, summary: Summary) -> None:
    out = work / "run"
    args = [
        "perf_tests",
        *shlex.split(NIGHTLY),
        *backend_args(),
        f"--specperf-out={out}",
        f"--specperf-server-cpu={os.environ.get('PLACEMENT', 'none')}",
        *shlex.split(os.environ.get("NIGHTLY_ARGS", "")),
    ]
    results = suite(summary, args, out)
    pytest_out = (out / "pytest.txt").read_text(encoding="utf-8", errors="replace")
    verdicts = [line for line in pytest_out.splitlines() if "testbed differs" in line]
    summary.add(*testbed_lines(results), "", "verdict lines naming the testbed:", *verdicts[:10])
    for run in results.runs if results is not None else []:
        summary.add("", *point_rows(run))


def seedpoint(work: Path, summary: Summary) -> None:
    out = work / "run"
    args = [
        "perf_tests/test_throughput.py",
        f"--specperf-profile={SEED}",
        "--specperf-run-profile=seed-class-gpu-bound",
        *backend_args(),
        f"--specperf-out={out}",
        f"--specperf-baselines={out / 'baselines'}",
        f"--specperf-warmup-seconds={os.environ.get('WARMUP_S', '120')}",
        *shlex.split(os.environ.get("SEED_ARGS", "")),
    ]
    results = suite(summary, args, out)
    summary.add(*testbed_lines(results))
    for run in results.runs if results is not None else []:
        summary.add("", *point_rows(run))
        bound = {p.concurrency: p.bound for p in run.points}
        summary.add("", f"bound per concurrency: {bound}")


def bounds(work: Path, summary: Summary) -> None:
    """The bound rule on both kinds of point in one session, each sample's scheduler stack
    read by py-spy: the seed point (C=64, 2,048 tokens) and the NGRAM smoke's C=16."""
    stacks = os.environ.get("STACKS", "on")
    runs = {
        "seed": [
            "perf_tests/test_throughput.py",
            f"--specperf-profile={SEED}",
            "--specperf-run-profile=seed-class-gpu-bound",
            f"--specperf-warmup-seconds={os.environ.get('WARMUP_S', '90')}",
            *shlex.split(os.environ.get("SEED_ARGS", "")),
        ],
        "ngram": [
            "perf_tests/test_throughput.py",
            "--spec-steps=3",
            f"--specperf-profile={NGRAM}",
            "--specperf-concurrency=16",
            "--specperf-max-new-tokens=256",
            "--specperf-repeats=2",
            "--specperf-allow-no-baseline",
        ],
    }
    # BOUNDS_RUNS: which of the two, in order (a short device budget runs the seed point only).
    chosen = os.environ.get("BOUNDS_RUNS", "seed,ngram").split(",")
    for name in chosen:
        args = runs[name.strip()]
        out = work / name.strip()
        summary.add("", f"## {name.strip()}", "")
        results = suite(
            summary,
            [
                *args,
                *backend_args(),
                f"--specperf-server-stacks={stacks}",
                f"--specperf-out={out}",
                f"--specperf-baselines={out / 'baselines'}",
            ],
            out,
        )
        for run in results.runs if results is not None else []:
            summary.add("", *point_rows(run))


PHASES = {"placement": placement, "nightly": nightly, "seedpoint": seedpoint, "bounds": bounds}


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[2] not in PHASES:
        raise SystemExit(__doc__)
    work, phase = Path(sys.argv[1]) / sys.argv[2], sys.argv[2]
    work.mkdir(parents=True, exist_ok=True)
    summary = Summary(work / "summary.md", f"Testbed proof, phase {phase}")
    summary.add(f"backend {os.environ.get('BACKEND', 'sglang')}; python {sys.version.split()[0]}")
    PHASES[phase](work, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
