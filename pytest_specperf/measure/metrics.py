"""Per-request records -> point metrics. Pure functions; the one metrics definition.

- Agg tok/s: sum of server-reported completion tokens of successful requests / point wall time.
- Per-req tok/s: mean over successful requests of (tokens after the first chunk) /
  (last chunk time - first chunk time): decode rate, excluding queueing and TTFT.
- TTFT: first chunk time - request start. ITL: each chunk's gap spread over its tokens.
  TPOT: (last - first chunk time) / (tokens after the first chunk). e2e: end - start.
- Accept length: sum(completion_tokens) / sum(spec_verify_ct) over the point's requests.
- Acceptance per draft position: from the summed per-request histograms (acceptance.py).

Truth checks (truth_problems): figures that cannot be true of a successful request are named
per point, never silently used: a request without a server token count, chunk counts that do
not add up to the server's final count, an end before the first token, or a last token seen
sooner after sending than the server itself took (its e2e_latency).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from pytest_specperf.results.acceptance import merge_histograms, position_accept_rates
from pytest_specperf.results.schema import Percentiles, PointMetrics, RequestRecord


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks; ``sorted_values`` must be sorted."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = (len(sorted_values) - 1) * fraction
    lower = math.floor(position)
    upper = math.ceil(position)
    weight = position - lower
    return sorted_values[lower] * (1 - weight) + sorted_values[upper] * weight


def summarize(values: Sequence[float]) -> Percentiles | None:
    if not values:
        return None
    ordered = sorted(values)
    return Percentiles(
        p50=percentile(ordered, 0.50),
        p90=percentile(ordered, 0.90),
        p99=percentile(ordered, 0.99),
        mean=sum(ordered) / len(ordered),
    )


def decode_rate(record: RequestRecord) -> float | None:
    """Tokens after the first chunk per second between the first and last chunk."""
    if len(record.chunk_times) < 2:
        return None
    span = record.chunk_times[-1] - record.chunk_times[0]
    after_first = record.completion_tokens - record.chunk_tokens[0]
    if span <= 0 or after_first <= 0:
        return None
    return after_first / span


def inter_token_latencies(record: RequestRecord) -> list[float]:
    gaps: list[float] = []
    times = record.chunk_times
    for index in range(1, len(times)):
        tokens = record.chunk_tokens[index]
        if tokens > 0:
            gaps.extend([(times[index] - times[index - 1]) / tokens] * tokens)
    return gaps


# The client's clock and the server's differ by scheduling: the client may see the last token
# a little sooner after its send than the server's e2e_latency only by this much.
SERVER_E2E_SLACK_S = 0.002
SERVER_E2E_SLACK_FRACTION = 0.01


def _faster_than_server(record: RequestRecord) -> bool:
    if record.server_e2e_s is None or not record.chunk_times:
        return False
    seen = record.chunk_times[-1] - record.start
    slack = SERVER_E2E_SLACK_S + SERVER_E2E_SLACK_FRACTION * record.server_e2e_s
    return seen < record.server_e2e_s - slack


TRUTH_CHECKS: tuple[tuple[str, Callable[[RequestRecord], bool]], ...] = (
    ("no token count from the server", lambda r: r.completion_tokens <= 0),
    (
        "chunk token counts do not add up to the server's final count",
        lambda r: bool(r.chunk_tokens) and sum(r.chunk_tokens) != r.completion_tokens,
    ),
    (
        "e2e shorter than TTFT",
        lambda r: r.first_chunk is not None and r.end < r.first_chunk,
    ),
    ("last token seen sooner than the server's own e2e_latency", _faster_than_server),
)


def truth_problems(records: Sequence[RequestRecord]) -> list[str]:
    """One line per impossible figure found among the successful requests."""
    good = [r for r in records if r.ok]
    problems = []
    for description, check in TRUTH_CHECKS:
        count = sum(1 for r in good if check(r))
        if count:
            problems.append(f"{count}/{len(good)} requests: {description}")
    return problems


def point_metrics(
    concurrency: int, records: Sequence[RequestRecord], wall_s: float
) -> PointMetrics:
    good = [r for r in records if r.ok]
    errors = Counter(r.error or "unknown error" for r in records if not r.ok)
    tokens = sum(r.completion_tokens for r in good)
    rates = [rate for r in good if (rate := decode_rate(r)) is not None]
    ttfts = [r.first_chunk - r.start for r in good if r.first_chunk is not None]
    itls = [gap for r in good for gap in inter_token_latencies(r)]
    tpots = [1.0 / rate for rate in rates]
    verify = sum(r.spec_verify_ct or 0 for r in good)
    verified_tokens = sum(r.completion_tokens for r in good if r.spec_verify_ct)
    histogram = merge_histograms(r.accept_histogram for r in good)
    retractions = [r.num_retractions for r in good if r.num_retractions is not None]
    cached = [r.cached_tokens for r in good if r.cached_tokens is not None]
    return PointMetrics(
        concurrency=concurrency,
        requests=len(records),
        ok=len(good),
        failed=len(records) - len(good),
        errors=dict(errors),
        tokens=tokens,
        wall_s=wall_s,
        agg_tok_s=tokens / wall_s if wall_s > 0 else 0.0,
        per_req_tok_s=sum(rates) / len(rates) if rates else None,
        ttft_s=summarize(ttfts),
        itl_s=summarize(itls),
        tpot_s=summarize(tpots),
        e2e_s=summarize([r.end - r.start for r in good]),
        accept_length=verified_tokens / verify if verify else None,
        spec_verify_ct=verify,
        chunks=sum(len(r.chunk_times) for r in good),
        accept_histogram=histogram,
        position_accept_rate=position_accept_rates(histogram),
        truth_problems=truth_problems(records),
        retractions=sum(retractions) if retractions else None,
        cached_tokens=sum(cached) if cached else None,
    )
