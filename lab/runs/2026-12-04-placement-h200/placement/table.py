"""The placement experiment's tables from placement.jsonl.

python lab/runs/2026-12-04-placement-h200/placement/table.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

rows = [json.loads(line) for line in (Path(__file__).parent / "placement.jsonl").open()]

print("## single-thread speed of each vCPU (M loop iterations/s, 0.25 s each, one at a time)")
print("| probe | " + " | ".join(f"cpu{c}" for c in range(16)) + " | slowest | fastest |")
print("| --- " * 19 + "|")
for row in rows:
    if row["kind"] == "vcpu_speed":
        speeds = [row["speeds"][str(c)] for c in range(16)]
        cells = " | ".join(f"{v:.1f}" for v in speeds)
        print(f"| {row['label']} | {cells} | {min(speeds):.1f} | {max(speeds):.1f} |")

print()
print("## SGLang's scheduler moved by hand between vCPUs (C = 1, 3 s per measurement)")
print("| boot | where the scheduler ran | tok/s | scheduler's busiest thread |")
print("| --- | --- | --- | --- |")
for row in rows:
    if row["kind"] == "tok_s":
        busiest = row["busy_threads"][0]
        print(
            f"| {row['boot']} | {row['label']} | {row['tok_s']:,.0f} "
            f"| {busiest['share']:.0%} on cpu{busiest['cpu']} |"
        )

pinned = [r["tok_s"] for r in rows if r["kind"] == "tok_s" and "busy loop" not in r["label"]]
print()
print(
    f"without the busy loop: {min(pinned):,.0f} to {max(pinned):,.0f} tok/s "
    f"({max(pinned) / min(pinned) - 1:.0%} apart), median {statistics.median(pinned):,.0f}"
)
