"""The seed-class profile on a real GPU, in steps that each fit a lent machine's call.

    python lab/gpu/gpu_seed_class.py STATE_DIR STEP [STEP ...]
    python lab/gpu/gpu_seed_class.py STATE_DIR summary

A STEP is one boot measured by the suite: ``d3`` (depth 3), ``d0`` (the control), ``d1``,
``d2``; a boot of a depth already measured counts as another boot of it (boot-to-boot noise).
Each step runs ``pytest perf_tests`` on the profile at that depth with REPEATS samples per
point (interleaved), records into STATE_DIR/baselines (so nothing under the checkout
changes), and keeps results.json, report.md and the pytest log in STATE_DIR/runs/<step>-<n>.
A step that would not finish in the time left of BUDGET_S is skipped and said so. After
every step STATE_DIR/summary.md is rewritten from every run so far: within-boot noise per
point, boot-to-boot noise per point, and the depth trade-off beside the seed's.

STATE_DIR lives outside the checkout (e.g. /tmp/seed-class) so that steps of several calls
on a machine kept warm add up; the caller tars it into $OUT.

Environment: PROFILE (qwen3-next-real-width-fp8-mtp), BACKEND (sglang | sim, for a dry run
here), REPEATS (3), SWEEP (pytest options for the points; default C = 1, 4, 16 at 256
tokens), BUDGET_S (570), BOOT_ESTIMATE_S (240), MEASURE_ESTIMATE_S (120).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import msgspec
from _lent_gpu import run_suite

from pytest_specperf.results.schema import DepthRun, RunResults

PROFILE = os.environ.get("PROFILE", "qwen3-next-real-width-fp8-mtp")
BACKEND = os.environ.get("BACKEND", "sglang")
REPEATS = int(os.environ.get("REPEATS", "3"))
SWEEP = os.environ.get(
    "SWEEP", "--specperf-concurrency=1,4,16 --specperf-max-new-tokens=256"
).split()
BUDGET_S = float(os.environ.get("BUDGET_S", "570"))
BOOT_ESTIMATE_S = float(os.environ.get("BOOT_ESTIMATE_S", "240"))
MEASURE_ESTIMATE_S = float(os.environ.get("MEASURE_ESTIMATE_S", "120"))
# The seed (4x RTX PRO 6000 Blackwell, TP4, Qwen3.5-122B-A10B-FP8): single-request per-req
# tok/s and max running requests at depths 1, 2, 3.
SEED_SINGLE_REQUEST = {1: 124.3, 2: 185.7, 3: 234.0}
SEED_MAX_RUNNING = {1: 26, 2: 21, 3: 17}
SEED_MAX_TOTAL_TOKENS = {1: 455_357, 2: 377_207, 3: 295_931}


def run_step(state: Path, step: str, started: float) -> str:
    if not (step.startswith("d") and step[1:].isdigit()):
        raise SystemExit(f"unknown step {step!r}: use d0, d1, d2, d3, ... or summary")
    depth = int(step[1:])
    runs = state / "runs"
    boot = 1 + sum(1 for p in runs.glob(f"{step}-*") if p.is_dir()) if runs.is_dir() else 1
    name = f"{step}-{boot}"
    left = BUDGET_S - (time.monotonic() - started)
    if left < BOOT_ESTIMATE_S + MEASURE_ESTIMATE_S:
        return f"{name}: skipped, {left:.0f} s of the call's budget left"
    out = runs / name
    args = [
        "perf_tests",
        f"--spec-steps={depth}",
        f"--specperf-profile={PROFILE}",
        f"--specperf-backend={BACKEND}",
        f"--specperf-baselines={state / 'baselines'}",
        f"--specperf-out={out}",
        f"--specperf-repeats={REPEATS}",
        "--specperf-update-baselines",
        *SWEEP,
    ]
    print(f"[{time.monotonic() - started:.0f} s] {name}: pytest {' '.join(args)}", flush=True)
    done = run_suite(args, out / "pytest.txt")
    line = f"{name}: exit {done.exit_code} in {done.seconds:.0f} s"
    print(line, flush=True)
    print("\n".join(done.stdout.splitlines()[-25:]), flush=True)
    return line


def _runs(state: Path) -> list[tuple[str, DepthRun]]:
    found: list[tuple[str, DepthRun]] = []
    for path in sorted((state / "runs").glob("*/results.json")):
        try:
            results = msgspec.json.decode(path.read_bytes(), type=RunResults)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        found.extend((path.parent.name, run) for run in results.runs if run.points)
    return found


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    return statistics.stdev(values) / statistics.fmean(values)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary(state: Path, log: list[str]) -> str:
    runs = _runs(state)
    lines = ["# Seed-class profile on a real GPU", "", f"profile `{PROFILE}`, backend {BACKEND}"]
    lines += ["", "## Steps", "", *[f"- {entry}" for entry in log]]
    lines += [
        "",
        "## Noise: agg tok/s per point",
        "",
        "Within boot: the CV of one boot's samples (interleaved repeats), the first sample "
        "beside the later ones' median. Boot to boot: the CV of the boots' medians.",
        "",
        "| depth | C | boot | samples (agg tok/s) | within-boot CV | first / median of the rest |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    medians: dict[tuple[int, int], list[float]] = {}
    for name, run in runs:
        for point in sorted(run.points, key=lambda p: p.concurrency):
            values = [s.agg_tok_s for s in (point.samples or [point])]
            medians.setdefault((run.depth, point.concurrency), []).append(statistics.median(values))
            rest = values[1:]
            first = f"{values[0] / statistics.median(rest):.3f}" if rest else "-"
            shown = ", ".join(f"{v:,.1f}" for v in values)
            lines.append(
                f"| {run.depth} | {point.concurrency} | {name} | {shown} | "
                f"{_pct(_cv(values))} | {first} |"
            )
    lines += ["", "| depth | C | boots | boot medians | boot-to-boot CV |"]
    lines += ["| --- | --- | --- | --- | --- |"]
    for (depth, concurrency), values in sorted(medians.items()):
        shown = ", ".join(f"{v:,.1f}" for v in values)
        lines.append(f"| {depth} | {concurrency} | {len(values)} | {shown} | {_pct(_cv(values))} |")
    lines += _tradeoff(runs)
    text = "\n".join(lines) + "\n"
    (state / "summary.md").write_text(text, encoding="utf-8")
    return text


def _tradeoff(runs: list[tuple[str, DepthRun]]) -> list[str]:
    by_depth: dict[int, list[DepthRun]] = {}
    for _, run in runs:
        by_depth.setdefault(run.depth, []).append(run)
    if not by_depth:
        return []

    def median_of(depth: int, concurrency: int, per_req: bool = False) -> float | None:
        values = [
            (s.per_req_tok_s if per_req else s.agg_tok_s)
            for run in by_depth.get(depth, [])
            for p in run.points
            if p.concurrency == concurrency
            for s in (p.samples or [p])
        ]
        clean = [v for v in values if v is not None]
        return statistics.median(clean) if clean else None

    concurrencies = sorted(
        {p.concurrency for group in by_depth.values() for r in group for p in r.points}
    )
    lines = [
        "",
        "## The depth trade-off (medians over every sample of every boot)",
        "",
        "| depth | accept length | KV tokens | max running | "
        + " | ".join(f"C={c} agg" for c in concurrencies)
        + " | C=1 per-req | C=1 per-req vs depth 1 | seed: C=1 per-req vs depth 1 | "
        "KV vs depth 1 | seed: KV vs depth 1 |",
        "| --- " * (9 + len(concurrencies)) + "|",
    ]
    first_single = median_of(1, 1, per_req=True)
    first_kv = next((r.server.max_total_num_tokens for r in by_depth.get(1, []) if r.server), None)
    for depth in sorted(by_depth):
        server = by_depth[depth][0].server
        accept = [p.accept_length for r in by_depth[depth] for p in r.points if p.accept_length]
        kv = server.max_total_num_tokens if server else None
        single = median_of(depth, 1, per_req=True)
        ratio = f"{single / first_single:.2f}" if single and first_single else "-"
        seed_ratio = (
            f"{SEED_SINGLE_REQUEST[depth] / SEED_SINGLE_REQUEST[1]:.2f}"
            if depth in SEED_SINGLE_REQUEST
            else "-"
        )
        kv_ratio = f"{kv / first_kv:.3f}" if kv and first_kv else "-"
        seed_kv = (
            f"{SEED_MAX_TOTAL_TOKENS[depth] / SEED_MAX_TOTAL_TOKENS[1]:.3f}"
            if depth in SEED_MAX_TOTAL_TOKENS
            else "-"
        )
        aggs = " | ".join(
            f"{v:,.1f}" if (v := median_of(depth, c)) is not None else "-" for c in concurrencies
        )
        accept_cell = f"{statistics.median(accept):.2f}" if accept else "-"
        kv_cell = f"{kv:,}" if kv else "-"
        running = server.max_running_requests if server else None
        running_cell = str(running) if running else "-"
        single_cell = f"{single:,.1f}" if single else "-"
        lines.append(
            f"| {depth} | {accept_cell} | {kv_cell} | {running_cell} | {aggs} | {single_cell} | "
            f"{ratio} | {seed_ratio} | {kv_ratio} | {seed_kv} |"
        )
    control = {c: median_of(0, c) for c in concurrencies}
    if any(control.values()):
        lines += ["", "Speedup of agg tok/s over the control (depth 0):", ""]
        lines += ["| depth | " + " | ".join(f"C={c}" for c in concurrencies) + " |"]
        lines += ["| --- " * (1 + len(concurrencies)) + "|"]
        for depth in sorted(d for d in by_depth if d > 0):
            cells = []
            for c in concurrencies:
                value, base = median_of(depth, c), control[c]
                cells.append(f"{value / base:.2f}x" if value and base else "-")
            lines.append(f"| {depth} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    state = Path(sys.argv[1]).resolve()
    state.mkdir(parents=True, exist_ok=True)
    log_path = state / "steps.txt"
    log = log_path.read_text(encoding="utf-8").splitlines() if log_path.exists() else []
    started = time.monotonic()
    for step in sys.argv[2:]:
        if step == "summary":
            continue
        log.append(run_step(state, step, started))
        log_path.write_text("\n".join(log) + "\n", encoding="utf-8")
        summary(state, log)
    print(summary(state, log), flush=True)


if __name__ == "__main__":
    main()
