"""Request bodies -> `GenerationRequest`: the three generation endpoints' parameters, checked.

Pure functions (no aiohttp): each raises `BadRequest` with the message SGLang's 400 would
carry. Defaults are SGLang's own per endpoint.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

DEFAULT_GENERATE_MAX_NEW = 128
DEFAULT_COMPLETIONS_MAX_TOKENS = 16
DEFAULT_CHAT_MAX_TOKENS = 2048


class BadRequest(Exception):
    """A request body SGLang would refuse (400)."""


class Endpoint(StrEnum):
    """The endpoint family a generation request came through (decides its wire format)."""

    GENERATE = "generate"
    COMPLETIONS = "completions"
    CHAT = "chat"


@dataclass(frozen=True)
class GenerationRequest:
    """What the simulator needs from a generation body, whatever the endpoint."""

    endpoint: Endpoint
    prompt_tokens: int
    max_new_tokens: int
    temperature: float
    ignore_eos: bool
    stop: tuple[str, ...]
    stream: bool
    include_usage: bool
    # A digest of the prompt's content: greedy outputs are a function of it.
    prompt_key: str = ""
    # The prompt's prefix-cache keys: one per whole block of PREFIX_BLOCK words, each a
    # digest of the prompt up to the block's end (equal keys: equal prefixes).
    prefix_blocks: tuple[str, ...] = ()


# Words of one prefix-cache block (SGLang's radix cache matches token by token; the simulator
# matches whole blocks of this many words, a word being a token).
PREFIX_BLOCK = 64


def prefix_blocks(content: Any) -> tuple[str, ...]:
    """Chained digests of each whole PREFIX_BLOCK-word block of a text prompt (a list of
    token ids: of its ids); () for anything else."""
    if isinstance(content, list) and len(content) == 1:
        content = content[0]
    if isinstance(content, str):
        words: list[Any] = content.split()
    elif isinstance(content, list) and all(isinstance(i, int) for i in content):
        words = content
    else:
        return ()
    chain = hashlib.blake2b(digest_size=8)
    keys: list[str] = []
    for start in range(0, len(words) - PREFIX_BLOCK + 1, PREFIX_BLOCK):
        chain.update(" ".join(map(str, words[start : start + PREFIX_BLOCK])).encode())
        keys.append(chain.hexdigest())
    return tuple(keys)


def parse_generation(endpoint: Endpoint, body: dict[str, Any]) -> GenerationRequest:
    """Parse a JSON object posted to `endpoint`; raises BadRequest."""
    if endpoint is Endpoint.GENERATE:
        sampling = body.get("sampling_params") or {}
        if not isinstance(sampling, dict):
            raise BadRequest("sampling_params must be an object")
        prompt = _count_prompt(body.get("text"), body.get("input_ids"))
        content: Any = [body.get("text"), body.get("input_ids")]
        cacheable: Any = (
            body.get("input_ids") if body.get("input_ids") is not None else body.get("text")
        )
        max_new = _int_field(sampling, "max_new_tokens", DEFAULT_GENERATE_MAX_NEW)
        params = sampling
    else:
        if endpoint is Endpoint.CHAT:
            prompt = _count_chat_prompt(body.get("messages"))
            content = body.get("messages")
            cacheable = " ".join(
                m["content"]
                for m in content
                if isinstance(m, dict) and isinstance(m.get("content"), str)
            )
            default_max = DEFAULT_CHAT_MAX_TOKENS
            max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        else:
            prompt = _count_prompt(body.get("prompt"), None)
            content = body.get("prompt")
            cacheable = content
            default_max = DEFAULT_COMPLETIONS_MAX_TOKENS
            max_tokens = body.get("max_tokens")
        max_new = _int_field({"max_tokens": max_tokens}, "max_tokens", default_max)
        params = body
    options = body.get("stream_options") or {}
    return GenerationRequest(
        endpoint=endpoint,
        prompt_tokens=prompt,
        max_new_tokens=max_new,
        temperature=_float_field(params, "temperature", 1.0),
        ignore_eos=bool(params.get("ignore_eos", False)),
        stop=_stops(params.get("stop")),
        stream=bool(body.get("stream", False)),
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
        prompt_key=_digest(content),
        prefix_blocks=prefix_blocks(cacheable),
    )


def _digest(content: Any) -> str:
    encoded = json.dumps(content, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()[:16]


def _count_prompt(text: Any, ids: Any) -> int:
    if ids is not None:
        if isinstance(ids, list) and ids and isinstance(ids[0], list):
            if len(ids) != 1:
                raise BadRequest("batched input_ids are not supported by the simulator")
            ids = ids[0]
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise BadRequest("input_ids must be a list of integers")
        return len(ids)
    if isinstance(text, list):
        if len(text) != 1:
            raise BadRequest("batched text is not supported by the simulator")
        text = text[0]
    if isinstance(text, list) and all(isinstance(i, int) for i in text):
        return len(text)
    if not isinstance(text, str):
        raise BadRequest("text (or input_ids) is required")
    return len(text.split())


def _count_chat_prompt(messages: Any) -> int:
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    words = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            words += len(content.split())
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    words += len(part["text"].split())
    return words


def _int_field(d: dict[str, Any], name: str, default: int) -> int:
    v = d.get(name)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise BadRequest(f"{name} must be a non-negative integer")
    return v


def _float_field(d: dict[str, Any], name: str, default: float) -> float:
    v = d.get(name)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise BadRequest(f"{name} must be a number")
    return float(v)


def _stops(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v.strip(),)
    if isinstance(v, list):
        return tuple(str(s).strip() for s in v)
    raise BadRequest("stop must be a string or a list of strings")
