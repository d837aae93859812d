"""Per SGLang boot of this run: its throughput level, where its scheduler ran and how busy the
GPU was, from each boot's samples (results.json) and samples.log (every 2 s: the GPU's clock,
power and utilization; each busy server or client thread with the vCPU it last ran on and its
CPU share).

    python lab/runs/2026-12-04-h200/boots.py

Boots in the order they started: the MTP smoke record's three, then the seed-class A/A
phase's six (base, head, head, base, base, head). Each boot's window runs from its server's
"ready" line to its SIGTERM (server-boot-lines.txt): the warm-up and the sweep, not the boot.
A boot's level is the mean over C = 1, 4, 16 of the mean log agg tok/s of its samples, as a
change from the first boot of its profile.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import statistics
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] (.*)")
AB_BOOTS = ["pair1-base", "pair1-head", "pair2-head", "pair2-base", "pair3-base", "pair3-head"]


def level(samples_by_point: list[list[float]]) -> float:
    return statistics.fmean(statistics.fmean(math.log(v) for v in s) for s in samples_by_point)


def boot_levels() -> list[tuple[str, float]]:
    """(label, level) per boot, in boot order: the record's boots, then the A/A phase's."""
    record = json.loads((HERE / "mtp-record/results.json").read_text())
    points = record["runs"][0]["points"]
    boots = sorted({s["boot"] for p in points for s in p["samples"]})
    found = [
        (
            f"MTP smoke record, boot {b + 1}",
            level([[s["agg_tok_s"] for s in p["samples"] if s["boot"] == b] for p in points]),
        )
        for b in boots
    ]
    for name in AB_BOOTS:
        run = json.loads((HERE / "aa/ab/steps3" / name / "results.json").read_text())
        samples = [[s["agg_tok_s"] for s in p["samples"]] for p in run["runs"][0]["points"]]
        found.append((f"seed-class A/A, {name}", level(samples)))
    return found


def windows() -> list[tuple[int, int]]:
    """(ready, SIGTERM) in epoch seconds per boot, in boot order."""
    found: list[tuple[int, int]] = []
    for name in ("mtp-record", "aa"):
        ready = 0
        for line in (HERE / name / "server-boot-lines.txt").read_text().splitlines():
            if stamped := STAMP.match(line):
                when = datetime.strptime(stamped[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
                if "fired up" in stamped[2]:
                    ready = int(when.timestamp())
                elif "SIGTERM" in stamped[2]:
                    found.append((ready, int(when.timestamp())))
    return found


def read_samples() -> Any:
    """This folder's samples.log, read as the 2026-12-03 evening run's boots.py reads its own."""
    path = HERE.parent / "2026-12-03-ab-h200-evening" / "boots.py"
    spec = importlib.util.spec_from_file_location("evening_boots", path)
    assert spec is not None and spec.loader is not None
    evening = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evening)
    return evening.read_samples(HERE / "samples.log")


def main() -> None:
    gpu, threads = read_samples()
    levels = boot_levels()
    spans = windows()
    if len(spans) != len(levels):
        raise SystemExit(f"{len(spans)} boot windows in the server lines, {len(levels)} boots")
    print("| boot | level | 2 s samples | scheduler vCPUs | scheduler busy | GPU MHz | GPU util |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    first = {"MTP": levels[0][1], "seed": levels[3][1]}
    for (ready, stop), (label, value) in zip(spans, levels, strict=True):
        busy = [
            (t, row)
            for t in sorted(threads)
            if ready <= t <= stop
            for row in threads[t]
            if row[1].startswith("sglang::schedul")
        ]
        cpus = Counter(row[2] for _, row in busy)
        times = [t for t, _ in busy if t in gpu]
        change = math.exp(value - first[label.split()[0].split("-")[0]]) - 1
        print(
            f"| {label} | {change:+.1%} | {len(busy)} "
            f"| {', '.join(f'cpu{c} x{n}' for c, n in cpus.most_common(3))} "
            f"| {statistics.median(row[3] for _, row in busy):.0f}% "
            f"| {statistics.median(gpu[t][0] for t in times):,.0f} "
            f"| {statistics.median(gpu[t][2] for t in times):.0f}% |"
        )


if __name__ == "__main__":
    main()
