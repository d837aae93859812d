"""lab/studies/relabel_bound.py re-reads recorded samples with the bound rule of the checkout."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.results.schema import GpuUse, ServerCpu
from tests.support.history_writer import sample_results
from tests.support.points import make_point
from tests.support.scripts import run_script

STUDY = Path(__file__).resolve().parents[3] / "lab" / "studies" / "relabel_bound.py"


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
