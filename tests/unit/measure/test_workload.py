"""measure.workload: the three workloads, their prompt sets, bodies and comparability keys."""

from __future__ import annotations

import json

from pytest_specperf.measure.workload import (
    LONG_CONTEXT_WORDS,
    Workload,
    completions_body,
    generate_body,
    long_context_prompts,
    realistic_prompts,
    workload_preset,
)
from tests.support.local_http import Answer, Seen, response
from tests.unit.measure.test_loadgen import gen_chunk, run, sse


def test_greedy_synthetic_is_the_seed_benchmark() -> None:
    """The default preset is today's workload: one prompt, temperature 0, ignore_eos."""
    workload = workload_preset("greedy-synthetic")
    assert workload == Workload()
    assert workload.temperature == 0.0 and workload.ignore_eos and len(workload.prompts) == 1


def test_realistic_samples_and_respects_eos() -> None:
    """realistic: temperature 0.7, top_p 0.95, EOS respected, the shipped prompt set."""
    workload = workload_preset("realistic")
    assert (workload.temperature, workload.top_p, workload.ignore_eos) == (0.7, 0.95, False)
    assert workload.prompts == realistic_prompts()


def test_realistic_prompt_set_is_varied_in_length() -> None:
    """40-60 prompts, from a few words to thousands, no two alike."""
    prompts = realistic_prompts()
    words = sorted(len(p.split()) for p in prompts)
    assert 40 <= len(prompts) <= 60
    assert len(set(prompts)) == len(prompts)
    assert words[0] < 10 and words[-1] > 2000


def test_long_context_prompts_have_their_target_sizes() -> None:
    """One prompt per target size, each within a few words of it, built the same every time."""
    prompts = long_context_prompts()
    sizes = [len(p.split()) for p in prompts]
    assert len(prompts) == len(LONG_CONTEXT_WORDS)
    for size, target in zip(sizes, LONG_CONTEXT_WORDS, strict=True):
        assert target <= size <= target + 60
    long_context_prompts.cache_clear()
    assert long_context_prompts() == prompts


def test_explicit_option_overrides_the_preset() -> None:
    """An explicit --specperf-temperature wins over the workload's own."""
    assert workload_preset("realistic", temperature=0.0).temperature == 0.0
    assert workload_preset("realistic", temperature=None).temperature == 0.7


def test_bodies_carry_top_p_and_the_indexed_prompt() -> None:
    """Both endpoints send top_p when set and prompt i mod n of the set."""
    workload = Workload(prompts=("a b", "c d e"), top_p=0.9, temperature=0.7, ignore_eos=False)
    body = generate_body(workload, index=3)
    assert body["text"] == "c d e" and body["sampling_params"]["top_p"] == 0.9
    completions = completions_body(workload, "m", index=2)
    assert completions["prompt"] == "a b" and completions["top_p"] == 0.9
    assert "top_p" not in generate_body(Workload())["sampling_params"]


def test_requests_cycle_through_the_prompts_in_order() -> None:
    """Request i of a point sends prompt i mod n."""
    seen: list[str] = []

    def handler(request: Seen) -> Answer:
        seen.append(json.loads(request.body)["text"])
        return Answer(response(sse(gen_chunk(2, finish={"type": "length"}))))

    workload = Workload(prompts=("p0", "p1", "p2"))
    run(handler, workload=workload, concurrency=1, requests=5)
    assert seen == ["p0", "p1", "p2", "p0", "p1"]


def test_key_tells_workloads_and_prompt_sets_apart() -> None:
    """The baseline key names the workload, and editing one prompt changes it."""
    realistic = workload_preset("realistic")
    assert realistic.key()["workload"] == "realistic"
    assert realistic.key() != Workload().key()
    edited = workload_preset("realistic", prompts=(*realistic.prompts[:-1], "changed"))
    assert edited.key()["prompt_set"] != realistic.key()["prompt_set"]
