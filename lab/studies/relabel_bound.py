"""Re-read the samples of results.json files with the suite's current bound rule.

    python lab/studies/relabel_bound.py OUT/results.json [MORE/results.json ...]
    python lab/studies/relabel_bound.py --tarball lab/runs/2026-12-05-seed-h200/proof.tar.xz

Prints one row per measured sample that has a GPU reading or a server CPU share: the file,
depth, C, NVML's busy share, the server's busiest process's share of a core, the bound the
run recorded and the bound ``results/testbed_schema.point_bound`` gives now. A run recorded
under an earlier rule keeps its label in its file; this shows what the rule of this checkout
makes of the same readings.
"""

from __future__ import annotations

import argparse
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pytest_specperf.gate.review import read_results
from pytest_specperf.results.schema import PointMetrics, RunResults, point_bound


def samples(results: RunResults) -> Iterator[tuple[int, PointMetrics]]:
    for run in results.runs:
        for point in run.points:
            for sample in point.all_samples():
                yield run.depth, sample


def rows(path: Path, name: str) -> list[str]:
    found = []
    for depth, sample in samples(read_results(path)):
        if sample.gpu is None and sample.server_cpu is None:
            continue
        busy = "-" if sample.gpu is None else f"{sample.gpu.busy:.0%}"
        cpu = "-" if sample.server_cpu is None else f"{sample.server_cpu.share:.0%}"
        now = point_bound(sample.server_cpu, sample.gpu) or "-"
        found.append(
            f"{name} | {depth} | {sample.concurrency} | {busy} | {cpu} | "
            f"{sample.bound or '-'} | {now}"
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path)
    parser.add_argument("--tarball", type=Path, help="every results.json inside this tar.gz")
    args = parser.parse_args()
    print("file | steps | C | GPU busy | server CPU | recorded | now")
    print("--- | --- | --- | --- | --- | --- | ---")
    for path in args.results:
        print("\n".join(rows(path, str(path))))
    if args.tarball is not None:
        with tempfile.TemporaryDirectory() as tmp, tarfile.open(args.tarball) as tar:
            tar.extractall(tmp, filter="data")
            for path in sorted(Path(tmp).rglob("results.json")):
                lines = rows(path, str(path.relative_to(tmp)))
                if lines:
                    print("\n".join(lines))


if __name__ == "__main__":
    main()
