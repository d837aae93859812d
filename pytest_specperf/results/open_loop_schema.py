"""results.json's open-loop structs (re-exported by ``results/schema.py``): each request's
scheduled and actual send, the server's own load during a point, the SLO rate search."""

from __future__ import annotations

import msgspec


class SendTime(msgspec.Struct, frozen=True, array_like=True):
    """One request of an open-loop point: when the schedule said to send it and when it was
    sent, seconds after the point's first scheduled send, and how much of the send's lateness
    the sender's thread waited for a CPU (Linux's run-queue wait; null where not measured).
    JSON: ``[scheduled, sent, held]``; files written before ``held`` hold two."""

    scheduled: float
    sent: float
    held: float | None = None


class ServerLoad(msgspec.Struct, frozen=True, kw_only=True):
    """What the server said of its own load while a point ran: SGLang's ``/metrics`` gauges
    ``sglang:num_running_reqs`` and ``sglang:num_queue_reqs``, polled (their highest), and
    ``sglang:num_retracted_requests_total`` over the point (None: not served; SGLang serves
    them with ``--enable-metrics``)."""

    running_max: int | None = None
    queued_max: int | None = None
    retractions: int | None = None
    polls: int = 0


class RateProbe(msgspec.Struct, frozen=True, kw_only=True):
    """One rate the SLO search measured (measure/ratesearch.py)."""

    rate: float
    meets_slo: bool
    attainment: float
    goodput_tok_s: float
    agg_tok_s: float
    # The achieved request rate (finished requests over the point's wall time).
    achieved_rate: float


class RateSearch(msgspec.Struct, kw_only=True):
    """The highest request rate meeting the SLOs, found by bracketing then bisecting
    (measure/ratesearch.py); ``max_rate`` None: not even the lowest rate probed met them."""

    max_rate: float | None
    # The bracket at the end: the highest rate that met, the lowest that did not (None: not
    # found within the probes allowed).
    low: float | None = None
    high: float | None = None
    probes: list[RateProbe] = []
    # Why the search stopped: "resolution", "probes", "no rate met", "every rate met".
    stopped_by: str = ""
