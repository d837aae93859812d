"""What a baseline was made of, and whether replacing one with another loses something.

A recording must never silently replace a calibrated baseline (several boots, several samples
per point) with one run's figures, nor one workload's or sweep's figures with another's:
``downgrade_reasons`` names what would be lost, and the recording or promotion that would
lose it is refused unless the user allows it explicitly (pure functions; the callers decide).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_specperf.gate.baselines import THROUGHPUT_METRICS, Baseline
from pytest_specperf.gate.floors import backends_differ


@dataclass(frozen=True)
class Provenance:
    """A baseline's provenance, reduced to what a replacement is compared on."""

    source: str  # "calibrated", "recorded repeats", "published" or "measured"
    boots: int
    samples: int  # the fewest samples of a point (per metric)
    concurrency: tuple[int, ...]
    workload: dict[str, object]

    def describe(self) -> str:
        levels = ",".join(map(str, self.concurrency)) or "-"
        name = self.workload.get("workload", "?")
        tokens = self.workload.get("max_new_tokens", "?")
        samples = "sample" if self.samples == 1 else "samples"
        boots = "boot" if self.boots == 1 else "boots"
        return (
            f"{self.source}, {self.boots} {boots}, {self.samples} {samples} per point, "
            f"workload {name} at {tokens} tokens, C={levels}"
        )


def provenance_of(baseline: Baseline) -> Provenance:
    points = list(baseline.points.values())
    samples = [
        len(point.samples.get(metric, ()))
        for point in points
        for metric in THROUGHPUT_METRICS
        if point.figure(metric) is not None
    ]
    sources = [
        noise.source for point in points for noise in point.noise.values() if noise is not None
    ]
    if baseline.recorded_by == "published":
        source = "published"
    elif "calibrated" in sources:
        source = "calibrated"
    else:
        source = sources[0] if sources else "measured"
    return Provenance(
        source=source,
        boots=max((point.boots for point in points), default=1),
        samples=min(samples, default=0),
        concurrency=tuple(sorted(int(c) for c in baseline.points)),
        workload=dict(baseline.workload),
    )


def workload_changes(old: Baseline, new: Baseline) -> list[str]:
    """The workload fields ``old`` records that ``new`` would change or drop, sorted.

    A field ``old`` does not record is not one it loses: a file written before the field
    existed (the published figures have no ``workload`` nor ``prompt_words``) was gated as
    comparable on the fields it has (``floors.workload_mismatch``), and a recording at those
    fields fills the new one in rather than replacing anything.
    """
    return sorted(
        name
        for name in old.workload
        if name not in new.workload or new.workload[name] != old.workload[name]
    )


def backend_change(old: Baseline, new: Baseline) -> tuple[str, str] | None:
    """(old backend, new backend) when both are known and differ: a simulator's figures in
    place of a GPU's, or the other way round. A file without a backend (older) changes none."""
    before, after = old.backend, new.backend
    if before is None or after is None or not backends_differ(before, after):
        return None
    return before, after


def downgrade_reasons(old: Baseline, new: Baseline) -> list[str]:
    """What replacing ``old`` with ``new`` would lose; empty when nothing."""
    before, after = provenance_of(old), provenance_of(new)
    reasons: list[str] = []
    if before.source == "calibrated" and after.source != "calibrated":
        reasons.append("a calibrated baseline would become an uncalibrated one")
    if after.boots < before.boots:
        reasons.append(f"fewer boots ({after.boots} < {before.boots})")
    if after.samples < before.samples:
        reasons.append(f"fewer samples per point ({after.samples} < {before.samples})")
    changed = workload_changes(old, new)
    if changed:
        reasons.append(f"another workload ({', '.join(changed)} differ)")
    missing = sorted(set(before.concurrency) - set(after.concurrency))
    if missing:
        reasons.append(f"another sweep (C={','.join(map(str, missing))} would be dropped)")
    backends = backend_change(old, new)
    if backends:
        reasons.append(f"another backend ({backends[0]} -> {backends[1]})")
    return reasons


def downgrade_message(path: str, old: Baseline, new: Baseline, reasons: list[str]) -> str:
    """One line: what would be lost, the old and the new provenance."""
    return (
        f"{path} would be downgraded: {'; '.join(reasons)} "
        f"(old: {provenance_of(old).describe()}; new: {provenance_of(new).describe()})"
    )


def losses(old: Baseline, new: Baseline) -> list[str]:
    """What replacing ``old`` with ``new`` would lose, each as a few words after "it would"
    (``drop C=16, 32, 64``, ``lower samples 9 -> 1``); empty when nothing."""
    before, after = provenance_of(old), provenance_of(new)
    lost: list[str] = []
    missing = sorted(set(before.concurrency) - set(after.concurrency))
    if missing:
        lost.append(f"drop C={', '.join(map(str, missing))}")
    if after.samples < before.samples:
        lost.append(f"lower samples per point {before.samples} -> {after.samples}")
    if after.boots < before.boots:
        lost.append(f"lower boots {before.boots} -> {after.boots}")
    if before.source == "calibrated" and after.source != "calibrated":
        lost.append("lose its calibration")
    changed = workload_changes(old, new)
    if changed:
        said = ", ".join(
            f"{name} {old.workload.get(name)} -> {new.workload.get(name)}" for name in changed
        )
        lost.append(f"replace its workload ({said})")
    backends = backend_change(old, new)
    if backends:
        lost.append(f"replace its {backends[0]} figures with {backends[1]} ones")
    return lost


def refusal(path: str, old: Baseline, new: Baseline) -> str | None:
    """``refusing to replace PATH: it would drop C=16, 32, 64 and lower samples per point
    9 -> 1``: one line naming what a recording would lose; None when it loses nothing."""
    lost = losses(old, new)
    if not lost:
        return None
    said = lost[0] if len(lost) == 1 else f"{', '.join(lost[:-1])} and {lost[-1]}"
    return f"refusing to replace {path}: it would {said}"
