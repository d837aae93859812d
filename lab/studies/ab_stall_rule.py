"""The A/B's stalled-sample rule (gate/ab/stalls.py): what it leaves out, and what that does.

Monte Carlo over the simulator's noise model, with ab_study.py's pairs (each boot its own
boot factor, every sample its own within-boot draw; log-normal, so no stall of its own). The
A/B runs sequentially as the suite does (looks from pair 3, at most 12 pairs, no history
prior), with the rule and without it, on the same pairs, for each stall pattern:

- **none**: plain noise (the rule should find nothing, so ab_study.py's figures hold);
- **base** / **head**: one sample of one boot of the first pair (a machine's stall, on either
  side) cut to ``--stall`` of its value (the lent H200 measured 0.58: 1,674 tok/s beside
  2,786 and 2,955);
- **head-half**: the first C=16 sample of each head boot cut so with probability 1/2: a
  change that makes head stall (the rule must not hide it).

    python lab/studies/ab_stall_rule.py                 # 1,000 trials per cell
    python lab/studies/ab_stall_rule.py --trials 200 --floor 0.2   # a lower floor, to compare
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ab_study import CONCURRENCY, PairSource, boot_cv_for, scenario, share
from detection_study import point_shapes

from pytest_specperf.gate.ab import stalls as stall_rule
from pytest_specperf.gate.ab.estimate import AbSettings, Pair, estimate, pooled_change
from pytest_specperf.gate.ab.verdict import look, outcome_of

STALL_PATTERNS = ("none", "base", "head", "head-half")
HALF_POINT = 16
MAX_PAIRS = 12


def _cut(pair: Pair, side: str, concurrency: int, sample: int, factor: float) -> Pair:
    points = dict(getattr(pair, side))
    values = list(points[concurrency].tok_s)
    values[sample] *= factor
    points[concurrency] = replace(points[concurrency], tok_s=values)
    return replace(pair, **{side: points})


def with_stalls(pairs: Sequence[Pair], pattern: str, seed: str, factor: float) -> list[Pair]:
    """The pairs with the pattern's stalls (the same ones whatever the look)."""
    out = list(pairs)
    if pattern in ("base", "head") and out:
        rng = random.Random(f"{seed}:one")
        concurrency = rng.choice(CONCURRENCY)
        sample = rng.randrange(len(out[0].base[concurrency].tok_s))
        out[0] = _cut(out[0], pattern, concurrency, sample, factor)
    if pattern == "head-half":
        for index, pair in enumerate(out):
            if random.Random(f"{seed}:half:{index}").random() < 0.5:
                out[index] = _cut(pair, "head", HALF_POINT, 0, factor)
    return out


@dataclass
class Run:
    outcome: str
    pairs: int
    stalls_left_out: int = 0


def sequential(source: PairSource, pattern: str, seed: str, factor: float, rule: bool) -> Run:
    settings = AbSettings(max_pairs=MAX_PAIRS, first_look=3)
    for n in range(settings.first_look, settings.max_pairs + 1):
        source.first(n)
        pairs = with_stalls(source.pairs[:n], pattern, seed, factor)
        if rule:
            found = look(3, pairs, settings)
            outcome, left = found.outcome, len(found.stalls.left_out)
        else:
            changes = [c.total for c in (pooled_change(p) for p in pairs) if c is not None]
            outcome, left = outcome_of(estimate(changes, settings), settings), 0
        if outcome != "continue":
            return Run(outcome, n, left)
    raise AssertionError("the last look always decides")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--pair-spread", type=float, nargs="+", default=[0.03, 0.05])
    parser.add_argument("--point-cv", type=float, nargs="+", default=[0.03, 0.06])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stall", type=float, default=0.58)
    parser.add_argument("--patterns", nargs="+", default=list(STALL_PATTERNS))
    parser.add_argument("--floor", type=float, default=None, help="try another STALL_FLOOR")
    parser.add_argument("--max-new-tokens", type=int, default=1000)
    parser.add_argument("--seed", default="stall-rule")
    args = parser.parse_args(argv)
    if args.floor is not None:
        stall_rule.STALL_FLOOR = args.floor
    shapes = point_shapes(CONCURRENCY, 3, args.max_new_tokens)
    print(
        f"sequential A/B (looks from pair 3, at most {MAX_PAIRS} pairs, no prior), "
        f"R = {args.repeats}, C={','.join(map(str, CONCURRENCY))}; a stall cuts a sample to "
        f"{args.stall:.2f} of its value; stall floor {stall_rule.STALL_FLOOR:g}; "
        f"{args.trials} trials per cell (with the rule | without it)"
    )
    print(
        "| pair spread | within-boot | true change | stalls | left out (trials) | red | "
        "red without | no regression | no regression without | red at 3 pairs | "
        "red at 3 without | mean pairs | mean pairs without |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for spread in args.pair_spread:
        for point_cv in args.point_cv:
            sc = scenario(boot_cv_for(spread, point_cv, args.repeats), point_cv)
            for effect in (0.0, 0.10):
                for pattern in args.patterns:
                    runs: dict[bool, list[Run]] = {True: [], False: []}
                    for i in range(args.trials):
                        seed = f"{args.seed}:{spread}:{point_cv}:{effect}:{i}"
                        source = PairSource(sc, shapes, args.repeats, effect, seed)
                        for rule in (True, False):
                            runs[rule].append(sequential(source, pattern, seed, args.stall, rule))
                    n = args.trials
                    cells = []
                    for what in ("regression", "no-regression"):
                        for rule in (True, False):
                            cells.append(share(sum(r.outcome == what for r in runs[rule]), n))
                    for rule in (True, False):
                        hits = sum(r.outcome == "regression" and r.pairs == 3 for r in runs[rule])
                        cells.append(share(hits, n))
                    for rule in (True, False):
                        cells.append(f"{statistics.fmean(r.pairs for r in runs[rule]):.1f}")
                    left = sum(r.stalls_left_out > 0 for r in runs[True])
                    print(
                        f"| {spread:.0%} | {point_cv:.0%} | {effect:.0%} | {pattern} | {left} | "
                        + " | ".join(cells)
                        + " |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
