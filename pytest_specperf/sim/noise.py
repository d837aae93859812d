"""The simulator's noise: what makes two measurements of the same point differ.

Three multiplicative factors on every step time, all log-normal (exp of a normal draw, so a
sigma is a CV on the log scale, the scale the gate works on), all seeded:

- a **boot factor**, drawn once per server boot (``--sim-noise``): a whole boot is slower or
  faster, every point alike;
- a **drift factor** inside a boot (``--sim-point-noise``), redrawn every
  ``--sim-point-noise-period`` seconds of simulated time: two measurements of one point a few
  seconds apart differ by it, as the points of one boot do on a GPU;
- a **step jitter** (``--sim-jitter``), drawn per step; over the hundreds of steps of a
  point it averages out (a point's mean jitter has CV sigma / sqrt(steps)).

The server (scheduler.py) draws from this class, and so do the gate's detection studies,
in-process (docs/explanation/gate.md).
"""

from __future__ import annotations

import math
import random


class NoiseModel:
    def __init__(
        self,
        *,
        boot_cv: float = 0.0,
        point_cv: float = 0.0,
        point_period_s: float = 10.0,
        step_jitter: float = 0.0,
        seed: int | str = 0,
    ) -> None:
        if point_period_s <= 0:
            raise ValueError(f"point noise period must be positive, got {point_period_s}")
        self.boot_cv = boot_cv
        self.point_cv = point_cv
        self.point_period_s = point_period_s
        self.step_jitter = step_jitter
        self.seed = seed
        self.boot_factor = self.lognormal(random.Random(f"{seed}:boot"), boot_cv)
        self._step_rng = random.Random(f"{seed}:steps")
        self._segment: tuple[int, float] = (-1, 1.0)

    @staticmethod
    def lognormal(rng: random.Random, sigma: float) -> float:
        """exp(N(0, sigma)): median 1, CV about sigma; exactly 1 when sigma is 0."""
        return math.exp(rng.gauss(0.0, sigma)) if sigma > 0 else 1.0

    def segment_factor(self, segment: int) -> float:
        """The drift factor of one segment of simulated time (the same for a seed, always)."""
        return self.lognormal(random.Random(f"{self.seed}:point:{segment}"), self.point_cv)

    def drift_factor(self, model_time_s: float) -> float:
        """The drift factor in force at a simulated time since boot."""
        segment = int(model_time_s // self.point_period_s)
        if self._segment[0] != segment:
            self._segment = (segment, self.segment_factor(segment))
        return self._segment[1]

    def step_factor(self) -> float:
        return self.lognormal(self._step_rng, self.step_jitter)

    def mean_step_factor(self, rng: random.Random, steps: int) -> float:
        """The mean jitter over ``steps`` steps, drawn at once (the study's shortcut): its log
        has sigma / sqrt(steps), which is what averaging that many draws gives."""
        return self.lognormal(rng, self.step_jitter / math.sqrt(max(steps, 1)))

    def factor(self, model_time_s: float) -> float:
        """Every factor on the step that starts at this simulated time."""
        return self.boot_factor * self.drift_factor(model_time_s) * self.step_factor()

    def describe(self) -> dict[str, float | int | str]:
        return {
            "boot_cv": self.boot_cv,
            "point_cv": self.point_cv,
            "point_period_s": self.point_period_s,
            "step_jitter": self.step_jitter,
            "noise_seed": self.seed,
            "boot_factor": self.boot_factor,
        }
