"""The A/B gate (paired boots, sequential) against a fixed-size A/B design and the frozen baseline.

Monte Carlo over the simulator's noise model (pytest_specperf/sim/noise.py), in-process, in
simulated time, reusing lab/studies/detection_study.py's boots and point shapes. Each A/B
trial boots base and head in pairs (each boot its own noise seed, so its own boot factor),
measures every point R times per boot, and after every pair asks gate.ab.verdict for a verdict on
the pooled change (the decision of a depth), stopping as soon as there is one. Head's throughput
is cut by the true change (the sim's --sim-slowdown).

Beside it, for the same noise:

- **fixed A/B**: the same pairs and the same paired t-test on the pooled change at one fixed
  number of pairs, the smallest for which a one-sided test at alpha reaches 1 - beta power at
  the minimum effect (noncentral t, with the per-pair spread the simulation measures at no
  change); its false-positive and detection rates are simulated too;
- **frozen baseline**: detection_study's trial (a baseline calibrated over K boots, judged
  by gate.decision.judge_depth on one fresh boot, confirmed on a fresh boot).

    python lab/studies/ab_study.py                       # 1,000 trials per cell
    python lab/studies/ab_study.py --trials 200 --boot-cv 0.01
    python lab/studies/ab_study.py --history-prior --trials 20000   # issue 38's table

With ``--history-prior`` it prints issue 38's table instead: at pair spreads of 3% and 5% (the
boot-to-boot noise set so that one pair's pooled change has that spread, within-boot 3%), the
verdict with the runner's history as a prior for the pair spread (gate.ab.prior.estimate_with_prior)
and without it (the verdict as it was), with the prior right and wrong by a factor of 2 either
way: red over all looks, red at the first look (3 pairs), within 6 and within 12 pairs, each
with its Monte-Carlo standard error.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from detection_study import (
    Boot,
    Outcome,
    PointShape,
    Scenario,
    point_shapes,
    trial,
)
from scipy import stats

from pytest_specperf.gate.ab.estimate import AbSettings, BootPoint, Pair, estimate, pooled_change
from pytest_specperf.gate.ab.prior import PRIOR_DATA_RATIO, PairPrior, estimate_with_prior
from pytest_specperf.gate.ab.prior import PRIOR_DOF as PRIOR_DOF_SHOWN
from pytest_specperf.gate.ab.undecided import pairs_needed
from pytest_specperf.gate.ab.verdict import outcome_of
from pytest_specperf.gate.decision import GateSettings

CONCURRENCY = (1, 4, 16)


def scenario(boot_cv: float, point_cv: float) -> Scenario:
    return Scenario(
        f"boot {boot_cv:.0%}",
        f"within-boot {point_cv:.0%}, boot-to-boot {boot_cv:.0%}",
        boot_cv,
        point_cv,
        0.01,
        CONCURRENCY,
    )


def measure_boot(
    boot: Boot, shapes: dict[int, PointShape], repeats: int, slowdown: float
) -> dict[int, BootPoint]:
    """Every point R times, interleaved (C=1, 4, 16, C=1, ...), as one boot does."""
    values: dict[int, list[float]] = {c: [] for c in shapes}
    for _ in range(repeats):
        for c, shape in shapes.items():
            values[c].append(boot.sample(shape, slowdown)[0])
    return {c: BootPoint(c, v, accept_length=2.5) for c, v in values.items()}


class PairSource:
    """One trial's pairs, drawn on demand and kept, so both designs can see the same ones."""

    def __init__(
        self,
        sc: Scenario,
        shapes: dict[int, PointShape],
        repeats: int,
        slowdown: float,
        seed: str,
    ) -> None:
        self.sc, self.shapes, self.repeats, self.slowdown, self.seed = (
            sc,
            shapes,
            repeats,
            slowdown,
            seed,
        )
        self.changes: list[float] = []
        self.pairs: list[Pair] = []

    def first(self, n: int) -> list[float]:
        while len(self.changes) < n:
            i = len(self.changes)
            base = Boot(self.sc, f"{self.seed}:base:{i}")
            head = Boot(self.sc, f"{self.seed}:head:{i}")
            pair = Pair(
                base=measure_boot(base, self.shapes, self.repeats, 0.0),
                head=measure_boot(head, self.shapes, self.repeats, self.slowdown),
            )
            change = pooled_change(pair)
            assert change is not None
            self.changes.append(change.total)
            self.pairs.append(pair)
        return self.changes[:n]


@dataclass
class SequentialOutcome:
    outcome: str
    pairs: int


def sequential(
    source: PairSource, settings: AbSettings, prior: PairPrior | None = None
) -> SequentialOutcome:
    for n in range(settings.first_look, settings.max_pairs + 1):
        values = source.first(n)
        if prior is None:
            found = estimate(values, settings)
        else:
            found, _ = estimate_with_prior(source.pairs[:n], values, settings, prior)
        verdict = outcome_of(found, settings)
        if verdict != "continue":
            return SequentialOutcome(verdict, n)
    raise AssertionError("the last look always decides")


def boot_cv_for(pair_spread: float, point_cv: float, repeats: int) -> float:
    """The boot-to-boot noise at which one pair's pooled change spreads by ``pair_spread``:
    its variance is 2 boot^2 + 2 point^2 / (R x points) (every sample its own drift)."""
    within = 2 * point_cv**2 / (repeats * len(CONCURRENCY))
    if pair_spread**2 <= within:
        raise SystemExit(f"a pair spread of {pair_spread:.1%} is below the within-boot part")
    return math.sqrt((pair_spread**2 - within) / 2)


def share(hits: int, trials: int) -> str:
    """A share with its Monte-Carlo standard error."""
    p = hits / trials
    return f"{p:.2%} +- {math.sqrt(p * (1 - p) / trials):.2%}"


def prior_table(args: argparse.Namespace) -> None:
    """Issue 38's figures: the verdict with and without the runner's history as a prior."""
    settings = AbSettings(alpha=args.alpha, max_pairs=12, first_look=3)
    shapes = point_shapes(CONCURRENCY, 3, args.max_new_tokens)
    print(
        f"A/B with the runner's history as a prior for the pair spread: alpha {settings.alpha:.0%} "
        f"per side, beta {settings.beta:.0%}, min effect {settings.min_effect:.0%}, max pairs "
        f"{settings.max_pairs}; within-boot {args.point_cv:.0%}, R = {args.repeats}, points "
        f"C={','.join(map(str, CONCURRENCY))}; prior on {PRIOR_DOF_SHOWN} degrees of freedom "
        f"(at most {PRIOR_DATA_RATIO}x the boots' at a look); "
        f"{args.trials} trials per cell (figures +- their Monte-Carlo standard error)"
    )
    print(
        "| pair spread (measured) | prior | true change | red (all looks) | red at 3 pairs "
        "| red within 6 | red within 12 | no regression | undecided | mean pairs |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spread in args.pair_spread:
        boot_cv = boot_cv_for(spread, args.point_cv, args.repeats)
        sc = scenario(boot_cv, args.point_cv)
        null = [
            PairSource(sc, shapes, args.repeats, 0.0, f"{args.seed}:spread:{spread}:{i}")
            for i in range(400)
        ]
        measured = statistics.fmean(statistics.variance(s.first(6)) for s in null) ** 0.5
        cells: list[tuple[str, float | None, float]] = [
            ("none", None, 0.0),
            ("none", None, 0.10),
            ("right", 1.0, 0.0),
            ("right", 1.0, 0.05),
            ("right", 1.0, 0.10),
            ("2x too small", 0.5, 0.0),
            ("2x too large", 2.0, 0.0),
        ]
        for label, factor, effect in cells:
            started = time.monotonic()
            prior = (
                None
                if factor is None
                else PairPrior(spread * factor, PRIOR_DOF_SHOWN, f"study, {label}")
            )
            runs = [
                sequential(
                    PairSource(
                        sc,
                        shapes,
                        args.repeats,
                        effect,
                        f"{args.seed}:{spread}:{label}:{effect}:{i}",
                    ),
                    settings,
                    prior,
                )
                for i in range(args.trials)
            ]
            red = [r for r in runs if r.outcome == "regression"]
            n = len(runs)
            print(
                f"| {spread:.0%} ({measured:.1%}) | {label} | {effect:.0%} | "
                f"{share(len(red), n)} | {share(sum(r.pairs <= 3 for r in red), n)} | "
                f"{share(sum(r.pairs <= 6 for r in red), n)} | "
                f"{share(sum(r.pairs <= 12 for r in red), n)} | "
                f"{share(sum(r.outcome == 'no-regression' for r in runs), n)} | "
                f"{share(sum(r.outcome == 'undecided' for r in runs), n)} | "
                f"{statistics.fmean(r.pairs for r in runs):.1f} |"
                f"  ({time.monotonic() - started:.0f} s)",
                flush=True,
            )


def fixed_red(source: PairSource, pairs: int, alpha: float) -> bool:
    """One-sided paired t-test at ``pairs`` pairs: red when head is worse at level alpha."""
    values = source.first(pairs)
    se = statistics.stdev(values) / math.sqrt(pairs)
    return statistics.fmean(values) / se < -float(stats.t.isf(alpha, pairs - 1))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--boot-cv", type=float, nargs="+", default=[0.01, 0.05])
    parser.add_argument("--point-cv", type=float, default=0.03)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--effects", type=float, nargs="+", default=[0.0, 0.05, 0.10])
    parser.add_argument("--max-pairs", type=int, nargs="+", default=[12])
    parser.add_argument("--alpha", type=float, default=AbSettings().alpha)
    parser.add_argument("--first-look", type=int, default=AbSettings().first_look)
    parser.add_argument("--spending", choices=("pocock", "obrien-fleming"), default="pocock")
    parser.add_argument("--baseline-boots", type=int, default=5)
    parser.add_argument("--frozen-trials", type=int, default=None, help="default: --trials")
    parser.add_argument("--max-new-tokens", type=int, default=1000)
    parser.add_argument("--seed", default="ab-study")
    parser.add_argument(
        "--history-prior", action="store_true", help="issue 38's table (see the docstring)"
    )
    parser.add_argument("--pair-spread", type=float, nargs="+", default=[0.03, 0.05])
    args = parser.parse_args(argv)
    if args.history_prior:
        prior_table(args)
        return
    gate = GateSettings()
    print(
        f"A/B: alpha {args.alpha:.1%} per side, beta {AbSettings().beta:.0%}, "
        f"min effect {AbSettings().min_effect:.0%}, {args.spending} spending, looks after "
        f"every pair from pair {args.first_look}; R = {args.repeats}, "
        f"points C={','.join(map(str, CONCURRENCY))}; "
        f"frozen baseline: {args.baseline_boots} calibration boots x 3 repeats, gate alpha "
        f"{gate.alpha:.0%}; {args.trials} trials per cell"
    )
    print(
        "| boot-to-boot | max pairs | true change | A/B red | A/B no regression | A/B undecided "
        "| A/B mean pairs | fixed pairs | fixed red | mean / fixed | frozen baseline red "
        "| frozen boots |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    frozen_cache: dict[tuple[float, float], list[Outcome]] = {}
    frozen_trials = args.frozen_trials if args.frozen_trials is not None else args.trials
    for boot_cv in args.boot_cv:
        sc = scenario(boot_cv, args.point_cv)
        shapes = point_shapes(CONCURRENCY, 3, args.max_new_tokens)
        for max_pairs in args.max_pairs:
            settings = AbSettings(
                alpha=args.alpha,
                max_pairs=max_pairs,
                spending=args.spending,
                first_look=args.first_look,
            )
            null = [
                PairSource(sc, shapes, args.repeats, 0.0, f"{args.seed}:sd:{boot_cv}:{i}")
                for i in range(200)
            ]
            sd = statistics.fmean(statistics.stdev(s.first(8)) ** 2 for s in null) ** 0.5
            n_fixed = pairs_needed(sd, settings)
            for effect in args.effects:
                started = time.monotonic()
                sources = [
                    PairSource(
                        sc,
                        shapes,
                        args.repeats,
                        effect,
                        f"{args.seed}:{boot_cv}:{max_pairs}:{effect}:{i}",
                    )
                    for i in range(args.trials)
                ]
                runs = [sequential(s, settings) for s in sources]
                red = sum(r.outcome == "regression" for r in runs) / len(runs)
                same = sum(r.outcome == "no-regression" for r in runs) / len(runs)
                undecided = sum(r.outcome == "undecided" for r in runs) / len(runs)
                mean_pairs = statistics.fmean(r.pairs for r in runs)
                fixed = sum(fixed_red(s, n_fixed, settings.alpha) for s in sources) / len(sources)
                key = (boot_cv, effect)
                if key not in frozen_cache:
                    frozen_cache[key] = [
                        trial(
                            sc,
                            shapes,
                            boots=args.baseline_boots,
                            baseline_repeats=3,
                            repeats=args.repeats,
                            slowdown=effect,
                            settings=gate,
                            confirm="fresh-boot",
                            seed=f"{args.seed}:frozen:{boot_cv}:{effect}:{i}",
                        )
                        for i in range(frozen_trials)
                    ]
                frozen = frozen_cache[key]
                frozen_red = "-"
                if frozen:
                    red_share = sum(o.gate_red for o in frozen) / len(frozen)
                    boots = 1 + statistics.fmean(o.confirmations for o in frozen)
                    frozen_red = f"{red_share:.1%} | {boots:.2f}"
                print(
                    f"| {boot_cv:.0%} | {max_pairs} | {effect:.0%} | {red:.1%} | {same:.1%} | "
                    f"{undecided:.1%} | {mean_pairs:.1f} | {n_fixed} | {fixed:.1%} | "
                    f"{mean_pairs / n_fixed:.2f} | {frozen_red} |"
                    f"  ({time.monotonic() - started:.0f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
