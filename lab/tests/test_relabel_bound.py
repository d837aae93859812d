"""lab/studies/relabel_bound.py re-reads recorded samples with the bound rule of the checkout."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.results.schema import GpuUse, ServerCpu
from tests.support.history_writer import sample_results
from tests.support.points import make_point
from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[2] / "lab" / "studies" / "relabel_bound.py"


def test_a_full_core_recorded_as_cpu_bound_beside_a_busy_gpu_reads_gpu_bound_now(
    tmp_path: Path,
) -> None:
    point = make_point(64, 4413.3)
    point.server_cpu = ServerCpu(process="sglang::scheduler", share=1.0)
    point.gpu = GpuUse(busy=0.93, busy_low=0.9, busy_high=0.96, readings=100, interval_s=0.2)
    point.bound = "cpu-bound"  # as the rule before the GPU was read first labelled it
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(sample_results("r1", [point])))
    done = run_script(STUDY, str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{path} | 3 | 64 | 93% | 100% | cpu-bound | gpu-bound" in done.stdout


def test_the_h200_seed_point_reads_gpu_bound_and_the_aas_256_token_points_cpu_bound() -> None:
    """The table in docs/runs/2026-12-05-seed-h200/README.md, from the run's own files."""
    tarball = STUDY.parents[2] / "lab" / "runs" / "2026-12-05-seed-h200" / "proof.tar.xz"
    done = run_script(STUDY, "--tarball", str(tarball))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split(" | ") for line in done.stdout.splitlines() if "results.json" in line]
    seed = [row for row in rows if "seedpoint" in row[0]]
    # Each boot's own file (the run's top-level results.json repeats the last boot's points).
    aa = [row for row in rows if "/pair" in row[0]]
    assert [(row[2], row[3], row[6]) for row in seed] == [
        ("64", "93%", "gpu-bound"),
        ("64", "96%", "gpu-bound"),
    ]
    assert len(aa) == 36 and {row[6] for row in aa} == {"cpu-bound"}  # 6 boots, 2 points, R=3
    assert all(row[5] == "cpu-bound" for row in rows)  # as the rule of that day labelled them
