"""The request plan of one sweep, and the request bodies it sends.

The defaults are the seed's benchmark: 1000 output tokens, temperature 0, ignore_eos, closed
loop at C = 1, 4, 16, 32, 64 with N = 4 requests at C = 1 and 2C otherwise.

Three workloads (``--specperf-workload``), each a preset of the fields below:

- ``greedy-synthetic``: the seed's: one fixed prompt, temperature 0, ignore_eos (every request
  produces max_new_tokens). Repetitive greedy output inflates acceptance: an upper bound.
- ``realistic``: sampled (temperature 0.7, top_p 0.95), EOS respected (max_new_tokens is a
  cap), prompts from ``prompts/realistic.jsonl`` (coding, agentic and chat prompts written for
  this project, 1 to ~5,000 words), request i of a point sending prompt i mod 42.
- ``long-context``: the realistic sampling over prompts of 8k-24k words, each built
  deterministically from the shipped prompt file (no download); prefill and KV per request
  dominate.
- ``long-context-32k``: the same over two prompts, of 8k and 32k words: where KV capacity
  per depth bounds the running requests (a preset longer than the model's context is refused).
- ``trace`` (``--specperf-workload=trace:PATH``): the prompts and output lengths of a request
  trace (measure/trace.py), sampled like realistic with ``ignore_eos`` (each request produces
  its trace's output length), sent on the trace's schedule as one open-loop point per depth
  and in trace order by the closed-loop points.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import msgspec

from pytest_specperf.measure.trace import read_trace, trace_prompts

Endpoint = Literal["generate", "completions"]
WorkloadName = Literal["greedy-synthetic", "realistic", "long-context", "long-context-32k", "trace"]
WORKLOADS: tuple[WorkloadName, ...] = (
    "greedy-synthetic",
    "realistic",
    "long-context",
    "long-context-32k",
    "trace",
)
DEFAULT_WORKLOAD: WorkloadName = "greedy-synthetic"
REALISTIC_TEMPERATURE = 0.7
REALISTIC_TOP_P = 0.95
# Words of each long-context prompt (the simulator counts a word as a token; a real
# tokenizer gives more tokens than words).
LONG_CONTEXT_WORDS: tuple[int, ...] = (8_000, 12_000, 16_000, 24_000)
LONG_CONTEXT_32K_WORDS: tuple[int, ...] = (8_000, 32_000)
SEED_CONCURRENCY: tuple[int, ...] = (1, 4, 16, 32, 64)
# A fixed prompt keeps prefill identical run to run; its word count is its simulator token count.
_PROMPT = (
    "Write a detailed technical explanation of how speculative decoding with a multi token "
    "prediction head trades key value cache capacity for single request decode speed in a "
    "tensor parallel large language model server, and list the measurements an operator "
    "should track every night to catch a regression in either direction."
)


class Workload(msgspec.Struct, frozen=True, kw_only=True):
    """What one point sends: identical for every point of a sweep, recorded in results."""

    name: WorkloadName = DEFAULT_WORKLOAD
    max_new_tokens: int = 1000
    temperature: float = 0.0
    top_p: float | None = None
    ignore_eos: bool = True
    # Request i of a point sends prompts[i % len(prompts)].
    prompts: tuple[str, ...] = (_PROMPT,)
    endpoint: Endpoint = "generate"
    # Requests per point: N = single_stream_requests at C = 1, else requests_per_slot * C.
    single_stream_requests: int = 4
    requests_per_slot: int = 2
    fixed_requests: int | None = None
    # The measured loop runs at least this long (warm-up excluded), sending past N if needed.
    min_point_seconds: float = 0.0
    warmup_requests: int = 2
    # Output tokens of request i: output_lengths[i % len] (a trace's); empty: max_new_tokens.
    output_lengths: tuple[int, ...] = ()
    # A trace workload: the trace file's name and content digest, and its send schedule
    # (seconds after the first send, in replay order; measure/trace.py).
    trace: str | None = None
    trace_offsets_s: tuple[float, ...] = ()
    trace_speed: float = 1.0
    warmup_max_new_tokens: int = 32
    request_timeout_s: float = 600.0
    stall_timeout_s: float = 60.0

    def requests_for(self, concurrency: int) -> int:
        if self.fixed_requests is not None:
            return self.fixed_requests
        if concurrency == 1:
            return self.single_stream_requests
        return self.requests_per_slot * concurrency

    @property
    def prompt(self) -> str:
        """The first prompt (the only one of greedy-synthetic)."""
        return self.prompts[0]

    def prompt_for(self, index: int) -> str:
        return self.prompts[index % len(self.prompts)]

    def max_new_tokens_for(self, index: int) -> int:
        if self.output_lengths:
            return self.output_lengths[index % len(self.output_lengths)]
        return self.max_new_tokens

    @property
    def longest_request_tokens(self) -> int:
        """Prompt words plus output tokens of the longest request (a word is a token on the
        simulator and the smoke models' tokenizer; more on a real one)."""
        return max(
            len(self.prompt_for(i).split()) + self.max_new_tokens_for(i)
            for i in range(max(len(self.prompts), len(self.output_lengths), 1))
        )

    def key(self) -> dict[str, Any]:
        """The fields that make figures comparable: a baseline is only valid for these.

        ``prompt_words`` is the total over the prompt set and ``prompt_set`` a digest of its
        text: editing a prompt makes older baselines incomparable.
        """
        key: dict[str, Any] = {
            "workload": self.name,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "ignore_eos": self.ignore_eos,
            "endpoint": self.endpoint,
            "prompt_words": sum(len(p.split()) for p in self.prompts),
        }
        if self.top_p is not None:
            key["top_p"] = self.top_p
        if len(self.prompts) > 1:
            key["prompts"] = len(self.prompts)
            key["prompt_set"] = prompt_set_digest(self.prompts)
        if self.output_lengths:
            key["output_tokens"] = sum(self.output_lengths)
        if self.trace is not None:
            key["trace"] = self.trace
            key["trace_speed"] = self.trace_speed
        return key


def prompt_set_digest(prompts: tuple[str, ...]) -> str:
    return hashlib.sha256("\0".join(prompts).encode()).hexdigest()[:16]


@functools.cache
def realistic_prompts() -> tuple[str, ...]:
    """The shipped prompt set, in file order (see tools/make_realistic_prompts.py)."""
    text = resources.files(__package__).joinpath("prompts/realistic.jsonl").read_text("utf-8")
    return tuple(json.loads(line)["text"] for line in text.splitlines() if line.strip())


@functools.cache
def long_context_prompts(sizes: tuple[int, ...] = LONG_CONTEXT_WORDS) -> tuple[str, ...]:
    """One prompt per size (words): shipped prompts stacked as numbered documents
    (starting at a different one for each size) up to the size, then one question."""
    source = realistic_prompts()
    prompts: list[str] = []
    for index, words in enumerate(sizes):
        parts = ["Below are documents from our team's shared folder."]
        count = len(parts[0].split())
        position = index * 7
        while count < words:
            document = source[position % len(source)].split()
            document = document[: words - count]
            parts.append(f"Document {len(parts)}:\n" + " ".join(document))
            count += len(document) + 2
            position += 1
        parts.append(
            "Question: which documents describe a failure in production, and what did each "
            "propose as the next step? Answer with the document numbers first."
        )
        prompts.append("\n\n".join(parts))
    return tuple(prompts)


def workload_preset(name: WorkloadName, **fields: Any) -> Workload:
    """The named workload; ``fields`` override its preset (e.g. an explicit temperature)."""
    preset: dict[str, Any] = {}
    sampled = {"temperature": REALISTIC_TEMPERATURE, "top_p": REALISTIC_TOP_P, "ignore_eos": False}
    if name == "realistic":
        preset = {**sampled, "prompts": realistic_prompts()}
    elif name == "long-context":
        preset = {**sampled, "prompts": long_context_prompts()}
    elif name == "long-context-32k":
        preset = {**sampled, "prompts": long_context_prompts(LONG_CONTEXT_32K_WORDS)}
    elif name == "trace":
        preset = {**sampled, "ignore_eos": True}
    given = {field: value for field, value in fields.items() if value is not None}
    return Workload(name=name, **{**preset, **given})


def trace_workload(path: Path, speed: float = 1.0, **fields: Any) -> Workload:
    """The ``trace`` workload of the trace at ``path``: its prompts, output lengths and send
    schedule (at ``speed``: 2 sends twice as fast); ``fields`` as in workload_preset."""
    trace = read_trace(path)
    prompts, outputs = trace_prompts(trace)
    return workload_preset(
        "trace",
        **fields,
        prompts=prompts,
        output_lengths=outputs,
        trace=f"{trace.name}@{trace.digest}",
        trace_offsets_s=tuple(trace.offsets_s(speed)),
        trace_speed=speed,
    )


def _sampling(workload: Workload, max_new_tokens: int | None, index: int = 0) -> dict[str, Any]:
    params: dict[str, Any] = {
        "temperature": workload.temperature,
        "max_new_tokens": max_new_tokens or workload.max_new_tokens_for(index),
        "ignore_eos": workload.ignore_eos,
    }
    if workload.top_p is not None:
        params["top_p"] = workload.top_p
    return params


def generate_body(
    workload: Workload, *, max_new_tokens: int | None = None, index: int = 0
) -> dict[str, Any]:
    """A streaming SGLang native ``/generate`` request (prompt ``index`` of the set)."""
    return {
        "text": workload.prompt_for(index),
        "sampling_params": _sampling(workload, max_new_tokens, index),
        "stream": True,
    }


def completions_body(
    workload: Workload, model: str, *, max_new_tokens: int | None = None, index: int = 0
) -> dict[str, Any]:
    """A streaming OpenAI-compatible ``/v1/completions`` request with a usage chunk."""
    params = _sampling(workload, max_new_tokens, index)
    body: dict[str, Any] = {
        "model": model,
        "prompt": workload.prompt_for(index),
        "max_tokens": params.pop("max_new_tokens"),
        **params,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return body


def request_body(
    workload: Workload, model: str, *, max_new_tokens: int | None = None, index: int = 0
) -> dict[str, Any]:
    if workload.endpoint == "completions":
        return completions_body(workload, model, max_new_tokens=max_new_tokens, index=index)
    return generate_body(workload, max_new_tokens=max_new_tokens, index=index)


def endpoint_path(workload: Workload) -> str:
    return "/v1/completions" if workload.endpoint == "completions" else "/generate"
