"""How low the first measured sample of a boot reads, with and without the boot's warm-up.

The simulator runs the first step of each new shape (prefill or decode, batch size and longest
sequence, each rounded up to a power of two) --sim-cold-shape-ms slower, as a real GPU
compiles kernels for a shape it has not run. The suite's own DepthSession boots it, sweeps the
points R times, and this prints, per point, the first sample over the median of the later
ones, once with the warm-up (--specperf-warmup-rounds N) and once without (0), for several
boots each.

    python lab/studies/warmup_bias.py --boots 3 --cold-ms 2000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _study import add_sweep_options

from pytest_specperf.config.settings import build_settings
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


def first_over_rest(run: DepthRun) -> dict[int, float]:
    ratios: dict[int, float] = {}
    for point in run.points:
        first, *rest = (sample.agg_tok_s for sample in point.samples)
        ratios[point.concurrency] = first / statistics.median(rest)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--cold-ms", type=float, default=2000.0)
    add_sweep_options(parser, tokens=128)
    parser.add_argument("--min-point-seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=6, help="warm-up rounds at most")
    args = parser.parse_args()
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
