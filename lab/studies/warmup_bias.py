"""How low the first measured sample of a boot reads, with and without the boot's warm-up.

The simulator runs the first step of each new shape (prefill or decode, batch size and longest
sequence, each rounded up to a power of two) --sim-cold-shape-ms slower, as a real GPU
compiles kernels for a shape it has not run. The suite's own DepthSession boots it, sweeps the
points R times, and this prints, per point, the first sample over the median of the later
ones, once with the warm-up (--specperf-warmup-rounds N) and once without (0), for several
boots each.

    python lab/studies/warmup_bias.py --boots 3 --cold-ms 2000

With ``--records``, the same question of runs already measured (a real GPU's results.json
files): per boot of each point with two samples or more, the first sample over the median of
the later ones and whether it read lowest, then how often the first read lowest against how
often the order of the samples alone would put it there (each boot's chance 1/samples: a
Poisson binomial, scipy's).

    python lab/studies/warmup_bias.py --records \
        lab/runs/seed-class-nightly-machines/*/*.results.json lab/runs/*/red.results.json
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _study import add_sweep_options
from scipy.stats import poisson_binom

from pytest_specperf.config.settings import build_settings
from pytest_specperf.gate.review import read_results
from pytest_specperf.results.schema import DepthRun
from pytest_specperf.results.store import ResultsStore
from pytest_specperf.run.depth_session import DepthSession


def sweep(root: Path, args: argparse.Namespace, rounds: int) -> tuple[DepthRun, float]:
    values = {
        "backend": "sim",
        "sim_speedup": str(args.speedup),
        "concurrency": args.concurrency,
        "max_new_tokens": str(args.tokens),
        "min_point_seconds": str(args.min_point_seconds),
        "repeats": str(args.repeats),
        "warmup_rounds": str(rounds),
        "server_arg": [f"--sim-cold-shape-ms={args.cold_ms:g}"],
        "out": "out",
    }
    settings = build_settings(lambda key: values.get(key), root)
    session = DepthSession(settings, 3, ResultsStore(settings.out_dir))
    begun = time.monotonic()
    session.open()
    try:
        run = session.measure_all()
    finally:
        session.close()
    return run, time.monotonic() - begun


def first_over_later(samples: Sequence[float]) -> float:
    """The first sample over the median of the later ones."""
    first, *later = samples
    return first / statistics.median(later)


def first_over_rest(run: DepthRun) -> dict[int, float]:
    return {
        point.concurrency: first_over_later([sample.agg_tok_s for sample in point.samples])
        for point in run.points
    }


@dataclass(frozen=True)
class RecordedBoot:
    """One boot of one point of a recorded run: its samples' agg tok/s in measured order."""

    where: str
    concurrency: int
    samples: list[float]
    warmup: str

    @property
    def first_over_rest(self) -> float:
        return first_over_later(self.samples)

    @property
    def first_lowest(self) -> bool:
        return self.samples[0] == min(self.samples)


def recorded_boots(path: Path) -> list[RecordedBoot]:
    results = read_results(path)
    found = []
    for run in results.runs:
        warmups = {warmup.boot: warmup for warmup in run.warmups}
        for point in run.points:
            for boot in sorted(point.boots()):
                samples = [s.agg_tok_s for s in point.all_samples() if s.boot == boot]
                if len(samples) < 2:
                    continue
                warmup = warmups.get(boot)
                warm = (
                    f"{warmup.rounds} round(s), {warmup.seconds:.0f} s, "
                    + ("settled" if warmup.settled else "not settled")
                    if warmup
                    else "none"
                )
                where = f"{path.parent.name}/{path.name} steps={run.depth} boot {boot + 1}"
                found.append(RecordedBoot(where, point.concurrency, samples, warm))
    return found


def report_records(paths: Sequence[Path]) -> None:
    boots = [boot for path in paths for boot in recorded_boots(path)]
    if not boots:
        raise SystemExit("no boot with two samples or more of one point in these files")
    print(
        "| run | C | samples (agg tok/s, in order) | first / median of the later "
        "| first lowest | warm-up |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for boot in boots:
        samples = " / ".join(f"{value:,.1f}" for value in boot.samples)
        lowest = "yes" if boot.first_lowest else "no"
        print(
            f"| {boot.where} | {boot.concurrency} | {samples} | {boot.first_over_rest:.3f} "
            f"| {lowest} | {boot.warmup} |"
        )
    lowest_count = sum(boot.first_lowest for boot in boots)
    chances = [1 / len(boot.samples) for boot in boots]
    later = statistics.fmean(
        statistics.fmean(boot.samples[1:]) / boot.samples[0] - 1 for boot in boots
    )
    print(
        f"\nfirst sample lowest in {lowest_count} of {len(boots)} boots (by the samples' order "
        f"alone {sum(chances):.1f} expected; {lowest_count} or more: "
        f"{poisson_binom.sf(lowest_count - 1, chances):.2%}); the later samples read "
        f"{later:+.1%} on average over the first"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", nargs="+", type=Path, help="results.json files: their boots instead"
    )
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--cold-ms", type=float, default=2000.0)
    add_sweep_options(parser, tokens=128)
    parser.add_argument("--min-point-seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=6, help="warm-up rounds at most")
    args = parser.parse_args()
    if args.records:
        report_records(args.records)
        return
    print("| warm-up | boot | first sample / median of the later ones | warm-up | run s |")
    print("| --- | --- | --- | --- | --- |")
    for rounds in (args.rounds, 0):
        for boot in range(args.boots):
            with tempfile.TemporaryDirectory(prefix="specperf-warmup-") as folder:
                run, seconds = sweep(Path(folder), args, rounds)
            ratios = ", ".join(f"C={c} {r:.2f}" for c, r in first_over_rest(run).items())
            warm = (
                f"{run.warmups[0].rounds} rounds, {run.warmups[0].seconds:.1f} s, "
                + ("settled" if run.warmups[0].settled else "not settled")
                if run.warmups
                else "-"
            )
            label = f"up to {rounds} rounds" if rounds else "off"
            print(f"| {label} | {boot + 1} | {ratios} | {warm} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
