"""How much a figure moves when nothing changed: its noise within and between boots.

Estimated from a calibration's samples grouped by boot (``estimate_noise``), kept in the
baseline (``MetricNoise``), and read back by the decision as the noise its test assumes
(``noise_for``), with the boot-to-boot part raised where too few boots could estimate it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from pytest_specperf.results.stats import chi2_quantile, log_values, variance

NoiseSource = Literal["calibrated", "recorded repeats", "published"]

# Calibration across fewer boots than this cannot estimate the noise between boots: two boots
# can agree by chance while fresh boots move far more (issue 19). Below this many boots the
# estimate is raised to at least PRIOR_BOOT_CV, a real server's boot-to-boot noise, and treated
# as known (docs/explanation/gate.md, "The detection study").
MIN_BOOTS_FOR_BOOT_NOISE = 3
PRIOR_BOOT_CV = 0.05
# From 3 boots to fewer than MIN_BOOTS_TO_TRUST_ESTIMATE, the gate takes the boot-to-boot
# noise at the upper end of what the boots are consistent with: the one-sided
# BOOT_NOISE_CONFIDENCE upper bound of the variance of the boot means (chi-square on boots - 1
# degrees of freedom) less what the within-boot noise explains, because three boots can agree
# by chance and a fresh boot then go red with no change. From MIN_BOOTS_TO_TRUST_ESTIMATE
# boots the estimate stands (docs/explanation/gate.md has the measured cost of each rule).
BOOT_NOISE_CONFIDENCE = 0.6
MIN_BOOTS_TO_TRUST_ESTIMATE = 5


class MetricNoise(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How much one figure of one point moves when nothing changed.

    The CVs are standard deviations of log values (a CV for noise of a few percent):
    ``within_boot_cv`` of one sample around its boot's mean, ``boot_to_boot_cv`` of a boot's
    mean between boots (None: only one boot was seen, so it is not known).
    """

    source: NoiseSource
    within_boot_cv: float | None = None
    boot_to_boot_cv: float | None = None
    samples: int = 0
    boots: int = 1
    # Calibrated across machines (``specperf baseline merge``): each group of samples is one
    # machine's run, so ``boot_to_boot_cv`` is the spread between machines (each a fresh boot),
    # which is what a nightly on whichever runner the pool gives differs by.
    machines: int = 1


def estimate_noise(boots: Sequence[Sequence[float]], source: NoiseSource) -> MetricNoise:
    """Noise of one figure from its samples grouped by boot (one group: one boot).

    Within-boot: the pooled variance of log values around each boot's mean. Boot-to-boot:
    the variance of the boot means less what the within-boot noise explains (the usual
    one-way random-effects estimate), floored at zero.
    """
    groups = [log_values(group) for group in boots if group]
    total = sum(len(group) for group in groups)
    dof = sum(len(group) - 1 for group in groups)
    within_var: float | None = None
    if dof > 0:
        squares = sum(sum((x - statistics.fmean(g)) ** 2 for x in g) for g in groups)
        within_var = squares / dof
    between: float | None = None
    if len(groups) >= 2:
        means = [statistics.fmean(group) for group in groups]
        explained = (within_var or 0.0) * statistics.fmean(1 / len(g) for g in groups)
        between = math.sqrt(max(variance(means) - explained, 0.0))
    return MetricNoise(
        source=source,
        within_boot_cv=math.sqrt(within_var) if within_var is not None else None,
        boot_to_boot_cv=between,
        samples=total,
        boots=len(groups),
    )


@dataclass(frozen=True)
class Noise:
    within: float
    between: float | None
    dof: float
    description: str
    # How the spread between boots (or machines) was taken, without its figures, so that the
    # same rule on several metrics reads once: "between machines taken as at least 5% (...)".
    rule: str = ""


def noise_for(noise: MetricNoise | None) -> Noise | None:
    """The noise the statistical test assumes, as known: only calibrated noise qualifies.

    Repeats recorded in one boot say how a point moves within that boot, from a handful of
    degrees of freedom: a test built on them either cries wolf (the next boot differs by more)
    or, with a Student t on 2-4 degrees of freedom at a Bonferroni level, lets a 40% drop
    through. Such a baseline keeps its explicit tolerance, applied to the geometric mean of the
    current samples; ``--specperf-calibrate`` gives it the noise the test needs.
    """
    if noise is None or noise.source != "calibrated" or noise.within_boot_cv is None:
        return None
    between = noise.boot_to_boot_cv
    boots = noise.boots
    across_machines = noise.machines > 1
    groups, spread = (
        ("machines", "between machines") if across_machines else ("boots", "boot-to-boot")
    )
    over = f"{noise.machines} machines" if across_machines else f"{boots} boot(s)"
    across = f" across {noise.machines} machines" if across_machines else ""
    description = (
        f"calibrated{across} ({noise.samples} samples over {over}: within-boot "
        f"{noise.within_boot_cv:.1%}"
    )
    machine = (
        f"; {boots} boots on one machine: how machines differ is not in it"
        if boots > 1 and not across_machines
        else ""
    )
    if between is not None and boots < MIN_BOOTS_FOR_BOOT_NOISE:
        taken = (
            f"taken as at least {PRIOR_BOOT_CV:.0%} (fewer than {MIN_BOOTS_FOR_BOOT_NOISE} "
            f"{groups} cannot estimate it)"
        )
        rule = f"{spread} {taken}"
        description += f", {spread} {between:.1%} from {boots} {groups}, {taken})"
        between = max(between, PRIOR_BOOT_CV)
    elif between is not None and boots >= MIN_BOOTS_TO_TRUST_ESTIMATE:
        rule = f"{spread} as measured on {boots} {groups}"
        description += f", {spread} {between:.1%} from {boots} {groups})"
    elif between is not None:
        bound = boot_noise_upper_bound(
            between, noise.within_boot_cv, boots=boots, per_boot=noise.samples / boots
        )
        rule = f"{spread} taken at its {BOOT_NOISE_CONFIDENCE:.0%} upper bound ({boots} {groups})"
        description += (
            f", {spread} {between:.1%} from {boots} {groups}, taken as {bound:.1%}: "
            f"its {BOOT_NOISE_CONFIDENCE:.0%} upper bound)"
        )
        between = bound
    else:
        rule = ""
        description += ")"
    return Noise(
        within=noise.within_boot_cv,
        between=between,
        dof=math.inf,
        description=description + machine,
        rule=rule,
    )


def boot_noise_upper_bound(between: float, within: float, *, boots: int, per_boot: float) -> float:
    """The boot-to-boot CV at the upper BOOT_NOISE_CONFIDENCE bound of what ``boots`` boot
    means allow. The recorded estimate is floored at zero, which hides how far below zero the
    boot means' variance fell; taking it as just zero is the cautious reading."""
    explained = within**2 / max(per_boot, 1.0)
    means_variance = between**2 + explained
    dof = boots - 1
    upper = dof * means_variance / chi2_quantile(1 - BOOT_NOISE_CONFIDENCE, dof)
    return math.sqrt(max(upper - explained, 0.0))
