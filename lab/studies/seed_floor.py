"""The floor a nightly gets from a baseline merged across machines, and with more machines.

    python lab/studies/seed_floor.py baselines/qwen3-next-real-width-fp8-mtp/*/steps-3.json

For each baseline file and point: the depth's pooled floor and each metric's own floor for a
nightly of ``--samples`` samples (the seed-class preset's 3) reading exactly the baseline's
figures, with the gate's own functions (``gate/floors.py`` ``pooled_floor``, ``gate/decision.py``
``compare`` at the default settings). Then the projection the next machines are for: the
same file with 1, 2 or 3 more machines whose spread between them is the one measured now
(``boot_to_boot_cv`` kept, the machine count raised): what the gate's rule (at least 5% from
fewer than 3 machines, the 60% upper bound from fewer than 5) gives. A projection, not a
measurement: a real machine moves the spread, which is why it has to run.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

import msgspec

from pytest_specperf.gate.baselines import Baseline, load_baseline
from pytest_specperf.gate.decision import GateSettings, Reference, compare
from pytest_specperf.gate.floors import pooled_floor, references_of
from pytest_specperf.gate.noise import MetricNoise


def references(baseline: Baseline, concurrency: int, extra: int) -> dict[str, Reference]:
    """The gate's references of one point, as if ``extra`` more machines had read the same
    spread between them."""
    point = baseline.point(concurrency)
    assert point is not None
    found = references_of(point, baseline)
    if not extra:
        return found
    for metric, ref in found.items():
        noise = ref.noise and msgspec.structs.replace(
            ref.noise, machines=ref.noise.machines + extra, boots=ref.noise.boots + extra
        )
        found[metric] = dataclasses.replace(ref, noise=noise, boots=ref.boots + extra)
    return found


def drop(threshold: float) -> str:
    return f"-{1 - math.exp(-threshold):.1%}"


def floors(refs: dict[str, Reference], samples: int, settings: GateSettings) -> str:
    pooled = pooled_floor([refs], samples, settings)
    point_alpha = settings.point_alpha(len(refs))
    per_metric = []
    for metric, ref in refs.items():
        own = compare([ref.figure] * samples, ref, alpha=point_alpha, settings=settings)
        per_metric.append(f"{metric} {drop(own.threshold)}")
    depth = "none (fixed rule)" if pooled is None else drop(pooled.threshold)
    return f"pooled {depth}; per point: {', '.join(per_metric)}"


def noise_line(refs: dict[str, Reference]) -> str:
    parts = []
    for metric, ref in refs.items():
        noise: MetricNoise | None = ref.noise
        if noise is None or noise.boot_to_boot_cv is None:
            parts.append(f"{metric}: no spread between machines")
            continue
        parts.append(
            f"{metric}: between machines {noise.boot_to_boot_cv:.2%}, within a boot "
            f"{noise.within_boot_cv or 0:.2%}, {noise.machines} machines"
        )
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baselines", nargs="+", type=Path)
    parser.add_argument("--samples", type=int, default=3, help="the nightly's samples a point")
    parser.add_argument("--more", type=int, default=3, help="project up to this many machines more")
    args = parser.parse_args()
    settings = GateSettings()
    for path in args.baselines:
        baseline = load_baseline(path)
        if baseline is None:
            raise SystemExit(f"{path}: no baseline")
        for concurrency in sorted(int(c) for c in baseline.points):
            refs = references(baseline, concurrency, 0)
            print(f"{path} C={concurrency}: {noise_line(refs)}")
            print(f"  now: {floors(refs, args.samples, settings)}")
            for extra in range(1, args.more + 1):
                projected = floors(references(baseline, concurrency, extra), args.samples, settings)
                print(f"  +{extra} machine(s) at the same spread: {projected}")


if __name__ == "__main__":
    main()
