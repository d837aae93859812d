"""How well the history's change-point detection finds a step, and how often it invents one.

Synthetic nightly series, seeded: each night boots a server (a boot factor exp(N(0, b)))
and measures R samples (each exp(N(0, w))); the night's figure is their median, as a
nightly run stores it. The noise (w, b) is that of

- the shipped simulator baselines (baselines/*/sim-x5/*.json: the median and the 90th
  percentile of their calibrated within-boot and boot-to-boot CVs), and
- the H200 smoke profiles (within-boot 14%, boot-to-boot 10%, docs/explanation/repeats.md).

Per noise and step size (3%, 5%, 10% slower from a random night among 30, at least
``min_size`` nights from either end), a trial runs history.changes.detect (the same code as
`specperf history changes`): detected when a change point lies within 2 nights of the step
at the end of the 30 nights; its delay is the number of nights after the step that the
series needed (growing it night by night) before the change point appeared. False change
points: series of 100 nights without a step, change points per 100 nights.

    python lab/studies/changepoint_study.py                       # the table in the docs
    python lab/studies/changepoint_study.py --trials 50 --penalty 3 --alpha 0.01
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import random
import statistics
from dataclasses import dataclass
from pathlib import Path

from pytest_specperf.history.changes import DetectionSettings, detect
from pytest_specperf.history.series import Night, Series, SeriesKey

REPO = Path(__file__).resolve().parents[2]
NIGHTS = 30
QUIET_NIGHTS = 100
STEPS = (0.03, 0.05, 0.10)
KEY = SeriesKey("study", "synthetic", "greedy", 3, 16, "agg_tok_s")


@dataclass(frozen=True)
class Noise:
    name: str
    within: float  # CV of one sample within a boot
    between: float  # CV of a boot's factor
    repeats: int = 5  # samples per night (the nightly run profile's repeats)


def sim_noises() -> list[Noise]:
    within: list[float] = []
    between: list[float] = []
    for path in sorted(glob.glob(str(REPO / "baselines" / "*" / "sim-x5" / "*.json"))):
        for point in json.loads(Path(path).read_text())["points"].values():
            for noise in point.get("noise", {}).values():
                within.append(float(noise.get("within_boot_cv") or 0.0))
                between.append(float(noise.get("boot_to_boot_cv") or 0.0))
    if not within:
        return []

    def p90(values: list[float]) -> float:
        return sorted(values)[int(0.9 * (len(values) - 1))]

    return [
        Noise("sim baselines, median", statistics.median(within), statistics.median(between)),
        Noise("sim baselines, p90", p90(within), p90(between)),
    ]


def night_series(
    rng: random.Random, noise: Noise, nights: int, step_at: int | None, step: float
) -> Series:
    series = Series(KEY)
    for night in range(nights):
        level = 1000.0 * ((1.0 - step) if step_at is not None and night >= step_at else 1.0)
        boot = math.exp(rng.gauss(0.0, noise.between))
        samples = [
            level * boot * math.exp(rng.gauss(0.0, noise.within)) for _ in range(noise.repeats)
        ]
        series.nights.append(Night(night, f"r{night}", f"2026-11-{night % 28 + 1:02d}", None, None))
        series.values.append(statistics.median(samples))
        series.samples.append(samples)
        series.accept_length.append(None)
        series.verify_steps_s.append(None)
        series.position_accept.append([])
    return series


def _prefix(series: Series, length: int) -> Series:
    return Series(
        series.key,
        series.nights[:length],
        series.values[:length],
        series.samples[:length],
        series.accept_length[:length],
        series.verify_steps_s[:length],
        series.position_accept[:length],
    )


def _near(series: Series, settings: DetectionSettings, step_at: int) -> bool:
    return any(abs(c.index - step_at) <= 2 for c in detect(series, settings))


def step_trial(
    rng: random.Random, noise: Noise, step: float, settings: DetectionSettings
) -> tuple[bool, int | None]:
    step_at = rng.randint(settings.min_size, NIGHTS - settings.min_size)
    series = night_series(rng, noise, NIGHTS, step_at, step)
    if not _near(series, settings, step_at):
        return False, None
    for length in range(step_at + 1, NIGHTS + 1):
        if _near(_prefix(series, length), settings, step_at):
            return True, length - step_at
    return True, NIGHTS - step_at


def false_per_100(
    rng: random.Random, noise: Noise, settings: DetectionSettings, trials: int
) -> float:
    found = sum(
        len(detect(night_series(rng, noise, QUIET_NIGHTS, None, 0.0), settings))
        for _ in range(trials)
    )
    return 100.0 * found / (trials * QUIET_NIGHTS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--penalty", type=float, nargs="*", default=[DetectionSettings().penalty])
    parser.add_argument("--alpha", type=float, nargs="*", default=[DetectionSettings().alpha])
    parser.add_argument("--min-effect", type=float, default=DetectionSettings().min_effect)
    args = parser.parse_args(argv)
    noises = [*sim_noises(), Noise("H200 smoke", 0.14, 0.10)]
    print(
        "| noise (within, between) | penalty | alpha | step | detected | delay (nights, "
        "median / p90) | false per 100 nights |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for noise in noises:
        for penalty in args.penalty:
            for alpha in args.alpha:
                settings = DetectionSettings(
                    penalty=penalty, alpha=alpha, min_effect=args.min_effect
                )
                rng = random.Random(args.seed)
                false = false_per_100(rng, noise, settings, max(1, args.trials // 4))
                for step in STEPS:
                    outcomes = [step_trial(rng, noise, step, settings) for _ in range(args.trials)]
                    delays = sorted(d for hit, d in outcomes if hit and d is not None)
                    rate = sum(hit for hit, _ in outcomes) / len(outcomes)
                    delay = (
                        f"{statistics.median(delays):.0f} / {delays[int(0.9 * (len(delays) - 1))]}"
                        if delays
                        else "-"
                    )
                    print(
                        f"| {noise.name} ({noise.within:.2%}, {noise.between:.2%}) | "
                        f"{penalty:g} | {alpha:g} | {step:.0%} | {rate:.0%} | {delay} | "
                        f"{false:.2f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
