"""The streaming response fields the load generator reads, as the structs it decodes into.

``pytest_specperf.measure.stream`` decodes chunks through :class:`StreamChunk` (the final
one, and any its fast path does not recognise; that path reads only ``completion_tokens``
and ``finish_reason`` of :class:`GenerateMeta`), so these structs are exactly what the code
reads; the field-name tuples below are derived from
them, and the contract tests hold those names against SGLang's source. The /server_info
fields live beside their reader in ``pytest_specperf.server.info``.
"""

from __future__ import annotations

from typing import Any

import msgspec


class GenerateMeta(msgspec.Struct):
    """A /generate chunk's ``meta_info`` (the speculation counters come on the last one)."""

    completion_tokens: int = 0
    prompt_tokens: int | None = None
    finish_reason: Any = None
    spec_verify_ct: int | None = None
    e2e_latency: float | None = None
    # Verify steps by correct drafts (SGLang 0.5.12 sends it as spec_accept_histogram too).
    spec_correct_drafts_histogram: list[int] | None = None
    # Times the scheduler retracted the request (KV pool full) and prompt tokens it found in
    # the prefix cache.
    num_retractions: int | None = None
    cached_tokens: int | None = None


class CompletionUsage(msgspec.Struct):
    """The OpenAI-compatible usage chunk's ``usage``."""

    completion_tokens: int = 0
    prompt_tokens: int | None = None


class CompletionChoice(msgspec.Struct):
    text: str | None = None
    finish_reason: str | None = None


class StreamChunk(msgspec.Struct):
    """Only the fields the client reads; msgspec skips the rest (cumulative text included)."""

    meta_info: GenerateMeta | None = None
    error: Any = None
    choices: list[CompletionChoice] | None = None
    usage: CompletionUsage | None = None


def _names(struct: type[msgspec.Struct]) -> tuple[str, ...]:
    return tuple(field.encode_name for field in msgspec.structs.fields(struct))


CHUNK_FIELDS: tuple[str, ...] = _names(StreamChunk)
META_INFO_FIELDS: tuple[str, ...] = _names(GenerateMeta)
USAGE_FIELDS: tuple[str, ...] = _names(CompletionUsage)
CHOICE_FIELDS: tuple[str, ...] = _names(CompletionChoice)
# Read from a whole (non-streaming) /generate answer: the greedy output ids (lossless.py).
GENERATE_RESPONSE_FIELDS: tuple[str, ...] = ("output_ids",)
