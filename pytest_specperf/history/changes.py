"""Change points in the nightly series, and what each one changed.

Per series (history/series.py) the nights' medians are taken in log space and scaled by
the noise of one night's median: the larger of what the nights' own samples say (their
spread over the square root of their count) and what the series says (the robust spread of
night-to-night differences, which also holds the boot-to-boot noise one run's samples cannot
show). ruptures' PELT search for mean shifts (cost ``l2``, run as KernelCPD with the linear
kernel) proposes change points at a penalty of ``penalty`` x log(nights); each proposal then
stands only if the nights between it and its neighbours differ by a Welch t-test at
``alpha`` and by at least ``min_effect``.
How the settings were chosen: docs/explanation/change-points.md.

A change point is named by the first night after it. Its attribution splits the change of
log tok/s into its two factors (tok/s = accept length x verify steps/s): "acceptance" when
the accept length moved more than the verify-step rate, else "step time".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_specperf.history.series import Night, Series, SeriesKey
from pytest_specperf.results.formats import change_interval, ratio_of, relative_change

# A night's figures for the two halves of a throughput change.
_MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class DetectionSettings:
    penalty: float = 3.0  # x log(n), in units of one night's noise squared
    min_size: int = 2  # nights on each side of a change point, at least
    alpha: float = 0.05  # the Welch test each proposed change point must pass
    min_effect: float = 0.02  # smallest relative step reported


@dataclass(frozen=True)
class PositionDrop:
    position: int  # 1: the first draft token
    before: float
    after: float


@dataclass(frozen=True)
class ChangePoint:
    key: SeriesKey
    index: int  # the first night after the change, in the series
    night: Night
    before: float  # median of the metric over the nights before (to the previous change)
    after: float
    step: float  # after / before - 1
    step_low: float
    step_high: float
    p_value: float
    # "acceptance" | "step time" | None (no accept length: the control, or not recorded)
    attribution: str | None = None
    acceptance_share: float | None = None  # share of the log change the accept length made
    position_drop: PositionDrop | None = None

    @property
    def summary(self) -> str:
        cause = f", {self.attribution}" if self.attribution else ""
        version = f" sglang {self.night.sglang_version}" if self.night.sglang_version else ""
        return (
            f"{self.key}: {step_text(self.step, self.step_low, self.step_high)} "
            f"from {self.night.date} ({self.night.label}{version}){cause}"
        )


def step_text(step: float, low: float, high: float) -> str:
    """A change point's step and its interval (fractions, after / before - 1) as every change
    reads: ``-4.5% [-5.4%, -3.7%]``."""
    return f"{relative_change(ratio_of(step))} {change_interval(ratio_of(low), ratio_of(high))}"


def night_noise(series: Series) -> float:
    """The standard deviation of one night's log median (see the module's docstring)."""
    logs = np.log(np.asarray(series.values, dtype=float))
    from_samples = [
        float(np.std(np.log(s), ddof=1)) / math.sqrt(len(s))
        for s in series.samples
        if len(s) >= 2 and min(s) > 0
    ]
    within = float(np.median(from_samples)) if from_samples else 0.0
    between = 0.0
    if len(logs) >= 4:
        diffs = np.diff(logs)
        between = _MAD_TO_SD * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2)
    # A floor: a perfectly quiet series (a simulator) would otherwise make any step infinite.
    return max(within, between, 1e-3)


def _segments(breaks: Sequence[int], n: int) -> list[tuple[int, int]]:
    edges = [0, *breaks, n]
    return [(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]


def _welch(before: np.ndarray, after: np.ndarray) -> tuple[float, float, float, float]:
    """Difference of means (after - before), its 95% interval, and the two-sided p."""
    from scipy import stats

    diff = float(after.mean() - before.mean())
    var_b = float(before.var(ddof=1)) / len(before) if len(before) > 1 else 0.0
    var_a = float(after.var(ddof=1)) / len(after) if len(after) > 1 else 0.0
    se = math.sqrt(var_b + var_a)
    if se == 0.0:
        return diff, diff, diff, 0.0 if diff != 0.0 else 1.0
    dof_num = (var_b + var_a) ** 2
    dof_den = sum(
        v**2 / (len(x) - 1) for v, x in ((var_b, before), (var_a, after)) if len(x) > 1 and v > 0
    )
    dof = dof_num / dof_den if dof_den > 0 else 1.0
    half = float(stats.t.ppf(0.975, dof)) * se
    p_value = float(2 * stats.t.sf(abs(diff) / se, dof))
    return diff, diff - half, diff + half, p_value


def _log_step(values: Sequence[float | None], lo: int, mid: int, hi: int) -> float | None:
    before = [math.log(v) for v in values[lo:mid] if v]
    after = [math.log(v) for v in values[mid:hi] if v]
    if not before or not after:
        return None
    return float(np.median(after) - np.median(before))


def _position_drop(series: Series, lo: int, mid: int, hi: int) -> PositionDrop | None:
    def mean_rates(rows: list[list[float]]) -> list[float]:
        rows = [r for r in rows if r]
        if not rows:
            return []
        width = min(len(r) for r in rows)
        return [float(np.mean([r[i] for r in rows])) for i in range(width)]

    before = mean_rates(series.position_accept[lo:mid])
    after = mean_rates(series.position_accept[mid:hi])
    pairs = list(zip(before, after, strict=False))
    if not pairs:
        return None
    position = min(range(len(pairs)), key=lambda i: pairs[i][1] - pairs[i][0])
    return PositionDrop(position + 1, pairs[position][0], pairs[position][1])


def _attribute(
    series: Series, lo: int, mid: int, hi: int
) -> tuple[str | None, float | None, PositionDrop | None]:
    accept = _log_step(series.accept_length, lo, mid, hi)
    steps = _log_step(series.verify_steps_s, lo, mid, hi)
    if accept is None or steps is None:
        # Without speculation (the control) tok/s is the step rate: all of it is step time.
        known = steps is not None or series.key.depth == 0
        return ("step time" if known else None), None, None
    total = abs(accept) + abs(steps)
    share = abs(accept) / total if total > 0 else 0.0
    cause = "acceptance" if abs(accept) > abs(steps) else "step time"
    return cause, share, _position_drop(series, lo, mid, hi)


def detect(series: Series, settings: DetectionSettings | None = None) -> list[ChangePoint]:
    """The change points of one series, oldest first."""
    settings = settings or DetectionSettings()
    n = len(series.values)
    if n < 2 * settings.min_size:
        return []
    logs = np.log(np.asarray(series.values, dtype=float))
    scaled = ((logs - np.median(logs)) / night_noise(series)).reshape(-1, 1)
    import ruptures  # imported here: with scipy it was most of the `specperf` command's start

    # KernelCPD with the linear kernel is PELT over the l2 cost, the same search as
    # ruptures.Pelt(model="l2") with the same breakpoints, in C: 3 ms instead of 7 s for a
    # series of 1,000 nights (the history site searches every series of the store).
    algorithm = ruptures.KernelCPD(kernel="linear", min_size=settings.min_size, jump=1)
    algorithm.fit(scaled)
    proposed = [int(b) for b in algorithm.predict(pen=settings.penalty * math.log(n))][:-1]
    found: list[ChangePoint] = []
    for index, (lo, _) in enumerate(segments := _segments(proposed, n)):
        if index == 0:
            continue
        mid, hi = lo, segments[index][1]
        start = segments[index - 1][0]
        diff, low, high, p_value = _welch(logs[start:mid], logs[mid:hi])
        step = math.expm1(diff)
        if p_value >= settings.alpha or abs(step) < settings.min_effect:
            continue
        attribution, share, drop = _attribute(series, start, mid, hi)
        found.append(
            ChangePoint(
                key=series.key,
                index=mid,
                night=series.nights[mid],
                before=float(np.median(series.values[start:mid])),
                after=float(np.median(series.values[mid:hi])),
                step=step,
                step_low=math.expm1(low),
                step_high=math.expm1(high),
                p_value=p_value,
                attribution=attribution,
                acceptance_share=share,
                position_drop=drop,
            )
        )
    return found


def detect_all(
    all_series: Sequence[Series], settings: DetectionSettings | None = None
) -> list[ChangePoint]:
    return [change for series in all_series for change in detect(series, settings)]


def new_in_last_night(
    all_series: Sequence[Series], settings: DetectionSettings | None = None
) -> list[ChangePoint]:
    """Change points the series show with their last night and did not show without it."""
    fresh: list[ChangePoint] = []
    latest = max((s.nights[-1].seq for s in all_series if s.nights), default=None)
    for series in all_series:
        # A series the last run did not measure has nothing new.
        if len(series.nights) < 2 or series.nights[-1].seq != latest:
            continue
        now = detect(series, settings)
        before = Series(
            series.key,
            series.nights[:-1],
            series.values[:-1],
            series.samples[:-1],
            series.accept_length[:-1],
            series.verify_steps_s[:-1],
            series.position_accept[:-1],
        )
        seen = {c.night.seq for c in detect(before, settings)}
        fresh.extend(c for c in now if c.night.seq not in seen)
    return fresh
