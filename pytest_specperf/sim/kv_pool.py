"""The simulator's KV pool beyond admission: the prefix cache's hits and evictions, and the
retraction of running requests when the next decode step would overflow the pool (SGLang's
retract_decode). Plain functions over the scheduler's requests (sim/scheduler.py)."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import Protocol, TypeVar

from pytest_specperf.sim.parse import PREFIX_BLOCK


class Held(Protocol):
    """What of a request the pool reads (sim/scheduler.py's SimRequest)."""

    prompt_tokens: int
    max_new_tokens: int
    num_retractions: int
    cached_tokens: int
    prefix_blocks: tuple[str, ...]

    @property
    def tokens(self) -> Sequence[object]: ...

    @property
    def kv_held(self) -> int: ...


R = TypeVar("R", bound=Held)


def prefill_tokens(cache: OrderedDict[str, None] | None, r: Held, free_tokens: int) -> int:
    """Tokens this request's prefill computes: its prompt (and, after a retraction, its
    output so far) less the prefix found in the cache; the cache then holds its blocks, least
    recently used ones evicted until it fits ``free_tokens`` (the pool's free space)."""
    hit = 0
    if cache is not None:
        for key in r.prefix_blocks:
            if key not in cache:
                break
            cache.move_to_end(key)
            hit += 1
        for key in r.prefix_blocks[hit:]:
            cache[key] = None
        free_blocks = free_tokens // PREFIX_BLOCK
        while len(cache) > free_blocks:
            cache.popitem(last=False)
    # At least one token is always computed, as SGLang's radix cache leaves the last one.
    r.cached_tokens = min(hit * PREFIX_BLOCK, max(0, r.prompt_tokens - 1))
    return r.kv_held - r.cached_tokens


def retract(
    running: list[R], waiting: deque[R], capacity: int, step: int, decode_steps: int
) -> tuple[list[R], int, float | None]:
    """While the running requests' next ``step`` tokens would overflow the pool, retract in
    SGLang's order (retract_decode: the fewest output tokens, then the longest prompt, goes
    first) to the head of ``waiting``. The requests kept, how many were retracted, and the
    re-estimated new-token ratio (None when nothing overflowed)."""
    if sum(r.kv_held + step for r in running) <= capacity:
        return running, 0, None
    keep = sorted(running, key=lambda r: (len(r.tokens), -r.prompt_tokens), reverse=True)
    retracted: list[R] = []
    while len(keep) > 1 and sum(r.kv_held + step for r in keep) > capacity:
        r = keep.pop()
        r.num_retractions += 1
        retracted.append(r)
    kept = [r for r in running if r in keep]
    # Retracted requests go back first, the one retracted first at the head.
    for r in reversed(retracted):
        waiting.appendleft(r)
    decoded = sum(len(r.tokens) for r in kept)
    wanted = sum(r.max_new_tokens for r in kept)
    ratio = None
    if wanted:
        ratio = min(1.0, (decoded + decode_steps * len(kept)) / wanted)
    return kept, len(retracted), ratio
