"""The acceptance floors of this run's seed-class boots, judged again with the rule that fails
a figure under its floor only beyond its samples' spread (gate/floors.py, 2026-12-03).

    python lab/runs/2026-12-03-seed-class-h200/rejudge_acceptance.py

The boots' results.json and the day-old baseline they were gated against
(../2026-12-02-seed-class-gate-h200/seed/baselines); the gate's alpha of 1% (99% bounds).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.gate.baselines import load_baseline
from pytest_specperf.gate.floors import accept_length_failure, position_accept_failures
from pytest_specperf.results.acceptance import (
    SamplingBound,
    accept_length_upper_bound,
    position_rate_upper_bounds,
)
from pytest_specperf.results.schema import RunResults

HERE = Path(__file__).parent
BASELINE = (
    HERE.parent
    / "2026-12-02-seed-class-gate-h200/seed/baselines"
    / "qwen3-next-real-width-fp8-mtp/1x-h200/steps-3.json"
)
CONFIDENCE = 0.99


def value(bound: SamplingBound | None) -> float:
    return bound.value if bound else float("nan")


baseline = load_baseline(BASELINE)
assert baseline is not None
print("| boot | accept length (99% upper bound) | position 3 (99% upper bound) | verdict |")
print("| --- | --- | --- | --- |")
for name in ("seed/gate-boot1", "seed/accept-3.11", "seed3/gate-boot1", "seed3/accept-2.87"):
    results = msgspec.json.decode((HERE / name / "results.json").read_bytes(), type=RunResults)
    run = results.runs[0]
    length_upper = accept_length_upper_bound(run, CONFIDENCE)
    uppers = position_rate_upper_bounds(run, CONFIDENCE)
    failures = position_accept_failures(
        run.position_accept_rate, baseline, 3, BASELINE.relative_to(HERE.parent), uppers
    )
    length = accept_length_failure(run.accept_length, baseline, 3, BASELINE, upper=length_upper)
    failures += [length] if length else []
    rates = run.position_accept_rate
    print(
        f"| {name} | {run.accept_length:.3f} ({value(length_upper):.3f}) | {rates[-1]:.3f} "
        f"({value(uppers[-1]):.3f}) | "
        f"{'red: ' + str(len(failures)) + ' floor(s)' if failures else 'green'} |"
    )
