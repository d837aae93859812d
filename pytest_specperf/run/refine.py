"""--specperf-refine: after the sweep, the recommendation's switch points measured too."""

from __future__ import annotations

import contextlib

from pytest_specperf.gate.recommend import refine_concurrencies
from pytest_specperf.run.depth_session import DepthSession
from pytest_specperf.run.sampling import ServerDied


def refine(sessions: list[DepthSession]) -> list[str]:
    """--specperf-refine: measure the switch points of the recommendation's boundaries on
    every depth whose server is still up; one line per point measured or not measured."""
    if not sessions:
        return []
    results = sessions[0].store.load()
    measured = {p.concurrency for run in (results.runs if results else []) for p in run.points}
    targets = refine_concurrencies(results.recommendation if results else None, measured)
    if not targets:
        return ["refine: the best depth does not change between measured concurrencies"]
    lines: list[str] = []
    for concurrency in targets:
        for session in sorted(sessions, key=lambda item: item.depth):
            if session.failure is not None:
                lines.append(f"refine: steps={session.depth} C={concurrency} not measured")
                continue
            with contextlib.suppress(ServerDied):
                point = session.measure_refined(concurrency)
                lines.append(
                    f"refine: steps={session.depth} C={concurrency} measured "
                    f"({point.agg_tok_s:,.1f} agg tok/s)"
                )
    return lines
