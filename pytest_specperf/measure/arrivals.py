"""Open-loop send schedules: request rates with Poisson or gamma arrivals, and their keys.

A rate point sends its requests at seeded random times, whatever the server does meanwhile:
the gaps are exponential at ``--specperf-burstiness`` 1 (Poisson arrivals, what SGLang's
bench_serving sends at ``--request-rate``), gamma with shape ``burstiness`` and the same mean
otherwise (vLLM's ``--burstiness``: below 1 burstier, above 1 more even). The first request
goes at once, each next one a drawn gap after the last, as both clients do. The seed depends
on the rate alone, so every depth and every sample of a rate gets the same schedule.
"""

from __future__ import annotations

import math
import random

from pytest_specperf.errors import UsageError
from pytest_specperf.measure.number_list import parse_number_list

# The fewest requests of a rate point, however short its duration.
MIN_RATE_REQUESTS = 8
TRACE_LOAD = "trace"


def rate_key(rate: float, burstiness: float = 1.0) -> str:
    """The point's key: ``rate=4`` (Poisson) or ``rate=4,burstiness=0.5``."""
    key = f"rate={rate:g}"
    return key if burstiness == 1.0 else f"{key},burstiness={burstiness:g}"


def rate_of(key: str) -> float | None:
    """The rate a ``rate=...`` key names (None for other loads)."""
    if not key.startswith("rate="):
        return None
    return float(key.split(",", 1)[0].removeprefix("rate="))


def rate_requests(rate: float, seconds: float, fixed: int | None = None) -> int:
    """Requests of a rate point: ``fixed`` if given, else ``seconds`` of arrivals."""
    if fixed is not None:
        return fixed
    return max(MIN_RATE_REQUESTS, math.ceil(rate * seconds))


def rate_offsets(rate: float, count: int, burstiness: float = 1.0) -> list[float]:
    """Seconds after the first send at which each of ``count`` requests is sent."""
    if rate <= 0 or not math.isfinite(rate):
        raise UsageError(f"request rate must be a positive number, got {rate!r}")
    if burstiness <= 0:
        raise UsageError(f"burstiness must be > 0, got {burstiness!r}")
    rng = random.Random(f"specperf-arrivals:{rate!r}:{burstiness!r}")
    offsets: list[float] = []
    now = 0.0
    for index in range(count):
        if index:
            now += rng.gammavariate(burstiness, 1.0 / (rate * burstiness))
        offsets.append(now)
    return offsets


def parse_rates(raw: str, option: str = "--specperf-request-rate") -> tuple[float, ...]:
    """``"1,2.5,4"`` -> (1.0, 2.5, 4.0): sorted, unique, each > 0."""
    text = str(raw).strip()
    if not text:
        return ()
    return parse_number_list(option, raw, float, kind="a number", problem=_not_a_rate)


def _not_a_rate(value: float, item: str) -> str | None:
    if math.isfinite(value) and value > 0:
        return None
    return f"{item!r} must be a request rate > 0 per second"
