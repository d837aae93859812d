"""Goodput under SLOs: which requests of a point met every objective, and what they delivered.

The rules (one definition everywhere):

- A request meets the SLOs when it succeeded and its TTFT <= ``ttft_p99_ms``, the p99 of its
  own inter-token latencies (each chunk's gap spread over its tokens, as in metrics.py) <=
  ``itl_p99_ms``, and its end-to-end time <= ``e2e_p99_ms``. A limit not set is not checked.
  The per-request ITL p99 (not its max) lets one scheduling hiccup in a long stream pass.
- Goodput = completion tokens of the requests that met the SLOs / the point's wall time.
- A point meets the SLOs when at least ``attainment`` (0.99 unless set) of its requests,
  failed ones included, met them: the "p99 within the SLO" reading, per request. With
  repeats, the point's goodput is the median of its samples' and its requests are pooled.
- Per depth, the SLO capacity is the largest measured concurrency at which that point and
  every lower measured point met the SLOs (gate/recommend.py).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.metrics import inter_token_latencies, percentile
from pytest_specperf.results.schema import Goodput, RequestRecord, Slo

SLO_KEYS = ("ttft_p99_ms", "itl_p99_ms", "e2e_p99_ms", "attainment")


def parse_slo(raw: str | None, option: str = "--specperf-slo") -> Slo | None:
    """``"ttft_p99_ms=500,itl_p99_ms=40"`` -> Slo; empty or None -> None."""
    text = str(raw or "").strip()
    if not text:
        return None
    values: dict[str, float] = {}
    for part in text.split(","):
        name, sep, number = part.partition("=")
        name = name.strip()
        if not sep or name not in SLO_KEYS:
            raise UsageError(
                f"{option}: {part.strip()!r} is not name=value with a name of "
                f"{', '.join(SLO_KEYS)} (got {raw!r})"
            )
        try:
            value = float(number)
        except ValueError:
            raise UsageError(f"{option}: {name}={number.strip()!r} is not a number") from None
        if not value > 0 or value != value or value == float("inf"):
            raise UsageError(f"{option}: {name} must be a positive number (got {number!r})")
        if name == "attainment" and value > 1:
            raise UsageError(f"{option}: attainment is a fraction in (0, 1] (got {number!r})")
        values[name] = value
    if not any(key in values for key in SLO_KEYS[:3]):
        raise UsageError(f"{option}: set at least one of ttft_p99_ms, itl_p99_ms, e2e_p99_ms")
    return Slo(**values)


def request_misses(record: RequestRecord, slo: Slo) -> list[str]:
    """The objectives this request missed ("failed" alone if it did not succeed)."""
    if not record.ok:
        return ["failed"]
    misses: list[str] = []
    if slo.ttft_p99_ms is not None:
        ttft = None if record.first_chunk is None else record.first_chunk - record.start
        if ttft is None or ttft * 1000 > slo.ttft_p99_ms:
            misses.append("ttft")
    if slo.itl_p99_ms is not None:
        gaps = sorted(inter_token_latencies(record))
        if gaps and percentile(gaps, 0.99) * 1000 > slo.itl_p99_ms:
            misses.append("itl")
    if slo.e2e_p99_ms is not None and (record.end - record.start) * 1000 > slo.e2e_p99_ms:
        misses.append("e2e")
    return misses


def point_goodput(records: Sequence[RequestRecord], wall_s: float, slo: Slo) -> Goodput:
    misses: Counter[str] = Counter()
    meeting_tokens = 0
    meeting = 0
    for record in records:
        missed = request_misses(record, slo)
        misses.update(missed)
        if not missed:
            meeting += 1
            meeting_tokens += record.completion_tokens
    requests = len(records)
    return Goodput(
        goodput_tok_s=meeting_tokens / wall_s if wall_s > 0 else 0.0,
        requests_meeting=meeting,
        requests=requests,
        misses=dict(misses),
        meets_slo=meets(meeting, requests, slo.attainment),
        required_attainment=slo.attainment,
    )


def meets(meeting: int, requests: int, attainment: float) -> bool:
    """A point meets the SLOs when at least ``attainment`` of its requests did."""
    return requests > 0 and meeting >= attainment * requests - 1e-9


def merge_goodput(parts: Sequence[Goodput]) -> Goodput:
    """One point's goodput from its repeats: the median goodput, requests and misses summed,
    and the point meets the SLOs when every request of every sample, pooled, does."""
    misses: Counter[str] = Counter()
    for part in parts:
        misses.update(part.misses)
    meeting = sum(part.requests_meeting for part in parts)
    requests = sum(part.requests for part in parts)
    required = parts[0].required_attainment
    return Goodput(
        goodput_tok_s=statistics.median(part.goodput_tok_s for part in parts),
        requests_meeting=meeting,
        requests=requests,
        misses=dict(sorted(misses.items())),
        meets_slo=meets(meeting, requests, required),
        required_attainment=required,
    )
