"""Issue 38, point 2, end to end and short: a baseline calibrated on one quiet machine, ten
earlier runs of a noisy runner in the history store, then one real simulator run per outcome.

One real run without gating gives the simulator's figures on this machine; the baseline
(3 boots at 1% noise) and the history (10 runs, each its own boot factor at 5%) are drawn
around them with the simulator's own noise model (sim/noise.py) and written through the
baselines' and the store's own APIs; then two real runs (`pytest perf_tests
--specperf-backend=sim`): a machine 11% slower is green with its floors taken from the
history and saying so; one 33% slower is red. lab/studies/history_spread_sim.py runs the whole
thing for real (docs/runs/)."""

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
from pytest_specperf.results.schema import DepthRun, PointMetrics, RunResults
from pytest_specperf.sim.noise import NoiseModel
from tests.support.data import REPO

SPEEDUP = 2.0
pytestmark = pytest.mark.usefixtures("no_leftover_sims")


def _run(level: DepthRun, boot_cv: float, seed: str, samples: int) -> DepthRun:
    """One boot drawn around the measured run's figures (``level``)."""
    noise = NoiseModel(boot_cv=boot_cv, point_cv=0.01, seed=seed)
    points = []
    for measured in level.points:
        concurrency, agg, per_req = measured.concurrency, measured.agg_tok_s, measured.per_req_tok_s
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
    return msgspec.structs.replace(level, points=points, verdicts=[])


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
        "--specperf-repeats=1",
        f"--specperf-baselines={tmp_path / 'baselines'}",
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


def _results(tmp_path: Path, name: str) -> RunResults:
    return msgspec.json.decode((tmp_path / name / "results.json").read_bytes(), type=RunResults)


def _pooled(tmp_path: Path, name: str) -> str:
    results = _results(tmp_path, name)
    return next(
        v.noise_source or "" for r in results.runs for v in r.verdicts if v.concurrency is None
    )


def test_floors_from_the_history_pass_a_slower_machine_and_fail_a_quarter_slower(
    tmp_path: Path,
) -> None:
    code, output, _ = _pytest(tmp_path, "level", "--specperf-allow-no-baseline")
    assert code == 0, output[-3000:]
    level = _results(tmp_path, "level").runs[0]
    boots = [_run(level, 0.01, f"calibration:{k}", 3) for k in range(3)]
    save_baseline(
        tmp_path / "baselines",
        baseline_from_runs(boots, how_recorded="test: 3 quiet boots", source="calibrated"),
    )
    store = HistoryStore.open(tmp_path / "history.sqlite")
    for night in range(10):
        results = RunResults(
            run_id=f"night{night}",
            started_at=f"2026-12-{night + 1:02d}T00:00:00+00:00",
            tool_version="test",
            runs=[_run(level, 0.05, f"night:{night}", 1)],
        )
        store.record(results, RunContext(run_profile="nightly", runner=f"runner{night}"))
        store.finish_run(results.run_id)
    store.close()
    history = f"--specperf-history={tmp_path / 'history.sqlite'}"

    code, output, slower_s = _pytest(
        tmp_path, "slower", history, "--specperf-server-arg=--sim-slowdown=0.11"
    )
    assert code == 0, output[-3000:]
    assert "floor from 10 history runs" in _pooled(tmp_path, "slower"), output[-3000:]
    assert "gate floor: steps=3" in output and "10 history runs" in output

    code, output, quarter_s = _pytest(
        tmp_path, "quarter", history, "--specperf-server-arg=--sim-slowdown=0.33"
    )
    assert code == 1, output[-3000:]
    assert "floor from 11 history runs" in _pooled(tmp_path, "quarter"), output[-3000:]
    print(f"real runs: {slower_s:.1f} s and {quarter_s:.1f} s")
