"""Each boot's warm-up against a simulator whose new step shapes start cold (--sim-cold-shape-ms).

The suite's own DepthSession boots the simulator and sweeps C = 1, 4 three times; the first
sample of a point is compared with the later ones of the same boot. With the warm-up the
first sample reads like the others; without it (--specperf-warmup-rounds 0, only each
sample's few short requests) it reads far lower (C=4: about half): the test fails if the
warm-up stops covering the shapes a measured sample runs.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import msgspec
import pytest

from pytest_specperf.cli import main
from pytest_specperf.config.settings import build_settings
from pytest_specperf.results.schema import DepthRun, RunResults
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.depth_session import DepthSession

pytestmark = pytest.mark.usefixtures("no_leftover_sims")

# 2,000 simulated ms per new shape at speedup 10: a 0.2 s stall in samples of about 1 s.
COLD_SHAPE_ARG = "--sim-cold-shape-ms=2000"


def _sweep(tmp_path: Path, warmup_rounds: str) -> DepthRun:
    values = {
        "backend": "sim",
        "sim_speedup": "10",
        "concurrency": "1,4",
        "max_new_tokens": "128",
        "min_point_seconds": "1",
        "repeats": "3",
        "warmup_rounds": warmup_rounds,
        "warmup_tolerance": "0.05",
        "server_arg": [COLD_SHAPE_ARG],
        "out": "out",
    }
    settings = build_settings(lambda key: values.get(key), tmp_path)
    session = DepthSession(settings, 3, ResultsStore(settings.out_dir))
    session.open()
    try:
        return session.measure_all()
    finally:
        session.close()


def _first_over_rest(run: DepthRun, concurrency: int) -> float:
    point = run.point(concurrency)
    assert point is not None and len(point.samples) == 3
    first, *rest = (sample.agg_tok_s for sample in point.samples)
    return first / statistics.median(rest)


def test_with_the_warmup_the_first_sample_reads_like_the_later_ones(tmp_path: Path) -> None:
    run = _sweep(tmp_path, warmup_rounds="6")
    assert len(run.warmups) == 1 and run.warmups[0].rounds >= 2
    assert run.warmups[0].concurrency == [1, 4]
    # Without the warm-up C=4 reads 0.42-0.55 (lab/studies/warmup_bias.py); with it 0.89-1.02
    # (a rare batch state can still meet a cold shape later, in any sample).
    for concurrency in (1, 4):
        assert _first_over_rest(run, concurrency) > 0.85, concurrency


def test_without_the_warmup_the_first_sample_reads_low(tmp_path: Path) -> None:
    run = _sweep(tmp_path, warmup_rounds="0")
    assert run.warmups == []
    assert _first_over_rest(run, 4) < 0.7


def test_specperf_bench_warms_the_sweep_and_records_it(
    running_sim: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "--url", running_sim, "--concurrency", "1,4", "--max-new-tokens", "64"]
    argv += ["--min-point-seconds", "0", "--warmup-rounds", "2", "--out", str(out)]
    assert main(argv) == 0
    results = msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    (warmup,) = results.runs[0].warmups
    assert warmup.concurrency == [1, 4] and 1 <= warmup.rounds <= 2
    assert len(warmup.agg_tok_s) == warmup.rounds
    assert "warm-up boot 1: " in capsys.readouterr().out


def test_specperf_bench_without_warmup_records_none(running_sim: str, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = ["bench", "--url", running_sim, "--concurrency", "1", "--max-new-tokens", "64"]
    argv += ["--min-point-seconds", "0", "--warmup-rounds", "0", "--out", str(out)]
    assert main(argv) == 0
    results = msgspec.json.decode((out / "results.json").read_bytes(), type=RunResults)
    assert results.runs[0].warmups == []
