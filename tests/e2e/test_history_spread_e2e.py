"""Issue 38, point 2, end to end and short: a baseline calibrated on one quiet machine, ten
earlier runs of a noisy runner in the history store, then one real simulator run per outcome.

The baseline (3 boots at 1% noise) and the history (10 runs, each its own boot factor at 5%)
are drawn with the simulator's own noise model (sim/noise.py) around the figures of its
performance model at these settings, and written through the baselines' and the store's own
APIs; the two runs are real (`pytest perf_tests --specperf-backend=sim`). A machine 11% slower
is green with its floors taken from the history and saying so; one 33% slower is red.
benchmarks/history_spread_sim.py runs the whole thing for real (docs/runs/)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.gate.baselines import baseline_from_runs, save_baseline
from pytest_specperf.history.rows import RunContext
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.options import build_settings
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults
from pytest_specperf.sim import model
from pytest_specperf.sim.noise import NoiseModel
from tests.support.data import REPO

SPEEDUP = 2.0
FLAGS = {
    "backend": "sim",
    "spec_steps": "3",
    "concurrency": "1,4",
    "max_new_tokens": "64",
    "sim_speedup": str(SPEEDUP),
    "min_point_seconds": "0",
    "repeats": "2",
}
HARDWARE = f"sim-x{SPEEDUP:g}"
pytestmark = pytest.mark.usefixtures("no_leftover_sims")


def _level(concurrency: int, tokens: int) -> tuple[float, float]:
    profile = model.PROFILES[model.DEFAULT_PROFILE]
    found = model.simulate_point(
        profile, 3, concurrency, model.seed_requests(concurrency), max_new_tokens=tokens
    )
    return found.agg_tok_s * SPEEDUP, found.per_req_tok_s * SPEEDUP


def _run(workload: dict[str, object], boot_cv: float, seed: str, samples: int) -> DepthRun:
    noise = NoiseModel(boot_cv=boot_cv, point_cv=0.01, seed=seed)
    points = []
    for concurrency in (1, 4):
        agg, per_req = _level(concurrency, 64)
        drawn = [
            PointMetrics(
                concurrency=concurrency,
                requests=4,
                ok=4,
                failed=0,
                tokens=256,
                wall_s=1.0,
                agg_tok_s=agg / (noise.boot_factor * noise.segment_factor(k)),
                per_req_tok_s=per_req / (noise.boot_factor * noise.segment_factor(k)),
            )
            for k in range(samples)
        ]
        points.append(msgspec.structs.replace(drawn[0], samples=drawn))
    return DepthRun(
        depth=3,
        profile=model.DEFAULT_PROFILE,
        backend="sim",
        hardware=HARDWARE,
        workload=workload,
        points=points,
    )


def _pytest(tmp_path: Path, name: str, *extra: str) -> tuple[int, str, float]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "perf_tests",
        "-k",
        "throughput",
        "--spec-steps=3",
        "--specperf-backend=sim",
        f"--specperf-sim-speedup={SPEEDUP:g}",
        "--specperf-concurrency=1,4",
        "--specperf-max-new-tokens=64",
        "--specperf-min-point-seconds=0",
        "--specperf-repeats=2",
        f"--specperf-baselines={tmp_path / 'baselines'}",
        f"--specperf-history={tmp_path / 'history.sqlite'}",
        f"--specperf-out={tmp_path / name}",
        *extra,
    ]
    begun = time.monotonic()
    done = subprocess.run(
        command,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - begun


def _pooled(tmp_path: Path, name: str) -> str:
    results = msgspec.json.decode((tmp_path / name / "results.json").read_bytes(), type=RunResults)
    return next(
        v.noise_source or "" for r in results.runs for v in r.verdicts if v.concurrency is None
    )


def test_floors_from_the_history_pass_a_slower_machine_and_fail_a_quarter_slower(
    tmp_path: Path,
) -> None:
    settings = build_settings(FLAGS.get, REPO)
    workload = msgspec.json.decode(msgspec.json.encode(settings.workload.key()))
    boots = [_run(workload, 0.01, f"calibration:{k}", 3) for k in range(3)]
    save_baseline(
        tmp_path / "baselines",
        baseline_from_runs(boots, how_recorded="test: 3 quiet boots", source="calibrated"),
    )
    store = HistoryStore.open(tmp_path / "history.sqlite")
    for night in range(10):
        run = _run(workload, 0.05, f"night:{night}", 2)
        results = RunResults(
            run_id=f"night{night}",
            started_at=f"2026-12-{night + 1:02d}T00:00:00+00:00",
            tool_version="test",
            runs=[run],
        )
        store.record(results, RunContext(run_profile="nightly", runner=f"runner{night}"))
        store.finish_run(results.run_id)
    store.close()

    code, output, slower_s = _pytest(
        tmp_path, "slower", "--specperf-server-arg=--sim-slowdown=0.11"
    )
    assert code == 0, output[-3000:]
    assert "floor from 10 history runs" in _pooled(tmp_path, "slower"), output[-3000:]
    assert "gate floor: steps=3" in output and "10 history runs" in output

    code, output, quarter_s = _pytest(
        tmp_path, "quarter", "--specperf-server-arg=--sim-slowdown=0.33"
    )
    assert code == 1, output[-3000:]
    assert "floor from 11 history runs" in _pooled(tmp_path, "quarter"), output[-3000:]
    print(f"real runs: {slower_s:.1f} s and {quarter_s:.1f} s")
