"""Each machine's nightly judged against a baseline merged from the other machines only.

    python lab/studies/held_out_machines.py \\
        lab/runs/seed-class-nightly-machines/1x-h100-80gb-hbm3/*.results.json \\
        --judge lab/runs/2026-12-06-seed-h100-fifth/red.results.json

The shipped baseline holds every machine's nightly, so a machine judged against it is judged
partly against itself. A fresh runner is not: this study leaves each machine out in turn,
merges the rest exactly as ``specperf baseline merge`` does (``gate/review.py`` ``merge``'s
reading of results.json, ``gate/machines.py`` ``merge_across_machines``), and judges the
left-out machine's nightly with the gate's own functions (``gate/floors.py`` ``point_input``,
``gate/decision.py`` ``judge_depth``, default settings): the first boot's samples as the first
look, the later boots' samples as the confirmation where the first look was borderline, as the
plugin does. ``--judge``: more runs (a red night, say) judged against the baseline merged
from every machine but their own. One line a run: the machines the baseline rests on, the
depth's floor and change, the verdict.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_specperf.gate.decision import GateSettings, PointInput, Remeasured, judge_depth
from pytest_specperf.gate.floors import boots_of, point_input, samples_by_metric
from pytest_specperf.gate.machines import LabelledRun, machine_key, merge_across_machines
from pytest_specperf.gate.review import pick_run, read_results
from pytest_specperf.measure.repeats import split_by_boot
from pytest_specperf.results.schema import DepthRun


def labelled(path: Path, depth: int) -> LabelledRun:
    results = read_results(path)
    return LabelledRun(f"{path.name} (run {results.run_id})", pick_run(results, depth, path))


def judged(run: DepthRun, others: list[LabelledRun]) -> str:
    baseline = merge_across_machines(others, how_recorded="held-out study")
    settings = GateSettings()
    boots = split_by_boot(run)
    first = boots[0]
    points: list[PointInput] = [point_input(point, baseline) for point in first.points]
    confirmed = {
        point.concurrency: Remeasured(samples_by_metric(point), boots_of(point), point.client_bound)
        for point in run.points
    }
    verdicts = judge_depth(
        run.depth,
        points,
        settings,
        path="held-out",
        refresh_hint="-",
        confirmed=confirmed if len(boots) > 1 else None,
    )
    depth = next(v for v in verdicts if v.concurrency is None)
    machines = baseline.machines.count if baseline.machines else 1
    if depth.floor is None or depth.measured is None:
        return f"against {machines} other machine(s): no pooled verdict ({depth.message})"
    floor = f"{depth.floor - 1:+.1%}"
    change = f"{depth.measured - 1:+.1%}"
    samples = max(len(v) for p in run.points for v in samples_by_metric(p).values())
    points_red = sum(1 for v in verdicts if v.concurrency is not None and v.outcome == "regression")
    return (
        f"against {machines} other machine(s): floor {floor}, change {change}: {depth.outcome}"
        f"{' (re-measured)' if depth.remeasured else ''}; point verdicts red: {points_red}; "
        f"{len(boots)} boot(s), {samples} sample(s) a point"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("machines", nargs="+", type=Path, help="each machine's nightly results")
    parser.add_argument("--judge", nargs="*", type=Path, default=[], help="more runs to judge")
    parser.add_argument("--spec-steps", type=int, default=3)
    args = parser.parse_args()
    runs = [labelled(path, args.spec_steps) for path in args.machines]
    extra = [labelled(path, args.spec_steps) for path in args.judge]
    for run in runs + extra:
        others = [other for other in runs if machine_key(other) != machine_key(run)]
        if not others:
            print(f"{run.label}: no other machine to merge")
            continue
        testbed = run.run.testbed
        gpu = testbed.gpu_uuid[:12] if testbed and testbed.gpu_uuid else "?"
        print(f"{run.label} [{gpu}]: {judged(run.run, others)}")


if __name__ == "__main__":
    main()
