"""Judge this folder's runs again against its baseline with the gate as it is now (no
confirmation re-measure: the samples the runs took, nothing more).

    python lab/runs/2026-12-02-seed-class-gate-h200/rejudge.py
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.gate.baselines import load_baseline
from pytest_specperf.gate.decision import GateSettings, judge_depth
from pytest_specperf.gate.floors import point_input
from pytest_specperf.results.schema import RunResults

HERE = Path(__file__).parent
BASELINE = HERE / "seed/baselines/qwen3-next-real-width-fp8-mtp/1x-h200/steps-3.json"
RUNS = [
    "seed/gate-boot1",
    "seed2/gate-boot1",
    "seed/regression-0.0003s",
    "seed2/regression-5e-05s",
]


def main() -> None:
    baseline = load_baseline(BASELINE)
    assert baseline is not None, BASELINE
    print("| run | C | metric | measured | floor | verdict |")
    print("| --- | --- | --- | --- | --- | --- |")
    notes: set[str] = set()
    for name in RUNS:
        results = msgspec.json.decode((HERE / name / "results.json").read_bytes(), type=RunResults)
        run = results.runs[0]
        inputs = [point_input(point, baseline) for point in run.points]
        verdicts = judge_depth(
            run.depth, inputs, GateSettings(), path=str(BASELINE), refresh_hint=""
        )
        for v in verdicts:
            if v.metric not in ("agg_tok_s", "per_req_tok_s"):
                continue
            floor = f"{v.floor:,.1f}" if v.floor is not None else "-"
            measured = f"{v.measured:,.1f}" if v.measured is not None else "-"
            print(f"| {name} | {v.concurrency} | {v.metric} | {measured} | {floor} | {v.outcome} |")
            if v.noise_source:
                notes.add(f"C={v.concurrency} {v.metric}: {v.noise_source}")
    print()
    for note in sorted(notes):
        print(f"- {note}")


if __name__ == "__main__":
    main()
