"""Scheduler without HTTP: admission, KV budget, token accounting, abort."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

import pytest

from pytest_specperf.sim.args import parse_args
from pytest_specperf.sim.model import CORRUPT_OUTPUT_AT
from pytest_specperf.sim.scheduler import Emission, Scheduler, SimRequest


def make(argv: list[str], **over: object) -> Scheduler:
    cfg = parse_args(["--speculative-algorithm", "EAGLE", "--sim-speedup", "200", *argv])
    if over:
        cfg = dataclasses.replace(cfg, **over)  # type: ignore[arg-type]
    return Scheduler(cfg)


async def drain(req: SimRequest) -> list[Emission]:
    out: list[Emission] = []
    while True:
        em = await req.queue.get()
        out.append(em)
        if em.finish is not None:
            return out


async def peak_running(s: Scheduler, reqs: list[SimRequest], holds: Callable[[], bool]) -> int:
    """Submit ``reqs`` and drain them, checking ``holds()`` as they run; the most running."""
    for r in reqs:
        s.submit(r)
    await asyncio.sleep(0)
    peak = 0
    done = asyncio.gather(*(drain(r) for r in reqs))
    while not done.done():
        peak = max(peak, len(s.running))
        assert holds()
        await asyncio.sleep(0.0005)
    await done
    return peak


def test_requests_beyond_max_running_wait_fifo() -> None:
    async def go() -> None:
        s = make(["--max-running-requests", "2"])
        s.start()
        reqs = [s.new_request(4, 40, 0.0, True) for _ in range(5)]
        peak = await peak_running(s, reqs, lambda: len(s.running) <= 2)
        await s.stop()
        admitted = [r.admitted for r in reqs]
        assert all(a is not None for a in admitted)
        assert admitted == sorted(admitted)  # type: ignore[type-var]
        assert peak == 2
        assert s.kv_used == 0

    asyncio.run(go())


def test_kv_budget_limits_admission() -> None:
    """Admission reserves what a request is expected to write (SGLang's new-token ratio,
    0.7 of 100 at first): three of 10 + 70 fit in 250, a fourth does not."""

    async def go() -> None:
        s = make([], max_total_num_tokens=250)
        s.start()
        reqs = [s.new_request(10, 100, 0.0, True) for _ in range(4)]  # 110 each at most
        seen = await peak_running(s, reqs, lambda: s.kv_used <= 250)
        await s.stop()
        assert seen == 3
        assert not s.fits_ever(s.new_request(200, 100, 0.0, True))

    asyncio.run(go())


def test_a_full_pool_retracts_the_newest_output_back_to_the_queue() -> None:
    """Three requests admitted at 10 + 70 grow to 110 each: the pool of 250 overflows, the
    scheduler retracts (each request still finishes whole), counts it per request and never
    lets the running requests hold more than the pool."""

    async def go() -> None:
        s = make([], max_total_num_tokens=250)
        s.start()
        reqs = [s.new_request(10, 100, 0.0, True) for _ in range(3)]
        await peak_running(s, reqs, lambda: s.kv_used <= 250)
        await s.stop()
        assert all(len(r.tokens) == 100 for r in reqs)
        assert sum(r.num_retractions for r in reqs) == s.retractions_total >= 1

    asyncio.run(go())


def test_a_repeated_prefix_is_not_prefilled_again() -> None:
    async def go() -> None:
        s = make([])
        s.start()
        blocks = ("a", "b", "c")
        first = s.new_request(200, 4, 0.0, True, prefix_blocks=blocks)
        s.submit(first)
        await drain(first)
        again = s.new_request(200, 4, 0.0, True, prefix_blocks=(*blocks[:2], "d"))
        s.submit(again)
        await drain(again)
        await s.stop()
        assert first.cached_tokens == 0
        assert again.cached_tokens == 2 * 64

    asyncio.run(go())


def test_disable_radix_cache_caches_nothing() -> None:
    async def go() -> None:
        s = make(["--disable-radix-cache"])
        s.start()
        for _ in range(2):
            r = s.new_request(200, 4, 0.0, True, prefix_blocks=("a", "b"))
            s.submit(r)
            await drain(r)
        await s.stop()
        assert r.cached_tokens == 0

    asyncio.run(go())


def test_chunks_carry_several_tokens_and_counts_are_exact() -> None:
    async def go() -> None:
        s = make([])
        s.start()
        r = s.new_request(4, 1000, 0.0, True)
        s.submit(r)
        ems = await drain(r)
        await s.stop()
        counts = [e.count for e in ems]
        assert counts[0] == 1  # prefill emits the first token
        assert counts[-1] == 1000 == len(r.tokens)
        assert counts == sorted(counts)
        assert len(ems) < 300  # ~4 tokens per decode step
        assert r.verify_ct == len(ems) - 1
        assert ems[-1].finish == {"type": "length", "length": 1000}
        assert r.accepted_drafts == sum(i * n for i, n in enumerate(r.histogram))
        assert 3.8 < 1000 / r.verify_ct <= 4.0

    asyncio.run(go())


def test_without_ignore_eos_requests_may_stop_early() -> None:
    async def go() -> None:
        s = make([])
        s.start()
        reqs = [s.new_request(4, 3000, 0.0, False) for _ in range(5)]
        for r in reqs:
            s.submit(r)
        await asyncio.gather(*(drain(r) for r in reqs))
        await s.stop()
        assert any(r.finish is not None and r.finish["type"] == "stop" for r in reqs)
        for r in reqs:
            assert r.finish is not None and len(r.tokens) <= 3000

    asyncio.run(go())


def test_no_speculation_means_one_token_per_step() -> None:
    async def go() -> None:
        cfg = parse_args(["--sim-speedup", "200"])
        s = Scheduler(cfg)
        s.start()
        r = s.new_request(4, 50, 0.0, True)
        s.submit(r)
        ems = await drain(r)
        await s.stop()
        assert [e.count for e in ems] == list(range(1, 51))

    asyncio.run(go())


def test_abort_frees_the_slot() -> None:
    async def go() -> None:
        s = make(["--max-running-requests", "1"])
        s.start()
        a = s.new_request(4, 100000 // 10, 0.0, True)
        b = s.new_request(4, 20, 0.0, True)
        s.submit(a)
        s.submit(b)
        await a.queue.get()
        s.abort(a)
        await drain(b)
        await s.stop()
        assert a.aborted and s.kv_used == 0 and len(b.tokens) == 20

    asyncio.run(go())


def test_noise_is_one_factor_per_boot_reproducible_by_noise_seed() -> None:
    async def factor(noise_seed: str) -> float:
        return make(["--sim-noise", "0.1", "--sim-noise-seed", noise_seed]).noise_factor

    a = asyncio.run(factor("1"))
    assert a == asyncio.run(factor("1"))
    assert a != asyncio.run(factor("2"))
    assert asyncio.run(make_default_factor()) == 1.0


def test_boots_of_one_sim_seed_draw_different_noise_by_default() -> None:
    async def factor() -> float:
        return make(["--sim-noise", "0.1", "--sim-seed", "1"]).noise_factor

    assert len({asyncio.run(factor()) for _ in range(3)}) == 3


async def make_default_factor() -> float:
    return make([]).noise_factor


def test_jitter_varies_steps_but_keeps_the_mean() -> None:
    async def go() -> list[float]:
        s = make(["--sim-jitter", "0.05", "--sim-speedup", "1"])
        return [s._scale(20.0) for _ in range(4000)]

    xs = asyncio.run(go())
    mean = sum(xs) / len(xs)
    assert 0.0195 < mean < 0.0205 and len(set(xs)) > 100


def test_speedup_and_slowdown_scale_step_times() -> None:
    async def go(argv: list[str]) -> float:
        return make(argv)._scale(20.0)

    assert asyncio.run(go(["--sim-speedup", "4"])) == pytest.approx(0.005)
    assert asyncio.run(go(["--sim-speedup", "1", "--sim-slowdown", "0.2"])) == pytest.approx(0.025)


def test_acceptance_override() -> None:
    async def go() -> float:
        s = make(["--sim-acceptance", "0.5"])
        return s.new_request(4, 10, 0.7, True).alpha

    assert asyncio.run(go()) == 0.5


def _greedy_tokens(argv: list[str], prompt_key: str, n: int = 40) -> tuple[list[int], list[int]]:
    """(output tokens, acceptance histogram) of one greedy request on a fresh scheduler."""

    async def go() -> tuple[list[int], list[int]]:
        cfg = parse_args(["--sim-speedup", "200", *argv])
        s = Scheduler(cfg)
        s.start()
        # A request before it moves the per-request seeds: outputs must not depend on it.
        s.submit(s.new_request(4, 3, 0.0, True, prompt_key="other"))
        req = s.new_request(4, n, 0.0, True, prompt_key=prompt_key)
        s.submit(req)
        await drain(req)
        await s.stop()
        return list(req.tokens), list(req.histogram)

    return asyncio.run(go())


SPEC_AT = {
    0: [],
    1: ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"],
    3: ["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "4"],
}  # fmt: skip


def test_greedy_output_depends_on_the_prompt_alone_at_every_depth() -> None:
    """Temperature 0: the same prompt gives the same ids with or without speculation."""
    outputs = {depth: _greedy_tokens(argv, "prompt-a")[0] for depth, argv in SPEC_AT.items()}
    assert outputs[0] == outputs[1] == outputs[3]
    assert _greedy_tokens([], "prompt-b")[0] != outputs[0]


def test_histogram_only_with_speculation() -> None:
    """The acceptance histogram has one count per verify step, only when speculating."""
    _, histogram = _greedy_tokens(SPEC_AT[3], "p")
    assert len(histogram) <= 4 and sum(histogram) > 0
    assert _greedy_tokens([], "p")[1] == []


def test_corrupt_output_alters_one_token_of_the_named_depth_only() -> None:
    """--sim-corrupt-output 3 changes token 16 of depth 3's greedy output; depth 1 is intact."""
    clean = _greedy_tokens([], "p")[0]
    corrupted = _greedy_tokens([*SPEC_AT[3], "--sim-corrupt-output", "3"], "p")[0]
    untouched = _greedy_tokens([*SPEC_AT[1], "--sim-corrupt-output", "3"], "p")[0]
    differing = [i for i, (a, b) in enumerate(zip(clean, corrupted, strict=True)) if a != b]
    assert differing == [CORRUPT_OUTPUT_AT]
    assert untouched == clean


async def _together(s: Scheduler, count: int, new_tokens: int) -> float:
    """Seconds ``count`` identical requests take together on a started scheduler."""
    reqs = [s.new_request(60, new_tokens, 0.0, True) for _ in range(count)]
    begun = time.monotonic()
    for r in reqs:
        s.submit(r)
    await asyncio.gather(*(drain(r) for r in reqs))
    return time.monotonic() - begun


def test_cold_shape_slows_the_first_step_of_each_shape_only() -> None:
    async def go() -> tuple[float, float, list[int]]:
        # 20,000 model ms at speedup 200: 0.1 s per shape not run before.
        s = make(["--sim-cold-shape-ms", "20000"])
        s.start()
        first = await _together(s, 2, 30)
        counts = [s.stats.cold_count]
        second = await _together(s, 2, 30)
        counts.append(s.stats.cold_count)
        await _together(s, 2, 300)  # longer sequences: new length buckets
        counts.append(s.stats.cold_count)
        await s.stop()
        return first, second, counts

    first, second, (after_first, after_second, after_longer) = asyncio.run(go())
    assert after_first >= 2  # a prefill and at least one decode shape
    assert after_second == after_first  # the same shapes again: all warm
    assert after_longer > after_second
    assert first > second + 0.15


def test_without_cold_shapes_no_step_is_cold() -> None:
    async def go() -> Scheduler:
        s = make([])
        s.start()
        await _together(s, 2, 30)
        await s.stop()
        return s

    s = asyncio.run(go())
    assert s.stats.cold_count == 0 and not s.warm_shapes


def _cpu_share_serving_one_request(argv: list[str]) -> tuple[float, float]:
    """The scheduler's CPU seconds over wall seconds while it serves one request, and what a
    plain spinning loop gets of the CPU over as long, measured right after: on a shared
    machine a process that wants the whole core gets less than all of it."""

    async def go() -> tuple[float, float]:
        s = make(["--sim-speedup", "1", *argv])
        s.start()
        request = s.new_request(4, 40, 0.0, True)
        wall, cpu = time.perf_counter(), time.process_time()
        s.submit(request)
        await drain(request)
        elapsed = time.perf_counter() - wall
        share = (time.process_time() - cpu) / elapsed
        await s.stop()
        spin_wall, spin_cpu = time.perf_counter(), time.process_time()
        while time.perf_counter() - spin_wall < elapsed:
            pass
        spin = (time.process_time() - spin_cpu) / (time.perf_counter() - spin_wall)
        return share, spin

    return asyncio.run(go())


def test_a_cpu_bound_scheduler_spends_its_steps_on_the_cpu() -> None:
    # Against what a spinning loop gets of the same machine at that moment: a scheduler that
    # sleeps through steps of tens of milliseconds uses almost none of it, a CPU-bound one
    # most of it (a shared CI core gives neither the whole core).
    sleeping, spin = _cpu_share_serving_one_request([])
    assert sleeping < 0.2 * spin
    bound, spin = _cpu_share_serving_one_request(["--sim-cpu-bound"])
    assert bound > 0.6 * spin
