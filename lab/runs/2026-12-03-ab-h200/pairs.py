"""Per-pair changes of the A/B runs in this folder (or in the run folder given), from each
boot's results.json.

    python lab/runs/2026-12-03-ab-h200/pairs.py
    python lab/runs/2026-12-03-ab-h200/pairs.py lab/runs/2026-12-03-ab-h200-evening

For every pair: each side's boot level (mean log agg tok/s over C = 1, 4, 16, as a change
from the phase's first base boot), the spread of the repeats inside each boot, and the pair's
pooled change head/base as the A/B gate computes it (gate/ab/estimate.py, pooled_change); then
what an undecided verdict on those pairs now advises (gate/ab/undecided.py, undecided_advice).
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from pathlib import Path

import msgspec

from pytest_specperf.gate.ab.estimate import AbSettings, Pair, boot_point, pooled_change
from pytest_specperf.gate.ab.undecided import undecided_advice
from pytest_specperf.results.schema import RunResults

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent


def sides(path: Path) -> dict[int, object] | None:
    results = msgspec.json.decode(path.read_bytes(), type=RunResults)
    if not results.runs or not results.runs[0].points:
        return None
    return {p.concurrency: boot_point(p) for p in results.runs[0].points if p.ok > 0}


def level(points: dict) -> float:
    return statistics.fmean(statistics.fmean(math.log(v) for v in p.tok_s) for p in points.values())


def within(points: dict) -> float:
    """Mean over points of the repeats' spread (max/min - 1), in percent."""
    return 100 * statistics.fmean(max(p.tok_s) / min(p.tok_s) - 1 for p in points.values())


for phase in sorted(folder.name for folder in HERE.iterdir() if (folder / "ab").is_dir()):
    print(f"## {phase}")
    print("| pair | base level | head level | spread in base / head boot | pooled change |")
    print("| --- | --- | --- | --- | --- |")
    first = None
    pairs: list[Pair] = []
    for pair in itertools.count(1):
        folder = HERE / phase / "ab" / "steps3"
        base_file, head_file = (
            folder / f"pair{pair}-{side}" / "results.json" for side in ("base", "head")
        )
        if not base_file.exists():
            break
        base = sides(base_file)
        head = sides(head_file) if head_file.exists() else None
        first = level(base) if first is None else first
        cells = [f"{math.expm1(level(base) - first) * 100:+.1f}%"]
        cells.append(f"{math.expm1(level(head) - first) * 100:+.1f}%" if head else "not measured")
        cells.append(f"{within(base):.1f}% / " + (f"{within(head):.1f}%" if head else "-"))
        change = pooled_change(Pair(base=base, head=head)) if head else None
        if head:
            pairs.append(Pair(base=base, head=head))
        cells.append(f"{math.expm1(change.total) * 100:+.1f}%" if change else "-")
        print(f"| {pair} | " + " | ".join(cells) + " |")
    print()
    print(f"advice on these pairs: {undecided_advice(pairs, AbSettings(max_pairs=3))}")
    print()
