"""The request plan of one sweep, and the request bodies it sends.

The defaults are the seed's benchmark: 1000 output tokens, temperature 0, ignore_eos, closed
loop at C = 1, 4, 16, 32, 64 with N = 4 requests at C = 1 and 2C otherwise.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Endpoint = Literal["generate", "completions"]
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

    max_new_tokens: int = 1000
    temperature: float = 0.0
    ignore_eos: bool = True
    prompt: str = _PROMPT
    endpoint: Endpoint = "generate"
    # Requests per point: N = single_stream_requests at C = 1, else requests_per_slot * C.
    single_stream_requests: int = 4
    requests_per_slot: int = 2
    fixed_requests: int | None = None
    warmup_requests: int = 2
    warmup_max_new_tokens: int = 32
    request_timeout_s: float = 600.0
    stall_timeout_s: float = 60.0

    def requests_for(self, concurrency: int) -> int:
        if self.fixed_requests is not None:
            return self.fixed_requests
        if concurrency == 1:
            return self.single_stream_requests
        return self.requests_per_slot * concurrency

    def key(self) -> dict[str, Any]:
        """The fields that make figures comparable: a baseline is only valid for these."""
        return {
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "ignore_eos": self.ignore_eos,
            "endpoint": self.endpoint,
            "prompt_words": len(self.prompt.split()),
        }


def generate_body(workload: Workload, *, max_new_tokens: int | None = None) -> dict[str, Any]:
    """A streaming SGLang native ``/generate`` request."""
    return {
        "text": workload.prompt,
        "sampling_params": {
            "temperature": workload.temperature,
            "max_new_tokens": max_new_tokens or workload.max_new_tokens,
            "ignore_eos": workload.ignore_eos,
        },
        "stream": True,
    }


def completions_body(
    workload: Workload, model: str, *, max_new_tokens: int | None = None
) -> dict[str, Any]:
    """A streaming OpenAI-compatible ``/v1/completions`` request with a usage chunk."""
    return {
        "model": model,
        "prompt": workload.prompt,
        "max_tokens": max_new_tokens or workload.max_new_tokens,
        "temperature": workload.temperature,
        "ignore_eos": workload.ignore_eos,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def request_body(
    workload: Workload, model: str, *, max_new_tokens: int | None = None
) -> dict[str, Any]:
    if workload.endpoint == "completions":
        return completions_body(workload, model, max_new_tokens=max_new_tokens)
    return generate_body(workload, max_new_tokens=max_new_tokens)


def endpoint_path(workload: Workload) -> str:
    return "/v1/completions" if workload.endpoint == "completions" else "/generate"
