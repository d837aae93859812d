"""A gate that judged nothing is not green: which depths got no throughput verdict, and why.

A depth whose throughput tests ran but made no verdict (no baseline, a baseline of another
workload, no figures for the measured concurrencies, every point skipped) passed nothing:
the run fails with one line saying why and what to run, unless the user said the run is
exploratory (--specperf-allow-no-baseline: it passes, and one line says nothing was gated) or
a recording. Pure functions; the plugin decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pytest_specperf.gate.baselines import Baseline
from pytest_specperf.gate.floors import backend_mismatch, workload_mismatch
from pytest_specperf.results.schema import DepthRun

# The outcomes that are a judgement of the figures (the others judged nothing).
JUDGED_OUTCOMES = frozenset({"pass", "regression", "improvement"})
_THROUGHPUT_TEST = re.compile(r"::test_throughput_(?:floor|depth)\[steps(\d+)(?:-|\])")


def throughput_test_depth(nodeid: str) -> int | None:
    """The depth of a shipped throughput test's node id, None for any other test."""
    found = _THROUGHPUT_TEST.search(nodeid)
    return int(found.group(1)) if found else None


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


def no_verdict_line(reasons: Mapping[int, str], advice: str, allow_flag: str) -> str:
    """One line: which depths judged nothing, why, what to run (``advice``: the commands, each
    after a few words), or how to say the run is exploratory."""
    depths = ",".join(map(str, sorted(reasons)))
    why = "; ".join(f"steps={depth}: {reasons[depth]}" for depth in sorted(reasons))
    return (
        f"specperf: no throughput verdict for steps={depths}, so nothing was gated ({why}); "
        f"{advice}; or, for an exploratory run, add {allow_flag}"
    )


def exploratory_line(reasons: Mapping[int, str], allow_flag: str, run_profile: str | None) -> str:
    """One line for an exploratory run that judged nothing: not a failure, but said, so a
    green run of skips is not read as a gate passed (``run_profile``: the run profile that
    turned ``allow_flag`` on, None when it was given)."""
    where = f", on in the {run_profile} run profile" if run_profile else ""
    why = "; ".join(f"steps={depth}: {reasons[depth]}" for depth in sorted(reasons))
    return (
        f"specperf: no verdict: an exploratory run ({allow_flag}{where}): {why}; "
        "nothing was gated (pytest -rs lists the skips)"
    )
