"""Continuous-batching scheduler: one asyncio task, absolute-deadline clock.

KV as SGLang keeps it: a running request holds its prompt and the tokens it produced so
far. Admission reserves what the waiting request and the running ones are still expected to
write, at SGLang's new-token ratio (0.7 of the tokens left, decaying to 0.098 over 600 decode
steps); when a decode step would overflow the pool, requests are retracted in SGLang's order
(fewest output tokens first, then longest prompt) back to the head of the queue, each counted
in its ``num_retractions``, and the ratio is re-estimated as SGLang does. A radix-like prefix
cache (whole blocks of the prompt, parse.PREFIX_BLOCK words, kept in the pool's free space and
evicted least recently used; off with --disable-radix-cache) spares the prefill of a prefix
seen before; a request's ``cached_tokens`` says how much.

The scheduler never awaits a client: each step it pushes (token count, finished) into the
per-request queues and the HTTP handlers drain them at their own pace. Steps are scheduled
against absolute deadlines on the loop's monotonic clock (`next_deadline += step_time`), so
slow clients or a busy event loop never stretch the simulated schedule; lateness is
recorded in the step statistics served by /sim/ground_truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import signal
import sys
import time
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from pytest_specperf.sim import model
from pytest_specperf.sim.config import SimConfig
from pytest_specperf.sim.kv_pool import prefill_tokens, retract
from pytest_specperf.sim.noise import NoiseModel

# SGLang's schedule constants (envs SGLANG_INIT_NEW_TOKEN_RATIO, SGLANG_MIN_NEW_TOKEN_RATIO_
# FACTOR, SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS, SGLANG_RETRACT_DECODE_STEPS and
# SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION, 0.5.23).
INIT_NEW_TOKEN_RATIO = 0.7
MIN_NEW_TOKEN_RATIO = INIT_NEW_TOKEN_RATIO * 0.14
NEW_TOKEN_RATIO_DECAY = (INIT_NEW_TOKEN_RATIO - MIN_NEW_TOKEN_RATIO) / 600
RETRACT_DECODE_STEPS = 20
CLIP_MAX_NEW_TOKENS = 4096


@dataclass(frozen=True)
class Emission:
    """What one step produced for a request: cumulative token count and the finish state."""

    count: int
    finish: dict[str, Any] | None


@dataclass
class SimRequest:
    """A generation request as the scheduler sees it."""

    rid: str
    prompt_tokens: int
    max_new_tokens: int
    alpha: float
    ignore_eos: bool
    stop: tuple[str, ...]
    rng: random.Random
    # Draws the output tokens (and EOS), apart from the acceptance draws on `rng`: at
    # temperature 0 it is seeded by the prompt, so greedy outputs do not depend on the depth.
    token_rng: random.Random = field(default_factory=random.Random)
    corrupt_output: bool = False
    created: float = field(default_factory=time.monotonic)
    created_wall: float = field(default_factory=time.time)
    tokens: list[int] = field(default_factory=list)
    queue: asyncio.Queue[Emission] = field(default_factory=asyncio.Queue)
    verify_ct: int = 0
    accepted_drafts: int = 0
    histogram: list[int] = field(default_factory=list)
    finish: dict[str, Any] | None = None
    admitted: float | None = None
    first_emit: float | None = None
    last_emit: float | None = None
    aborted: bool = False
    # The prompt's prefix-cache keys (parse.prefix_blocks), what the last prefill found
    # cached, and how often the request was retracted (KV pool full).
    prefix_blocks: tuple[str, ...] = ()
    cached_tokens: int = 0
    num_retractions: int = 0

    @property
    def kv_need(self) -> int:
        """KV tokens the request needs at its longest: what must fit the pool at all."""
        return self.prompt_tokens + self.max_new_tokens

    @property
    def kv_held(self) -> int:
        """KV tokens the request holds now: its prompt and its output so far."""
        return self.prompt_tokens + len(self.tokens)

    def kv_expected(self, ratio: float) -> float:
        """What admission reserves for it: held now plus ``ratio`` of the output to come."""
        left = min(self.max_new_tokens - len(self.tokens), CLIP_MAX_NEW_TOKENS)
        return self.kv_held + ratio * max(0, left)

    def record(self) -> dict[str, Any]:
        return {
            "rid": self.rid,
            "prompt_tokens": self.prompt_tokens,
            "max_new_tokens": self.max_new_tokens,
            "completion_tokens": len(self.tokens),
            "spec_verify_ct": self.verify_ct,
            "spec_accepted_drafts": self.accepted_drafts,
            "created": self.created,
            "admitted": self.admitted,
            "first_emit": self.first_emit,
            "last_emit": self.last_emit,
            "finish_reason": self.finish,
            "aborted": self.aborted,
            "num_retractions": self.num_retractions,
            "cached_tokens": self.cached_tokens,
        }


@dataclass
class StepStats:
    """Achieved vs model step times (real seconds, i.e. after the speedup)."""

    count: int = 0
    decode_count: int = 0
    prefill_count: int = 0
    achieved_sum: float = 0.0
    model_sum: float = 0.0
    max_lateness: float = 0.0
    lateness_sum: float = 0.0
    # Steps that paid --sim-cold-shape-ms (the first of their shape since boot).
    cold_count: int = 0

    def as_dict(self) -> dict[str, Any]:
        n = max(self.count, 1)
        mean_achieved = self.achieved_sum / n
        mean_model = self.model_sum / n
        return {
            "count": self.count,
            "decode_count": self.decode_count,
            "prefill_count": self.prefill_count,
            "mean_achieved_s": mean_achieved,
            "mean_model_s": mean_model,
            "achieved_over_model": (mean_achieved / mean_model) if mean_model else None,
            "max_lateness_s": self.max_lateness,
            "mean_lateness_s": self.lateness_sum / n,
            "cold_count": self.cold_count,
        }


EOS_TOKEN_ID = 0


def _bucket(count: int) -> int:
    """The power of two ``count`` rounds up to, as its exponent: 1 -> 0, 3 -> 2, 129 -> 8."""
    return max(0, count - 1).bit_length()


class Scheduler:
    """FIFO admission under max_running_requests and the KV budget; decode steps batch all."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.profile = config.profile
        self.chain = config.chain
        self.width = model.verify_width(config.chain, config.num_draft_tokens)
        self.waiting: deque[SimRequest] = deque()
        self.running: list[SimRequest] = []
        self.new_token_ratio = INIT_NEW_TOKEN_RATIO
        self.retractions_total = 0
        self.running_max = 0
        # Prefix-cache blocks, least recently used first (None: --disable-radix-cache).
        self.prefix_cache: OrderedDict[str, None] | None = (
            None if config.server_args.get("disable_radix_cache") else OrderedDict()
        )
        self.forward_sleep_s = 0.0
        self._rng = random.Random(f"{config.seed}:steps")
        self.noise = NoiseModel(
            boot_cv=config.noise,
            point_cv=config.point_noise,
            point_period_s=config.point_noise_period,
            step_jitter=config.jitter,
            seed=config.noise_seed,
        )
        self.noise_factor = self.noise.boot_factor
        self._born = time.monotonic()
        self._wake = asyncio.Event()
        self._req_counter = 0
        self.admitted_total = 0
        self.records: list[SimRequest] = []
        self.stats = StepStats()
        self.lifetime_tokens = 0
        self.lifetime_verify = 0
        self.last_gen_throughput = 0.0
        self._crash_at_step: int | None = None
        # Step shapes run since boot (--sim-cold-shape-ms); never reset, like compiled kernels.
        self.warm_shapes: set[tuple[str, int, int]] = set()
        self._task: asyncio.Task[None] | None = None

    # ---- requests -------------------------------------------------------------------

    def new_request(
        self,
        prompt_tokens: int,
        max_new_tokens: int,
        temperature: float,
        ignore_eos: bool,
        stop: tuple[str, ...] = (),
        prompt_key: str = "",
        prefix_blocks: tuple[str, ...] = (),
    ) -> SimRequest:
        """Create a request (seeded by arrival order); `submit` queues it.

        ``prompt_key`` identifies the prompt's content: at temperature 0 the output tokens
        are a function of it alone (greedy decoding is deterministic and lossless).
        """
        idx = self._req_counter
        self._req_counter += 1
        alpha = (
            self.config.acceptance
            if self.config.acceptance is not None
            else model.default_alpha(self.profile, temperature)
        )
        return SimRequest(
            rid=uuid.uuid4().hex,
            prompt_tokens=prompt_tokens,
            max_new_tokens=max_new_tokens,
            alpha=alpha,
            ignore_eos=ignore_eos,
            stop=stop,
            rng=random.Random(f"{self.config.seed}:req:{idx}"),
            token_rng=random.Random(
                f"{self.config.seed}:greedy:{prompt_key}"
                if temperature == 0
                else f"{self.config.seed}:sampled:{idx}"
            ),
            corrupt_output=self.config.corrupt_output and temperature == 0,
            prefix_blocks=prefix_blocks,
        )

    def fits_ever(self, req: SimRequest) -> bool:
        return req.kv_need <= self.config.max_total_num_tokens

    def submit(self, req: SimRequest) -> None:
        self.waiting.append(req)
        self.records.append(req)
        self._wake.set()

    def abort(self, req: SimRequest) -> None:
        """Client went away (or a fault ended the stream): free its slot."""
        if req.finish is not None or req.aborted:
            return
        req.aborted = True
        req.finish = {"type": "abort", "message": "client disconnected"}
        if req in self.running:
            self.running.remove(req)
        elif req in self.waiting:
            self.waiting.remove(req)

    @property
    def kv_used(self) -> int:
        """KV tokens the running requests hold."""
        return sum(r.kv_held for r in self.running)

    @property
    def busy(self) -> bool:
        return bool(self.running or self.waiting)

    def reset_ground_truth(self) -> None:
        self.records = [r for r in self.records if r.finish is None]
        self.stats = StepStats()

    def ground_truth(self) -> dict[str, Any]:
        return {
            "requests": [r.record() for r in self.records],
            "steps": self.stats.as_dict(),
            "running": len(self.running),
            "waiting": len(self.waiting),
            "kv_used": self.kv_used,
            "max_total_num_tokens": self.config.max_total_num_tokens,
            "max_running_requests": self.config.max_running_requests,
            "running_max": self.running_max,
            "retractions": self.retractions_total,
            "new_token_ratio": self.new_token_ratio,
            "prefix_cache_blocks": None if self.prefix_cache is None else len(self.prefix_cache),
            "noise_factor": self.noise_factor,
            "clock": "time.monotonic",
        }

    @property
    def avg_accept_length(self) -> float | None:
        if not self.lifetime_verify:
            return None
        return self.lifetime_tokens / self.lifetime_verify

    # ---- the loop -------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _scale(self, model_ms: float) -> float:
        """Model milliseconds -> real seconds, with noise, jitter, slowdown and speedup."""
        cfg = self.config
        factor = self.noise.factor((time.monotonic() - self._born) * cfg.speedup)
        seconds = model_ms / 1000.0 * factor / (1.0 - cfg.slowdown) + self.forward_sleep_s
        return seconds / cfg.speedup

    def _cold_seconds(self, kind: str, batch: list[SimRequest]) -> float:
        """Real seconds of a cold start if this step's shape is new since boot, else 0.

        The shape: prefill or decode, the batch size and the longest sequence in the batch, each
        rounded up to a power of two (as CUDA graphs and compiled kernels are kept per bucket).
        """
        if self.config.cold_shape_ms <= 0 or not batch:
            return 0.0
        longest = max(r.prompt_tokens + len(r.tokens) for r in batch)
        shape = (kind, _bucket(len(batch)), _bucket(longest))
        if shape in self.warm_shapes:
            return 0.0
        self.warm_shapes.add(shape)
        self.stats.cold_count += 1
        return self.config.cold_shape_ms / 1000.0 / self.config.speedup

    def _admit(self) -> list[SimRequest]:
        """FIFO admission (model.admit_count) of what fits: each waiting request's expected
        KV against the pool less what the running ones are expected to hold."""
        ratio = self.new_token_ratio
        reserved = math.ceil(sum(r.kv_expected(ratio) for r in self.running))
        count = model.admit_count(
            (math.ceil(r.kv_expected(ratio)) for r in self.waiting),
            len(self.running),
            reserved,
            self.config.max_running_requests,
            self.config.max_total_num_tokens,
        )
        admitted = [self.waiting.popleft() for _ in range(count)]
        # Admitted requests hold their slot from now on (an abort frees it).
        self.running.extend(admitted)
        self.running_max = max(self.running_max, len(self.running))
        return admitted

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        prev_end: float | None = None
        while True:
            if not self.busy:
                self._wake.clear()
                await self._wake.wait()
                deadline = None
            now = loop.time()
            if deadline is None:
                deadline = now
                prev_end = now
            admitted = self._admit()
            if admitted:
                for r in admitted:
                    if r.admitted is None:
                        r.admitted = now
                # The pool's free space, the prefix cache's room (kv_used is fixed here).
                free = max(0, self.config.max_total_num_tokens - self.kv_used)
                model_ms = model.prefill_ms(
                    self.profile,
                    len(admitted),
                    sum(prefill_tokens(self.prefix_cache, r, free) for r in admitted),
                )
                batch = admitted
            else:
                # Retract what the next decode step would overflow (sim/kv_pool.py).
                self.running, retracted, ratio = retract(
                    self.running,
                    self.waiting,
                    self.config.max_total_num_tokens,
                    self.width,
                    RETRACT_DECODE_STEPS,
                )
                self.retractions_total += retracted
                if ratio is not None:
                    self.new_token_ratio = ratio
                self.new_token_ratio = max(
                    MIN_NEW_TOKEN_RATIO, self.new_token_ratio - NEW_TOKEN_RATIO_DECAY
                )
                batch = list(self.running)
                model_ms = model.decode_step_ms(self.profile, len(batch), self.chain, self.width)
            cold = self._cold_seconds("prefill" if admitted else "decode", batch)
            duration = self._scale(model_ms) + cold
            deadline += duration
            delay = deadline - loop.time()
            if self.config.cpu_bound:
                # Spin to the deadline, yielding so that handlers still run between spins.
                while loop.time() < deadline:
                    await asyncio.sleep(0)
            # Always yield, even when late, so handlers drain their queues between steps.
            await asyncio.sleep(delay if delay > 0 and not self.config.cpu_bound else 0)
            end = loop.time()
            lateness = max(0.0, end - deadline)
            st = self.stats
            st.count += 1
            st.achieved_sum += end - (prev_end if prev_end is not None else end)
            st.model_sum += duration
            st.lateness_sum += lateness
            st.max_lateness = max(st.max_lateness, lateness)
            prev_end = end
            if admitted:
                st.prefill_count += 1
                self.admitted_total += len(admitted)
                for r in admitted:
                    if not r.aborted:
                        self._advance(r, 1, end, prefill=True)
                self._maybe_schedule_crash()
            else:
                st.decode_count += 1
                produced = 0
                for r in batch:
                    if r.aborted:
                        continue
                    drafts = model.accepted_drafts(r.rng, self.chain, r.alpha)
                    before = len(r.tokens)
                    self._advance(r, 1 + drafts, end, prefill=False, drafts=drafts)
                    produced += len(r.tokens) - before
                self.last_gen_throughput = produced / duration if duration > 0 else 0.0
            self._retire()
            if self._crash_at_step is not None and st.count >= self._crash_at_step:
                self._crash()

    def _advance(
        self, r: SimRequest, n: int, now: float, *, prefill: bool, drafts: int = 0
    ) -> None:
        if not prefill:
            r.verify_ct += 1
            r.accepted_drafts += drafts
            if self.chain > 0:
                while len(r.histogram) <= drafts:
                    r.histogram.append(0)
                r.histogram[drafts] += 1
            self.lifetime_verify += 1
        vocab = self.profile.vocab_size
        for _ in range(n):
            if len(r.tokens) >= r.max_new_tokens:
                break
            if not r.ignore_eos and r.token_rng.random() < self.profile.eos_probability:
                r.tokens.append(EOS_TOKEN_ID)
                r.finish = {"type": "stop", "matched": EOS_TOKEN_ID}
                break
            tok = r.token_rng.randrange(1, vocab)
            if r.corrupt_output and len(r.tokens) == model.CORRUPT_OUTPUT_AT:
                tok = tok % (vocab - 1) + 1  # any other token id
            r.tokens.append(tok)
            if r.stop and f"w{tok}" in r.stop:
                r.finish = {"type": "stop", "matched": f"w{tok}"}
                break
        if r.finish is None and len(r.tokens) >= r.max_new_tokens:
            r.finish = {"type": "length", "length": r.max_new_tokens}
        if r.first_emit is None:
            r.first_emit = now
        r.last_emit = now
        r.queue.put_nowait(Emission(len(r.tokens), r.finish))

    def _retire(self) -> None:
        keep: list[SimRequest] = []
        for r in self.running:
            if r.finish is not None:
                if r.verify_ct and not r.aborted:
                    self.lifetime_tokens += len(r.tokens)
            else:
                keep.append(r)
        self.running = keep

    def _maybe_schedule_crash(self) -> None:
        n = self.config.crash_after
        if n is not None and self._crash_at_step is None and self.admitted_total >= n:
            # A few decode steps later, so that streams are in flight when we die.
            self._crash_at_step = self.stats.count + 3

    def _crash(self) -> None:
        print(
            f"[sim] --sim-crash-after {self.config.crash_after}: killing myself (SIGKILL)",
            file=sys.stderr,
            flush=True,
        )
        os.kill(os.getpid(), signal.SIGKILL)
