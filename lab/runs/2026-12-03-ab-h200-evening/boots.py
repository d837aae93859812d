"""Per SGLang boot of this run: where its scheduler ran and how busy the GPU was, from
samples.log (every 2 s: the GPU's clocks, power and utilization; each busy server or client
thread with the vCPU it last ran on and its CPU share).

    python lab/runs/2026-12-03-ab-h200-evening/boots.py

Boots are told apart by their scheduler's process id, in the order they started: the A/A
phase's six, then the slow10 phase's six, each phase booted base, head, head, base, base,
head. Only samples where the scheduler was more than half busy (the sweep) count.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).parent
GPU = re.compile(r"^== (\d+) gpu ([\d.]+) MHz, [\d.]+ MHz, ([\d.]+) W, \d+, (\d+) %")
THREAD = re.compile(r"^(\d+)/\d+ (.+?) cpu(\d+) (\d+)%$")
SIDES = ["base", "head", "head", "base", "base", "head"]


Gpu = dict[int, tuple[float, float, int]]  # time: SM MHz, watts, utilization %
Threads = dict[int, list[tuple[int, str, int, int]]]  # time: (pid, name, vCPU, CPU %) rows


def read_samples(path: Path) -> tuple[Gpu, Threads]:
    """A samples.log by time: the GPU's line and each busy thread's row (also read by
    lab/runs/2026-12-04-h200/boots.py)."""
    gpu: Gpu = {}
    threads: Threads = defaultdict(list)
    now = 0
    for line in path.read_text().splitlines():
        if found := GPU.match(line):
            now = int(found[1])
            gpu[now] = (float(found[2]), float(found[3]), int(found[4]))
        elif found := THREAD.match(line.strip()):
            threads[now].append((int(found[1]), found[2], int(found[3]), int(found[4])))
    return gpu, threads


def main() -> None:
    gpu, threads = read_samples(HERE / "samples.log")
    schedulers: list[int] = []
    for t in sorted(threads):
        for pid, name, _, _ in threads[t]:
            if name.startswith("sglang::schedul") and pid not in schedulers:
                schedulers.append(pid)
    print(
        "| phase | boot | side | samples | scheduler vCPUs | scheduler busy | GPU MHz | GPU util |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for index, pid in enumerate(schedulers):
        busy = [
            (t, row)
            for t in sorted(threads)
            for row in threads[t]
            if row[0] == pid and row[1].startswith("sglang::schedul") and row[3] > 50
        ]
        cpus = Counter(row[2] for _, row in busy)
        times = [t for t, _ in busy if t in gpu]
        phase = "aa" if index < 6 else "slow10"
        print(
            f"| {phase} | {index % 6 + 1} | {SIDES[index % 6]} | {len(busy)} "
            f"| {', '.join(f'cpu{c} x{n}' for c, n in cpus.most_common(3))} "
            f"| {statistics.median(row[3] for _, row in busy):.0f}% "
            f"| {statistics.median(gpu[t][0] for t in times):,.0f} "
            f"| {statistics.median(gpu[t][2] for t in times):.1f}% |"
        )


if __name__ == "__main__":
    main()
