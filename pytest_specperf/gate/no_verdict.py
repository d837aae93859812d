"""A gate that judged nothing is not green: which depths and points got no throughput
verdict, and why.

A depth whose throughput tests ran but made no verdict (no baseline, a baseline of another
workload, no figures for the measured concurrencies, every point skipped) passed nothing;
nor did a measured point the baseline has no figures for, in a depth whose other points were
judged (its ``no-baseline`` verdict, gate/decision.py). The run fails with one line naming
each and what to run, unless the user said the run is exploratory (--specperf-allow-no-baseline:
it passes, and one line names what was not judged) or a recording. A baseline that cannot
judge a run at all (another depth, profile, workload or backend) is known before it measures:
``baseline_mismatches``. Pure functions; the plugin decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.gate.floors import backend_mismatch, workload_mismatch
from pytest_specperf.results.schema import DepthRun, Verdict

# The outcomes that are a judgement of the figures (the others judged nothing).
JUDGED_OUTCOMES = frozenset({"pass", "regression", "improvement"})


def depths_without_verdict(runs: Sequence[DepthRun], depths: Iterable[int]) -> list[int]:
    """Those of ``depths`` whose run holds no judged throughput verdict."""
    judged = {run.depth for run in runs if any(v.outcome in JUDGED_OUTCOMES for v in run.verdicts)}
    return sorted(set(depths) - judged)


def baseline_mismatches(
    baseline: Baseline,
    *,
    depth: int,
    profile: str,
    workload_key: dict[str, object],
    backend: str | None,
) -> list[str]:
    """Why ``baseline`` cannot judge a run of ``depth``, ``profile``, this workload and
    backend: one phrase each, empty when it can. Each is known before anything is measured."""
    found = []
    if baseline.depth != depth:
        found.append(
            f"it is the baseline of steps={baseline.depth}, this run measures steps={depth}"
        )
    if baseline.profile != profile:
        found.append(f"it is the baseline of profile {baseline.profile}, this run's is {profile}")
    for why in (workload_mismatch(workload_key, baseline), backend_mismatch(backend, baseline)):
        if why is not None:
            found.append(why)
    return found


def points_not_judged(
    runs: Sequence[DepthRun], depths: Iterable[int], named_whole: Iterable[int] = ()
) -> list[Verdict]:
    """The no-baseline verdicts of the points of ``depths`` (measured, never judged), but of
    the depths in ``named_whole`` (those judged nothing at all: named as a depth)."""
    asked, whole = set(depths), set(named_whole)
    return [
        verdict
        for run in sorted(runs, key=lambda run: run.depth)
        if run.depth in asked and run.depth not in whole
        for verdict in run.verdicts
        if verdict.outcome == "no-baseline"
        and (verdict.concurrency is not None or verdict.load is not None)
    ]


def no_verdict_line(
    reasons: Mapping[int, str], advice: str, allow_flag: str, points: Sequence[str] = ()
) -> str:
    """One line: which depths judged nothing and which points were not judged (``points``:
    their verdicts' messages), why, what to run (``advice``: the commands, each after a few
    words), or how to say the run is exploratory."""
    exploratory = f"{advice}; or, for an exploratory run, add {allow_flag}"
    if not points:
        depths = ",".join(map(str, sorted(reasons)))
        why = "; ".join(f"steps={depth}: {reasons[depth]}" for depth in sorted(reasons))
        return (
            f"specperf: no throughput verdict for steps={depths}, so nothing was gated ({why}); "
            f"{exploratory}"
        )
    said = [
        *(
            f"steps={depth}: no throughput verdict, so none of its points was gated "
            f"({reasons[depth]})"
            for depth in sorted(reasons)
        ),
        *points,
    ]
    return f"specperf: not judged, so the run fails: {'; '.join(said)}; {exploratory}"


def exploratory_line(
    reasons: Mapping[int, str],
    allow_flag: str,
    run_profile: str | None,
    points: Sequence[str] = (),
) -> str:
    """One line for an exploratory run that left depths (``reasons``) or points (``points``:
    their verdicts' messages) unjudged: not a failure, but said, so a green run of skips is not
    read as a gate passed (``run_profile``: the run profile that turned ``allow_flag`` on, None
    when it was given)."""
    where = f", on in the {run_profile} run profile" if run_profile else ""
    run = f"an exploratory run ({allow_flag}{where})"
    depths = [f"steps={depth}: {reasons[depth]}" for depth in sorted(reasons)]
    if not points:
        return (
            f"specperf: no verdict: {run}: {'; '.join(depths)}; "
            "nothing was gated (pytest -rs lists the skips)"
        )
    said = [*(f"{depth}, so none of its points was gated" for depth in depths), *points]
    return f"specperf: not judged: {run}: {'; '.join(said)}; every other point was gated"
