"""The slowdown a red night has to show on this machine, and the ladder's sleeps around it.

A nightly of ``--samples`` samples a point against BASELINE goes red past the baseline's
expected floor (``gate/floors.py``, the figure ``specperf baseline show`` prints). Where that
floor is under the issue's 5%, the red night is the issue's question as asked: a 5% slowdown,
whatever comes of it on this machine. Where it is 5% or wider, a 5% night cannot be red, and
the red night shows instead that the gate catches what lies past its floor: this machine's
own nightly (NIGHTLY, its results.json) read some lead over the same baseline, which an
injected slowdown has to take off before it counts, so the target is floor + lead +
``--margin``, a slowdown the gate should call red here rather than one that lands on the
floor and goes either way.

The sleeps: the rungs a cost of ``--slope`` per millisecond (on the seed-class profile at C=64:
2 ms cost 4.3% on an H100, 24-36 ms cost 42-51% on an H200; about 2% a ms on both) puts at
0.75, 1 and 1.25 times the target, to the quarter millisecond. The ladder then measures them.

    python lab/gpu/red_night_target.py BASELINE [NIGHTLY_RESULTS_JSON]
prints the reasoning, then ``TARGET=<share>`` and ``SLEEPS=<seconds ...>`` for the driver.
Without this machine's nightly (a session with time for the red night alone) its lead is
unknown: the highest level of the machines the baseline rests on stands in for it, so the
target still passes the floor on a card that reads like the fastest on record.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from pytest_specperf.gate.baselines import Baseline, load_baseline, metric_samples
from pytest_specperf.gate.decision import GateSettings
from pytest_specperf.gate.floors import expected_depth_floor, references_of
from pytest_specperf.gate.review import ReviewError, pick_run, read_results
from pytest_specperf.results.schema import DepthRun

ISSUE_TARGET = 0.05


def lead(run: DepthRun, baseline: Baseline) -> float:
    """This run's agg tok/s over the baseline's, the geometric mean over the points both hold
    (each point's own geometric mean of samples), as a share (+0.015: 1.5% above)."""
    logs = []
    for point in run.points:
        reference = baseline.point(point.concurrency)
        samples = metric_samples(point, "agg_tok_s")
        if reference is None or not samples:
            continue
        figure = references_of(reference, baseline)["agg_tok_s"].figure
        logs.append(sum(math.log(value / figure) for value in samples) / len(samples))
    if not logs:
        raise SystemExit("the nightly and the baseline share no point with agg tok/s")
    return math.exp(sum(logs) / len(logs)) - 1


def highest_level_on_record(baseline: Baseline) -> float | None:
    """The agg level of the fastest machine a merged baseline rests on, as a share (+0.027:
    2.7% over the machines' median); None: not merged across machines."""
    runs = baseline.machines.runs if baseline.machines is not None else []
    levels = [run.agg_level for run in runs if run.agg_level is not None]
    return math.exp(max(levels)) - 1 if levels else None


def target(floor: float, ahead: float, margin: float) -> float:
    """The share a red night's slowdown should cost (``floor``: the floor's drop, 0.067 for
    -6.7%; ``ahead``: this machine's lead over the baseline)."""
    if floor < ISSUE_TARGET:
        return ISSUE_TARGET
    return floor + max(ahead, 0.0) + margin


def sleeps_around(share: float, slope_per_ms: float) -> list[float]:
    """Three sleeps (seconds) at 0.75, 1 and 1.25 times the share at ``slope_per_ms``."""
    centre_ms = share / slope_per_ms
    rungs = [round(centre_ms * factor * 4) / 4 for factor in (0.75, 1.0, 1.25)]
    return sorted({max(rung, 0.25) / 1000 for rung in rungs})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument(
        "nightly", type=Path, nargs="?", help="this machine's nightly results.json, if it ran"
    )
    parser.add_argument("--samples", type=int, default=3, help="the nightly's samples a point")
    # The lead is read in the nightly's boot, the red night runs in another: on one H100 two
    # boots read 2.6% apart (docs/runs/2026-12-06-seed-nightly-h100-third).
    parser.add_argument("--margin", type=float, default=0.025)
    parser.add_argument("--slope", type=float, default=0.02, help="share lost per ms of sleep")
    args = parser.parse_args()
    baseline = load_baseline(args.baseline)
    if baseline is None:
        raise SystemExit(f"{args.baseline}: no baseline")
    pooled = expected_depth_floor(baseline, args.samples, GateSettings())
    if pooled is None:
        # No calibrated noise: each point is held to the fixed tolerance.
        floor, source = baseline.tolerance.throughput, "fixed tolerance: no calibrated noise"
    else:
        floor, source = 1 - math.exp(-pooled.threshold), pooled.noise_source
    print(f"floor for {args.samples} samples: -{floor:.1%} ({source})")
    if args.nightly is not None:
        try:
            run = pick_run(read_results(args.nightly), baseline.depth, args.nightly)
        except ReviewError as error:
            raise SystemExit(str(error)) from None
        ahead = lead(run, baseline)
        print(f"this machine's nightly: {ahead:+.1%} vs the baseline")
    else:
        highest = highest_level_on_record(baseline)
        ahead = highest if highest is not None else 0.0
        print(
            f"no nightly of this machine: its lead taken as the fastest machine's on record, "
            f"{ahead:+.1%}"
            if highest is not None
            else "no nightly of this machine and no machine levels on record: lead taken as 0"
        )
    share = target(floor, ahead, args.margin)
    why = (
        f"the issue's {ISSUE_TARGET:.0%}: the floor is under it"
        if floor < ISSUE_TARGET
        else f"floor + lead + {args.margin:.1%}: a {ISSUE_TARGET:.0%} night cannot pass the floor"
    )
    print(f"target: -{share:.1%} ({why})")
    sleeps = sleeps_around(share, args.slope)
    print(f"TARGET={share:.4f}")
    print("SLEEPS=" + " ".join(f"{sleep:g}" for sleep in sleeps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
