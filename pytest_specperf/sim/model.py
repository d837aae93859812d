"""Performance model of a speculative-decoding SGLang deployment, and its profiles.

Pure functions and data: no asyncio, no HTTP. The scheduler (scheduler.py) asks this module
how long a step takes, how many tokens a request gets per step and how much KV capacity
the deployment has; `simulate_sweep` runs the same rules in virtual time, so the model can
be calibrated against the seed's table without a server.

Model (design.md, fitted to the seed):
    decode step (ms) = base + per_token x (running x (chain + 1)) + per_depth x chain
    prefill (ms)     = prefill_base + prefill_per_request x admitted
                       + prefill_per_token x prompt tokens admitted
    tokens per decode step per request = 1 + leading successes of `chain` Bernoulli(alpha)
where `chain` is --speculative-num-steps (EAGLE family), num_draft_tokens - 1 (NGRAM),
or 0 without speculation.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    """One simulated deployment: constants of the performance model."""

    name: str
    hardware: str
    model_path: str
    model_type: str
    architectures: tuple[str, ...]
    step_base_ms: float
    step_per_token_ms: float
    step_per_depth_ms: float
    prefill_base_ms: float
    prefill_per_request_ms: float
    prefill_per_token_ms: float
    # KV capacity (max_total_num_tokens) measured per speculation depth; others extrapolate.
    kv_tokens_by_steps: tuple[tuple[int, int], ...]
    kv_tokens_per_request: int
    alpha_greedy: float
    alpha_sampled: float
    eos_probability: float
    context_length: int
    weight_gb: float
    kvcache_gb: float
    graph_gb: float
    vocab_size: int = 1000
    spec_running_cap: int = 48
    notes: str = ""
    extra: dict[str, float] = field(default_factory=dict)


SEED_PROFILE = Profile(
    name="qwen3.5-122b-a10b-fp8-4x-rtx-pro-6000",
    hardware="simulated 4x RTX PRO 6000 Blackwell",
    model_path="Qwen/Qwen3.5-122B-A10B-FP8",
    model_type="qwen3_5_moe",
    architectures=("Qwen3_5MoeForConditionalGeneration",),
    step_base_ms=15.5,
    step_per_token_ms=0.264,
    step_per_depth_ms=0.07,
    # Calibrated so that the seed's C=1 gap between Agg and Per-req (about 90 ms per
    # request) and its concurrent points land near the middle of the 15% band.
    prefill_base_ms=70.0,
    prefill_per_request_ms=6.0,
    prefill_per_token_ms=0.02,
    kv_tokens_by_steps=((1, 455_357), (2, 377_207), (3, 295_931)),
    kv_tokens_per_request=17_400,
    alpha_greedy=0.995,
    alpha_sampled=0.85,
    eos_probability=0.002,
    context_length=262_144,
    weight_gb=30.6,
    kvcache_gb=54.2,
    graph_gb=1.9,
    notes="the seed deployment: Qwen3.5-122B-A10B-FP8, TP4, MTP (EAGLE/NEXTN)",
)

PROFILES: dict[str, Profile] = {SEED_PROFILE.name: SEED_PROFILE}
DEFAULT_PROFILE = SEED_PROFILE.name
# --sim-corrupt-output alters the greedy output token at this index.
CORRUPT_OUTPUT_AT = 16


def chain_length(algorithm: str | None, num_steps: int | None, num_draft_tokens: int | None) -> int:
    """Length of the draft chain verified per decode step (0 without speculation)."""
    if algorithm is None:
        return 0
    if algorithm == "NGRAM":
        return max(0, (num_draft_tokens or 1) - 1)
    return max(0, num_steps or 0)


def verify_width(chain: int, num_draft_tokens: int | None) -> int:
    """Tokens each running request puts through the target model per decode step."""
    if chain == 0:
        return 1
    return max(chain + 1, num_draft_tokens or 0)


def decode_step_ms(profile: Profile, running: int, chain: int, width: int | None = None) -> float:
    """Model time of one decode (verify) step with `running` requests in the batch."""
    w = chain + 1 if width is None else width
    return (
        profile.step_base_ms
        + profile.step_per_token_ms * running * w
        + profile.step_per_depth_ms * chain
    )


def prefill_ms(profile: Profile, admitted: int, prompt_tokens: int) -> float:
    """Model time of one prefill step admitting `admitted` requests."""
    return (
        profile.prefill_base_ms
        + profile.prefill_per_request_ms * admitted
        + profile.prefill_per_token_ms * prompt_tokens
    )


def kv_capacity(profile: Profile, chain: int) -> int:
    """max_total_num_tokens at this depth: measured, else linear extrapolation (positive)."""
    table = dict(profile.kv_tokens_by_steps)
    depth = max(chain, 0)
    if depth in table:
        return table[depth]
    pts = sorted(table.items())
    if len(pts) == 1:
        return pts[0][1]
    (x0, y0), (x1, y1) = (pts[0], pts[1]) if depth < pts[0][0] else (pts[-2], pts[-1])
    slope = (y1 - y0) / (x1 - x0)
    value = round(y0 + slope * (depth - x0))
    return max(value, profile.kv_tokens_per_request)


def max_running_requests(profile: Profile, chain: int, explicit: int | None = None) -> int:
    """floor(capacity / tokens per request), at least 1, lowered by an explicit cap."""
    derived = max(1, kv_capacity(profile, chain) // profile.kv_tokens_per_request)
    return derived if explicit is None else max(1, min(derived, explicit))


def admit_count(
    kv_needs: Iterable[int], running: int, kv_used: int, max_running: int, kv_budget: int
) -> int:
    """How many waiting requests (their KV needs, in arrival order) are admitted now.

    FIFO without overtaking: admission stops at the first request whose KV need does not
    fit in what is left of the budget, or once `max_running` requests would be running.
    The scheduler and `simulate_point` both admit by this rule.
    """
    admitted = 0
    for need in kv_needs:
        if running + admitted >= max_running or kv_used + need > kv_budget:
            break
        kv_used += need
        admitted += 1
    return admitted


def default_alpha(profile: Profile, temperature: float) -> float:
    """Per-draft acceptance probability for a request's sampling temperature."""
    return profile.alpha_greedy if temperature <= 0.0 else profile.alpha_sampled


def accepted_drafts(rng: random.Random, chain: int, alpha: float) -> int:
    """Leading successes in a chain of `chain` Bernoulli(alpha) draws."""
    n = 0
    while n < chain and rng.random() < alpha:
        n += 1
    return n


def expected_tokens_per_step(chain: int, alpha: float) -> float:
    """E[1 + leading successes] = 1 + alpha + ... + alpha^chain."""
    return float(sum(alpha**k for k in range(chain + 1)))


# --------------------------------------------------------------------------------------
# Virtual-time closed-loop sweep (calibration without HTTP)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointResult:
    """One closed-loop point: figures computed as the suite computes them."""

    concurrency: int
    requests: int
    tokens: int
    wall_s: float
    agg_tok_s: float
    per_req_tok_s: float
    accept_length: float

    @classmethod
    def of(
        cls,
        concurrency: int,
        requests: int,
        wall_s: float,
        streams: Sequence[tuple[int, int, float, float, int]],
    ) -> PointResult:
        """The point from its streams: (tokens, tokens in the first chunk, first chunk time,
        last chunk time, verify steps) each; a stream's rate counts from its first chunk."""
        tokens = sum(stream[0] for stream in streams)
        rates = [
            (done - at_first) / (last - first)
            for done, at_first, first, last, _ in streams
            if last > first
        ]
        verify = sum(stream[4] for stream in streams)
        return cls(
            concurrency=concurrency,
            requests=requests,
            tokens=tokens,
            wall_s=wall_s,
            agg_tok_s=tokens / wall_s,
            per_req_tok_s=sum(rates) / len(rates) if rates else 0.0,
            accept_length=tokens / verify if verify else 1.0,
        )


@dataclass
class _VReq:
    idx: int
    prompt_tokens: int
    max_new: int
    rng: random.Random
    done: int = 0
    verify: int = 0
    first_t: float = math.nan
    last_t: float = math.nan
    first_tokens: int = 0

    @property
    def kv_need(self) -> int:
        return self.prompt_tokens + self.max_new


def simulate_point(
    profile: Profile,
    chain: int,
    concurrency: int,
    num_requests: int,
    *,
    max_new_tokens: int = 1000,
    prompt_tokens: int = 16,
    alpha: float | None = None,
    max_running: int | None = None,
    seed: int = 0,
    client_overhead_s: float = 0.0,
) -> PointResult:
    """Closed loop: keep `concurrency` requests in flight until `num_requests` are done.

    Follows the scheduler's rules: FIFO admission (`admit_count`, shared with the
    scheduler) bounded by max_running_requests and the KV budget, one prefill step per
    admission batch (emitting each request's first token), then decode steps that advance
    every running request.
    """
    a = profile.alpha_greedy if alpha is None else alpha
    cap = max_running if max_running is not None else max_running_requests(profile, chain)
    kv_total = kv_capacity(profile, chain)
    width = chain + 1
    master = random.Random(seed)
    t = 0.0
    submitted = 0
    # Arrival times of requests that are submitted but not yet admitted.
    arrivals: list[tuple[float, int]] = []
    waiting: list[_VReq] = []
    running: list[_VReq] = []
    finished: list[_VReq] = []

    def submit(at: float) -> None:
        nonlocal submitted
        if submitted < num_requests:
            heapq.heappush(arrivals, (at, submitted))
            submitted += 1

    for _ in range(min(concurrency, num_requests)):
        submit(0.0)
    while len(finished) < num_requests:
        while arrivals and arrivals[0][0] <= t + 1e-12:
            _, idx = heapq.heappop(arrivals)
            waiting.append(
                _VReq(idx, prompt_tokens, max_new_tokens, random.Random(master.random()))
            )
        if not running and not waiting:
            t = arrivals[0][0]
            continue
        used = sum(r.kv_need for r in running)
        n_admit = admit_count((r.kv_need for r in waiting), len(running), used, cap, kv_total)
        admit, waiting = waiting[:n_admit], waiting[n_admit:]
        if admit:
            t += prefill_ms(profile, len(admit), sum(r.prompt_tokens for r in admit)) / 1000
            for r in admit:
                r.done = 1
                r.first_tokens = 1
                r.first_t = r.last_t = t
            running.extend(admit)
        else:
            t += decode_step_ms(profile, len(running), chain, width) / 1000
            for r in running:
                n = 1 + accepted_drafts(r.rng, chain, a)
                r.done = min(r.max_new, r.done + n)
                r.verify += 1
                r.last_t = t
        still: list[_VReq] = []
        for r in running:
            if r.done >= r.max_new:
                finished.append(r)
                submit(t + client_overhead_s)
            else:
                still.append(r)
        running = still
    wall = max(r.last_t for r in finished) + client_overhead_s
    streams = [(r.done, r.first_tokens, r.first_t, r.last_t, r.verify) for r in finished]
    return PointResult.of(concurrency, num_requests, wall, streams)


SEED_CONCURRENCIES: tuple[int, ...] = (1, 4, 16, 32, 64)


def seed_requests(concurrency: int) -> int:
    """The seed's request plan: N = 4 at C = 1, else 2C."""
    return 4 if concurrency == 1 else 2 * concurrency


def simulate_sweep(
    profile: Profile,
    chain: int,
    concurrencies: tuple[int, ...] = SEED_CONCURRENCIES,
    **kwargs: float | int | None,
) -> list[PointResult]:
    """The seed's closed-loop sweep in virtual time."""
    return [
        simulate_point(profile, chain, c, seed_requests(c), **kwargs)  # type: ignore[arg-type]
        for c in concurrencies
    ]


# The seed's published figures: steps -> C -> (Agg tok/s, Per-req tok/s). Steps 1 and 2
# quote only C=1 and C=64 (per-req at C=64 given as "~65" / "~99").
SEED_TABLE: dict[int, dict[int, tuple[float, float]]] = {
    1: {1: (122.9, 124.3), 64: (1566.0, 65.0)},
    2: {1: (182.7, 185.7), 64: (1844.0, 99.0)},
    3: {
        1: (229.1, 234.0),
        4: (705.0, 199.7),
        16: (1733.0, 119.9),
        32: (1978.5, 119.8),
        64: (1913.8, 119.5),
    },
}
