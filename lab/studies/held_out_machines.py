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

``--slowdowns 0.03 0.05``: how often a slowdown of that size would have turned a night red on
a machine of the pool, from the nights as measured. Each machine's nightly is read again with
every throughput figure (each sample's agg and per-request tok/s) cut by the share, and judged
against the baseline of the other machines as above; one line per share: red on k of n
machines, and each machine's change. A step-time slowdown scales both figures alike at a
fixed concurrency; the draft acceptance is left as measured. What it cannot show is a machine
that slows by other than the share (a sleep's cost differs between cards), which is the red
night's job on a GPU.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import msgspec

from pytest_specperf.gate.decision import (
    GateSettings,
    PointInput,
    Remeasured,
    judge_depth,
    points_to_confirm,
)
from pytest_specperf.gate.floors import boots_of, point_input, samples_by_metric
from pytest_specperf.gate.machines import LabelledRun, machine_key, merge_across_machines
from pytest_specperf.gate.review import pick_run, read_results
from pytest_specperf.measure.repeats import split_by_boot
from pytest_specperf.results.schema import DepthRun, PointMetrics


def labelled(path: Path, depth: int) -> LabelledRun:
    results = read_results(path)
    return LabelledRun(f"{path.name} (run {results.run_id})", pick_run(results, depth, path))


@dataclass(frozen=True)
class HeldOut:
    """One run judged against the other machines: the line it prints, its pooled outcome and
    change where the gate gave one, and whether a night would have re-measured it (a first
    look too close to call, judged here on that look alone where the run has one boot)."""

    line: str
    outcome: str | None
    change: float | None
    borderline: bool = False


def judged(run: DepthRun, others: list[LabelledRun]) -> HeldOut:
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
        line = f"against {machines} other machine(s): no pooled verdict ({depth.message})"
        return HeldOut(line, None, None)
    floor = f"{depth.floor - 1:+.1%}"
    change = f"{depth.measured - 1:+.1%}"
    samples = max(len(v) for p in run.points for v in samples_by_metric(p).values())
    points_red = sum(1 for v in verdicts if v.concurrency is not None and v.outcome == "regression")
    line = (
        f"against {machines} other machine(s): floor {floor}, change {change}: {depth.outcome}"
        f"{' (re-measured)' if depth.remeasured else ''}; point verdicts red: {points_red}; "
        f"{len(boots)} boot(s), {samples} sample(s) a point"
    )
    borderline = len(boots) == 1 and bool(points_to_confirm(points, settings))
    return HeldOut(line, depth.outcome, depth.measured - 1, borderline)


def slowed(run: DepthRun, share: float) -> DepthRun:
    """The run as it would have read ``share`` slower: each point's and each sample's agg and
    per-request tok/s times 1 - share."""
    factor = 1 - share

    def scaled(point: PointMetrics) -> PointMetrics:
        return msgspec.structs.replace(
            point,
            agg_tok_s=point.agg_tok_s * factor,
            per_req_tok_s=None if point.per_req_tok_s is None else point.per_req_tok_s * factor,
            samples=[scaled(sample) for sample in point.samples],
        )

    return msgspec.structs.replace(run, points=[scaled(point) for point in run.points])


def others_of(runs: list[LabelledRun], run: LabelledRun) -> list[LabelledRun]:
    """The runs of every machine but ``run``'s."""
    return [other for other in runs if machine_key(other) != machine_key(run)]


def gpu_of(run: LabelledRun) -> str:
    testbed = run.run.testbed
    return testbed.gpu_uuid[:12] if testbed and testbed.gpu_uuid else "?"


def caught(runs: list[LabelledRun], share: float) -> str:
    """One line: on how many machines a ``share`` slowdown of their night is red against the
    others' baseline, then each machine's change and verdict."""
    each = []
    red = borderline = 0
    for run in runs:
        found = judged(slowed(run.run, share), others_of(runs, run))
        red += found.outcome == "regression"
        borderline += found.borderline
        change = "no verdict" if found.change is None else f"{found.change:+.1%}"
        close = ", borderline" if found.borderline else ""
        each.append(f"{gpu_of(run)} {change} {found.outcome or '-'}{close}")
    return (
        f"{share:.0%} slower: red on {red} of {len(runs)} machines, {borderline} of them "
        f"borderline at the first look (a night re-measures those) ({'; '.join(each)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("machines", nargs="+", type=Path, help="each machine's nightly results")
    parser.add_argument("--judge", nargs="*", type=Path, default=[], help="more runs to judge")
    parser.add_argument("--spec-steps", type=int, default=3)
    parser.add_argument(
        "--slowdowns",
        nargs="*",
        type=float,
        default=[],
        help="shares (0.05: 5%%) each machine's night is read slower by, then judged",
    )
    args = parser.parse_args()
    runs = [labelled(path, args.spec_steps) for path in args.machines]
    extra = [labelled(path, args.spec_steps) for path in args.judge]
    for run in runs + extra:
        others = others_of(runs, run)
        if not others:
            print(f"{run.label}: no other machine to merge")
            continue
        print(f"{run.label} [{gpu_of(run)}]: {judged(run.run, others).line}")
    for share in args.slowdowns:
        print(caught(runs, share))


if __name__ == "__main__":
    main()
