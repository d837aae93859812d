"""What a point's client health says: did the load generator fall behind, did it bound the
point? Judged from the ClientHealth record the load generator left (measure/client_monitor.py
measures it), so the reports and the gate read it without the measuring side."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_specperf.results.schema import ClientHealth

# An event loop that wakes 50 ms late at the 99th percentile is reading its streams late.
LOOP_LAG_P99_LIMIT_S = 0.05
# One asyncio thread cannot use more than one core; near it, the client is the bottleneck.
CPU_SHARE_LIMIT = 0.9


def _saturated(health: ClientHealth) -> bool:
    return (
        health.loop_lag_p99_s >= LOOP_LAG_P99_LIMIT_S
        or health.cpu_share_of_busiest >= CPU_SHARE_LIMIT
    )


def _describe(health: ClientHealth) -> str:
    lag_ms = health.loop_lag_p99_s * 1000
    cpu = f"CPU {health.cpu_share_of_busiest:.0%} of one core"
    if health.processes > 1:
        cpu += f" in its busiest of {health.processes} processes"
    return f"event-loop lag p99 {lag_ms:.0f} ms, {cpu}"


def fell_behind(health: ClientHealth | None) -> str | None:
    """One line when the client was short of CPU during the point, else None."""
    if health is None or not _saturated(health):
        return None
    return (
        f"the load generator fell behind ({_describe(health)}): the server may be faster than "
        "these figures; give the client more CPU or lower the concurrency"
    )


def client_bound_reason(healths: Sequence[ClientHealth]) -> str | None:
    """Why the client, not the server, bounded a point (any of its processes saturated).

    Limits: event-loop lag p99 >= LOOP_LAG_P99_LIMIT_S or CPU >= CPU_SHARE_LIMIT of a core in
    one process. The answer is what was seen; the gate, which will not judge such a point,
    says what to do (gate/decision.py).
    """
    saturated = [h for h in healths if _saturated(h)]
    if not saturated:
        return None
    worst = max(saturated, key=lambda h: (h.cpu_share_of_busiest, h.loop_lag_p99_s))
    if len(healths) > 1:
        where = f"{len(saturated)} of {len(healths)} client processes"
    else:
        where = "its one client process"
    return (
        f"load generator saturated in {where} ({_describe(worst)}; "
        f"limits {LOOP_LAG_P99_LIMIT_S * 1000:.0f} ms, {CPU_SHARE_LIMIT:.0%})"
    )
