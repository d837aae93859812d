"""Judge a recorded A/B's pairs again with this checkout's gate (no server, no GPU).

An A/B run keeps each boot's results under OUT/ab/stepsD/pairN-base and pairN-head. This reads
them (from a folder, or from a tarball the GPU drivers bring back) and prints the verdict the
gate of this checkout gives at the last pair, beside each boot's samples, and the pairs' changes
with their spread (an A/A's figure), so a change to the gate can be tried on what a real GPU
measured.

    python lab/studies/ab_rejudge.py --tarball lab/runs/2026-12-05-bounds-slow10-h200/proof.tar.xz
    python lab/studies/ab_rejudge.py OUT/ab/steps3 --max-pairs 3
"""

from __future__ import annotations

import argparse
import re
import tarfile
import tempfile
from pathlib import Path

from pytest_specperf.gate.ab.estimate import AbSettings, BootPoint, Pair, boot_points
from pytest_specperf.gate.ab.verdict import look, pair_record, pair_spread_line
from pytest_specperf.gate.review import read_results

PAIR_FOLDER = re.compile(r"pair(\d+)-(base|head)$")


def boot(folder: Path) -> dict[int, BootPoint] | None:
    """A boot's points; None where it did not end complete (a failed or cut boot, which an
    A/B would not judge either)."""
    if not (folder / "results.json").exists():
        return None
    run = read_results(folder / "results.json").runs[0]
    return boot_points(run) if run.status == "complete" else None


def pairs_in(steps: Path) -> list[Pair]:
    """The pairs of one depth's folder whose two boots ended complete, in order."""
    found: dict[int, dict[str, dict[int, BootPoint]]] = {}
    for folder in steps.iterdir():
        match = PAIR_FOLDER.match(folder.name)
        if match is None:
            continue
        points = boot(folder)
        if points is not None:
            found.setdefault(int(match[1]), {})[match[2]] = points
    return [
        Pair(base=sides["base"], head=sides["head"])
        for _, sides in sorted(found.items())
        if {"base", "head"} <= sides.keys()
    ]


def report(steps: Path, settings: AbSettings, name: str) -> None:
    pairs = pairs_in(steps)
    if not any(pair.concurrencies() for pair in pairs):
        # A run stopped inside its first pair leaves folders whose results hold no point.
        print(f"{name}: no point measured on both sides of a pair")
        return
    depth = int(steps.name.removeprefix("steps")) if steps.name.startswith("steps") else 0
    print(f"## {name}")
    for number, pair in enumerate(pairs, start=1):
        for side, points in (("base", pair.base), ("head", pair.head)):
            for c, measured in sorted(points.items()):
                values = ", ".join(f"{v:,.0f}" for v in measured.tok_s)
                print(f"pair {number} {side} C={c}: {values}")
    found = look(depth, pairs, settings)
    print(found.message(settings.min_effect, settings.beta))
    for summary in found.points:
        print(f"  {summary.attribution.text()}")
    records = [pair_record(number, pair) for number, pair in enumerate(pairs, start=1)]
    print(pair_spread_line([record for record in records if record is not None]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", nargs="*", type=Path, help="an A/B's ab/stepsD folder")
    parser.add_argument("--tarball", type=Path, help="every ab/steps* folder in this tarball")
    parser.add_argument("--max-pairs", type=int, default=3)
    parser.add_argument("--min-effect", type=float, default=AbSettings().min_effect)
    args = parser.parse_args()
    settings = AbSettings(max_pairs=args.max_pairs, min_effect=args.min_effect)
    for steps in args.steps:
        report(steps, settings, str(steps))
    if args.tarball is not None:
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(args.tarball) as archive:
                if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
                    archive.extractall(tmp, filter="data")
                else:
                    archive.extractall(tmp)  # the project's own run record
            for steps in sorted(Path(tmp).rglob("ab/steps*")):
                report(steps, settings, str(steps.relative_to(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
