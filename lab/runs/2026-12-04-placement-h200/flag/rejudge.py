"""The flag phase's verdict judged again from its six boots' results.json, with each point's
per-position acceptance recomputed from its histogram by the suite's current code.

    python lab/runs/2026-12-04-placement-h200/flag/rejudge.py

The run printed "position 1: 1.00 -> 1.00": the suite then counted draft positions from the
depth (3), so head's 8 draft tokens (7 positions) were cut at 3. The verdict and the figures
are the same; only the position named changes.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from pytest_specperf.gate.ab.estimate import AbSettings, Pair, boot_point
from pytest_specperf.gate.ab.verdict import look
from pytest_specperf.results.acceptance import position_accept_rates
from pytest_specperf.results.schema import RunResults

HERE = Path(__file__).parent / "ab" / "steps3"
DEPTH = 3


def side(name: str) -> dict[int, object]:
    results = msgspec.json.decode((HERE / name / "results.json").read_bytes(), type=RunResults)
    found = {}
    for point in results.runs[0].points:
        point.position_accept_rate = position_accept_rates(point.accept_histogram, DEPTH)
        found[point.concurrency] = boot_point(point)
    return found


pairs = [Pair(base=side(f"pair{n}-base"), head=side(f"pair{n}-head")) for n in (1, 2, 3)]
print(look(DEPTH, pairs, AbSettings(max_pairs=3)).message(min_effect=0.05))
