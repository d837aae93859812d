"""specperf bisect's pairs in the history store: one run of kind ``bisect`` per bisection, and
every pair of boots of every step in ``bisect_pairs``, so a rerun of an interrupted bisection
goes on from them (the pair's figures kept as the JSON run/bisect/steps.py hands over)."""

from __future__ import annotations

from typing import Any

from pytest_specperf.history.rows import RunContext, now_iso
from pytest_specperf.history.store import HistoryStore
from pytest_specperf.results.schema import RunResults

BISECT_KIND = "bisect"


class BisectLog:
    """The pairs of one bisection (``run_id``: its name, the same for a rerun with the same
    arguments, so the rerun finds them)."""

    def __init__(self, store: HistoryStore, run_id: str, *, started_at: str, commit: str) -> None:
        self.store = store
        self.run_id = run_id
        results = RunResults(
            run_id=run_id, started_at=started_at, tool_version="", tested_commit=commit
        )
        store.record(results, RunContext(kind=BISECT_KIND))

    def recorded(self, step: str) -> list[dict[str, Any]]:
        """The step's pairs, first first: pair, boot_order, server_seconds, pair_json."""
        return self.store.bisect_pairs(self.run_id, step)

    def pair_seconds(self) -> list[float]:
        """The server-seconds of every pair recorded so far, over all steps."""
        return self.store.bisect_pair_seconds(self.run_id)

    def record(
        self,
        step: str,
        *,
        pair: int,
        base: str,
        head: str,
        boot_order: str,
        server_seconds: float,
        pair_json: str,
    ) -> None:
        self.store.record_bisect_pair(
            self.run_id,
            {
                "step": step,
                "pair": pair,
                "base_commit": base,
                "head_commit": head,
                "boot_order": boot_order,
                "server_seconds": server_seconds,
                "pair_json": pair_json,
                "recorded_at": now_iso(),
            },
        )

    def finish(self, status: str) -> None:
        self.store.finish_run(self.run_id, status)
