"""The A/B's stalled-sample rule (gate/ab_stalls.py): what it leaves out, and what that buys.

Monte Carlo over the simulator's noise model, with ab_study.py's pairs (each boot its own
boot factor, every sample its own within-boot draw; log-normal, so no stall of its own). At
the first look (3 pairs, no history prior), for each pair spread and within-boot noise:

- **no stall**: how many samples the rule leaves out, and how often the verdict differs from
  the one without the rule (both should be about zero: the error figures of ab_study.py hold);
- **one stall**: one sample of one boot at one point cut to ``--stall`` of its value (the
  lent H200 measured 0.58: 1,674 tok/s beside 2,786 and 2,955), the verdict with and
  without the rule, with no change and with a 10% slowdown of the head.

    python lab/studies/ab_stall_rule.py                 # 2,000 trials per cell, about 2 min
    python lab/studies/ab_stall_rule.py --trials 200
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import replace

from ab_study import CONCURRENCY, PairSource, boot_cv_for, scenario, share
from detection_study import point_shapes

from pytest_specperf.gate.ab import look, outcome_of
from pytest_specperf.gate.ab_pairs import AbSettings, Pair, estimate, pooled_change

FIRST_LOOK = 3


def stalled(pairs: Sequence[Pair], rng: random.Random, factor: float) -> list[Pair]:
    """The pairs with one sample of one boot at one point cut to ``factor`` of its value."""
    index = rng.randrange(len(pairs))
    side = rng.choice(("base", "head"))
    concurrency = rng.choice(CONCURRENCY)
    out = list(pairs)
    pair = out[index]
    points = dict(getattr(pair, side))
    point = points[concurrency]
    values = list(point.tok_s)
    values[rng.randrange(len(values))] *= factor
    points[concurrency] = replace(point, tok_s=values)
    out[index] = replace(pair, **{side: points})
    return out


def without_rule(pairs: Sequence[Pair], settings: AbSettings) -> str:
    changes = [c.total for c in (pooled_change(p) for p in pairs) if c is not None]
    return outcome_of(estimate(changes, settings), settings)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--pair-spread", type=float, nargs="+", default=[0.03, 0.05])
    parser.add_argument("--point-cv", type=float, nargs="+", default=[0.03, 0.06])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stall", type=float, default=0.58)
    parser.add_argument("--max-new-tokens", type=int, default=1000)
    parser.add_argument("--seed", default="stall-rule")
    args = parser.parse_args(argv)
    settings = AbSettings(max_pairs=12, first_look=FIRST_LOOK)
    shapes = point_shapes(CONCURRENCY, 3, args.max_new_tokens)
    print(
        f"first look ({FIRST_LOOK} pairs, no prior), alpha {settings.alpha:.0%}, min effect "
        f"{settings.min_effect:.0%}; R = {args.repeats}, C={','.join(map(str, CONCURRENCY))}; "
        f"a stall cuts one sample to {args.stall:.2f} of its value; {args.trials} trials per cell"
    )
    print(
        "| pair spread | within-boot | true change | stall | samples left out | verdict differs "
        "| red with rule | red without | no regression with rule | no regression without |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spread in args.pair_spread:
        for point_cv in args.point_cv:
            sc = scenario(boot_cv_for(spread, point_cv, args.repeats), point_cv)
            for effect in (0.0, 0.10):
                for with_stall in (False, True):
                    rng = random.Random(f"{args.seed}:{spread}:{point_cv}:{effect}:{with_stall}")
                    left = differs = red = red_raw = same = same_raw = 0
                    for i in range(args.trials):
                        source = PairSource(
                            sc,
                            shapes,
                            args.repeats,
                            effect,
                            f"{args.seed}:{spread}:{point_cv}:{effect}:{i}",
                        )
                        source.first(FIRST_LOOK)
                        pairs = source.pairs[:FIRST_LOOK]
                        if with_stall:
                            pairs = stalled(pairs, rng, args.stall)
                        found = look(3, pairs, settings)
                        raw = without_rule(pairs, settings)
                        left += len(found.left_out)
                        differs += found.outcome != raw
                        red += found.outcome == "regression"
                        red_raw += raw == "regression"
                        same += found.outcome == "no-regression"
                        same_raw += raw == "no-regression"
                    n = args.trials
                    print(
                        f"| {spread:.0%} | {point_cv:.0%} | {effect:.0%} | "
                        f"{'one' if with_stall else 'none'} | {left} in {n} | {share(differs, n)} "
                        f"| {share(red, n)} | {share(red_raw, n)} | {share(same, n)} "
                        f"| {share(same_raw, n)} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
