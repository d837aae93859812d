"""How long a run will take, said before anything boots; and what fits a time budget.

A run's time is its boots, each sweep's warm-up and its samples:

    boots x boot time  +  sweeps x warm-up  +  samples x sample time

with sweeps = depths x sweeps per depth: one per boot (--specperf-calibrate-boots of them when
calibrating), one with --specperf-url (no boot); in A/B mode up to --specperf-ab-max-pairs
pairs of sweeps, base and head, each side a boot unless reached by URL. The A/B estimate is
for the most pairs; a verdict may come at the first look, 3 pairs, and the line says how long
that takes. Samples = sweeps x points x repeats. A boot's time is --specperf-boot-estimate,
else the profile's ``boot_estimate_s`` (measured with the real server; not for the
simulator), else a default per backend; where the profile has a ``later_boot_estimate_s``, the
run's boots after the first take that (the first compiled and cached the kernels they
reuse: an A/B's or a depth sweep's boots are mostly later ones). A sample lasts at least
--specperf-min-point-seconds; with a baseline of the same key its length is the baseline's
rate applied to the sample's requests (and its few short warm-up requests); a warm-up round
measures every point once as a sample does, --specperf-warmup-rounds times (the most it may).
Without a baseline the speed is unknown: the estimate then counts samples and warm-up rounds at
their minimum length, and says it is a lower bound.

A borderline verdict is re-measured before it stands (--specperf-confirm): in a fresh boot by
default, with its warm-up, then --specperf-repeats samples of the point. That is not in the
total (most runs have none), but the line says what it adds at most, every point of every
depth judged borderline, so that a nightly's time limit can allow for it.

An open-loop point (a trace's replay, a --specperf-request-rate point) lasts at least its
arrivals' span, the trace's last timestamp over --specperf-trace-speed or the rate point's
requests at its rate, --specperf-repeats samples of it a depth (a side of each A/B pair: not
once per calibration boot); the tail after the last send is not counted.

Not counted: the self-test, --specperf-refine's points, pytest's own start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pytest_specperf.config.settings import Settings
from pytest_specperf.errors import BaselineError, UsageError
from pytest_specperf.gate.baselines import Baseline, baseline_path, load_baseline
from pytest_specperf.run.ab.budget import FIRST_LOOK, ab_shape
from pytest_specperf.run.open_loop import send_schedule
from pytest_specperf.run.shape import RunShape, depth_shape
from pytest_specperf.server.hardware import gpu_key, local_gpu_names, sim_key, slug

# Seconds per boot when neither the option nor the profile says (a boot includes the server's
# stop and the model factory): a real server boots in minutes (docs/explanation/run-time.md),
# the simulator in seconds.
DEFAULT_BOOT_S = {"sglang": 120.0, "sim": 5.0}
# The suite's own time per sample besides the closed loop: client start, results.json rewrite.
SAMPLE_OVERHEAD_S = 0.5


@dataclass(frozen=True)
class RunEstimate:
    boots: int
    boot_s: float
    boot_from: str
    sweeps: int  # each with its warm-up: one per boot, or per visit of a server given by URL
    warmup_s: float  # per sweep
    samples: int
    measure_s: float  # every sample together
    speed_from: str  # the baseline(s) the sample lengths come from, or why none
    lower_bound: bool
    first_look_s: float | None = None  # A/B mode: the run if every depth decides at 3 pairs
    # What re-measuring every point of every depth as borderline adds (None: no verdict to
    # confirm: no baseline, --specperf-confirm=off or A/B mode).
    confirm_s: float | None = None
    # The boots after the run's first (None: each as long as the first).
    later_boot_s: float | None = None

    @property
    def boots_s(self) -> float:
        if self.later_boot_s is None or self.boots == 0:
            return self.boots * self.boot_s
        return self.boot_s + (self.boots - 1) * self.later_boot_s

    @property
    def total_s(self) -> float:
        return self.boots_s + self.sweeps * self.warmup_s + self.measure_s

    def boots_text(self) -> str:
        """``2 boot(s) x 180 s (profile p)``, or with later boots ``6 boot(s), the first 240 s
        and 5 later x 90 s (profile p)``."""
        if self.later_boot_s is None or self.boots < 2:
            return f"{self.boots} boot(s) x {self.boot_s:g} s ({self.boot_from})"
        return (
            f"{self.boots} boot(s), the first {self.boot_s:g} s and {self.boots - 1} later x "
            f"{self.later_boot_s:g} s ({self.boot_from})"
        )

    def line(self) -> str:
        """``estimated run time: 812 s = 2 boots x 180 s (profile) + ...``"""
        bound = "at least " if self.lower_bound else ""
        text = (
            f"estimated run time: {bound}{self.total_s:,.0f} s = {self.boots_text()} + "
            f"{self.sweeps} warm-up(s) x "
            f"{self.warmup_s:,.0f} s + {self.samples} sample(s) in {self.measure_s:,.0f} s "
            f"(speed: {self.speed_from})"
        )
        if self.confirm_s is not None:
            text += f"; a borderline verdict re-measured adds up to {bound}{self.confirm_s:,.0f} s"
        if self.first_look_s is not None:
            text += (
                f"; A/B: that is every pair --specperf-ab-max-pairs allows, a verdict at the "
                f"first look ({FIRST_LOOK} pairs) takes {bound}{self.first_look_s:,.0f} s"
            )
        return text


def run_shape(settings: Settings) -> RunShape:
    """The run's boots and sweeps per depth: A/B mode's pairs, else one depth's boots."""
    if settings.base is not None:
        return ab_shape(settings, settings.base)
    return depth_shape(settings)


def boot_estimate(settings: Settings) -> tuple[float, str]:
    if settings.boot_estimate_s is not None:
        return settings.boot_estimate_s, "--specperf-boot-estimate"
    # The profile's figure is its real server's: the simulator boots in seconds whatever it is.
    if settings.profile.boot_estimate_s is not None and settings.backend != "sim":
        return settings.profile.boot_estimate_s, f"profile {settings.profile.name}"
    return DEFAULT_BOOT_S.get(settings.backend, DEFAULT_BOOT_S["sglang"]), "default"


def later_boot_estimate(settings: Settings) -> float | None:
    """The run's boots after its first, where the profile's figure applies (None: as long as
    the first; --specperf-boot-estimate is every boot's)."""
    if settings.boot_estimate_s is not None or settings.backend == "sim":
        return None
    if settings.profile.boot_estimate_s is None:
        return None
    return settings.profile.later_boot_estimate_s


def expected_hardware(settings: Settings) -> str | None:
    """The hardware key the run's baselines will be under, when it is known before booting."""
    if settings.hardware:
        return slug(settings.hardware)
    if settings.url is not None:
        return None
    if settings.backend == "sim":
        return sim_key({"speedup": settings.sim_speedup})
    names = local_gpu_names()[: settings.profile.tp_size or None]
    return gpu_key(names) if names else None


def _baselines(settings: Settings) -> dict[int, Baseline]:
    hardware = expected_hardware(settings)
    if hardware is None:
        return {}
    found: dict[int, Baseline] = {}
    for depth in settings.depths:
        path = baseline_path(
            settings.baselines_dir, settings.profile.name, hardware, depth, settings.workload.name
        )
        try:
            baseline = load_baseline(path)
        except BaselineError:
            baseline = None
        if baseline is not None:
            found[depth] = baseline
    return found


def _seconds(requests: int, tokens: int, rate: float | None) -> float | None:
    return requests * tokens / rate if rate else None


def estimate(settings: Settings, baselines: dict[int, Baseline] | None = None) -> RunEstimate:
    """The run's time as the settings describe it (``baselines``: by depth; default: read)."""
    if baselines is None:
        baselines = _baselines(settings)
    workload = settings.workload
    shape = run_shape(settings)
    boots = len(settings.depths) * shape.boots_per_depth
    per_depth_sweeps = shape.sweeps_per_depth
    boot_s, boot_from = boot_estimate(settings)
    later = later_boot_estimate(settings)
    later_boot_s = later if later is not None else boot_s
    lower_bound = False
    measure_s = 0.0
    warmup_total = 0.0
    samples = 0
    confirm_s = 0.0
    fresh_boot = settings.confirm == "fresh-boot" and settings.url is None
    for depth in settings.depths:
        baseline = baselines.get(depth)
        round_s = 0.0
        remeasure_s = 0.0
        for level in settings.concurrency:
            point = baseline.point(level) if baseline is not None else None
            agg = point.agg_tok_s if point is not None else None
            per_req = point.per_req_tok_s if point is not None else None
            loop_s = _seconds(workload.requests_for(level), workload.max_new_tokens, agg)
            short_s = _seconds(1, workload.warmup_max_new_tokens, per_req)
            if loop_s is None or short_s is None:
                lower_bound = True
            sample_s = max(workload.min_point_seconds, loop_s or 0.0) + (short_s or 0.0)
            count = settings.repeats * per_depth_sweeps
            samples += count
            measure_s += count * (sample_s + SAMPLE_OVERHEAD_S)
            round_s += max(workload.min_point_seconds, loop_s or 0.0)
            remeasure_s += settings.repeats * (sample_s + SAMPLE_OVERHEAD_S)
        # Open-loop points are measured once a depth's session (on its last boot when
        # calibrating); in A/B mode once a side of each pair.
        open_sweeps = per_depth_sweeps if settings.base is not None else 1
        for load in settings.open_loads:
            count = settings.repeats * open_sweeps
            samples += count
            # The schedules are seeded: the span is the run's own, not an expectation.
            span_s = max(send_schedule(settings, load), default=0.0)
            measure_s += count * (span_s + SAMPLE_OVERHEAD_S)
        warmup_s = round_s * settings.warmup.max_rounds
        if settings.warmup.max_seconds is not None:
            warmup_s = min(warmup_s, settings.warmup.max_seconds + round_s)
        warmup_total += warmup_s * per_depth_sweeps
        if baseline is not None:
            confirm_s += remeasure_s + (later_boot_s + warmup_s if fresh_boot else 0.0)
    speed_from = (
        f"baselines of {len(baselines)} of {len(settings.depths)} depth(s)"
        if baselines
        else "no baseline: samples and warm-up rounds at their minimum length"
    )
    sweeps = len(settings.depths) * per_depth_sweeps
    judged = bool(baselines) and settings.confirm != "off" and settings.base is None
    first_look = run_shape(settings).first_look
    first_look_s = estimate(first_look, baselines).total_s if first_look is not None else None
    return RunEstimate(
        boots=boots,
        boot_s=boot_s,
        boot_from=boot_from,
        sweeps=sweeps,
        warmup_s=warmup_total / sweeps if sweeps else 0.0,
        samples=samples,
        measure_s=measure_s,
        speed_from=speed_from,
        lower_bound=lower_bound,
        first_look_s=first_look_s,
        confirm_s=confirm_s if judged else None,
        later_boot_s=later,
    )


def check_budget(settings: Settings, baselines: dict[int, Baseline] | None = None) -> RunEstimate:
    """The estimate; UsageError (one line, saying what would fit) if it exceeds the budget."""
    if baselines is None:
        baselines = _baselines(settings)
    found = estimate(settings, baselines)
    budget = settings.time_budget_s
    if budget is None or found.total_s <= budget:
        return found
    fits = [f"{change} (~{seconds:,.0f} s)" for change, seconds in _what_fits(settings, baselines)]
    advice = "; would fit: " + ", or ".join(fits) if fits else "; nothing smaller fits either"
    raise UsageError(
        f"--specperf-time-budget: the run is estimated at {found.total_s:,.0f} s, over the "
        f"budget of {budget:g} s ({found.line()}){advice}"
    )


def _what_fits(settings: Settings, baselines: dict[int, Baseline]) -> list[tuple[str, float]]:
    """The largest run that fits the budget along each dimension, one change at a time."""
    budget = settings.time_budget_s
    assert budget is not None
    options: list[tuple[str, float]] = []

    def first_fit(candidates: list[tuple[str, Settings]]) -> None:
        for change, candidate in candidates:
            seconds = estimate(candidate, baselines).total_s
            if seconds <= budget:
                options.append((change, seconds))
                return

    first_fit(
        [
            (f"--specperf-repeats {r}", replace(settings, repeats=r))
            for r in range(settings.repeats - 1, 0, -1)
        ]
    )
    levels = list(settings.concurrency)
    first_fit(
        [
            (
                "--specperf-concurrency " + ",".join(map(str, levels[:n])),
                replace(settings, concurrency=tuple(levels[:n])),
            )
            for n in range(len(levels) - 1, 0, -1)
        ]
    )
    first_fit(list(run_shape(settings).shorter))
    if settings.calibrate:
        first_fit(
            [
                (f"--specperf-calibrate-boots {b}", replace(settings, calibrate_boots=b))
                for b in range(settings.calibrate_boots - 1, 0, -1)
            ]
        )
    if settings.warmup.max_rounds > 1:
        first_fit(
            [
                (
                    f"--specperf-warmup-rounds {n}",
                    replace(settings, warmup=replace(settings.warmup, max_rounds=n)),
                )
                for n in range(settings.warmup.max_rounds - 1, 0, -1)
            ]
        )
    return options
