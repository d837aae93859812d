"""One streamed answer as it arrives: the SSE events' fields the load generator reads.

``Response`` is what one request's stream has delivered so far, filled in by the protocol of
measure/connection.py; the keys below are the ones its fast path finds by ``rfind`` (see there).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from pytest_specperf.measure.fields import StreamChunk
from pytest_specperf.results.schema import RequestRecord

_decode_chunk = msgspec.json.Decoder(StreamChunk).decode

DATA_PREFIX = b"data:"
_DONE = b"[DONE]"
TOKENS_KEY = b'"completion_tokens":'
FINISH_KEY = b'"finish_reason":'
TOKENS_KEY_LEN = len(TOKENS_KEY)
FINISH_KEY_LEN = len(FINISH_KEY)
_TOKENS_VALUE = re.compile(rb'"completion_tokens":[ ]*([0-9]+)[ ]*[,}]')
_FINISH_NULL = re.compile(rb'"finish_reason":[ ]*null[ ]*[,}]')


class RequestFailed(Exception):
    """One request's failure, with a short reason that becomes its error category."""


class Response:
    """What one request's stream has delivered so far, filled in by the protocol."""

    __slots__ = (
        "completions",
        "done",
        "finished",
        "last_tokens",
        "on_second_chunk",
        "record",
        "usage_seen",
    )

    def __init__(
        self,
        record: RequestRecord,
        completions: bool,
        on_second_chunk: Callable[[], None] | None = None,
    ) -> None:
        self.record = record
        self.completions = completions
        self.on_second_chunk = on_second_chunk
        self.last_tokens = 0
        self.finished = False
        self.done = False
        self.usage_seen = False

    def tokens(self, total: int, now: float) -> None:
        record = self.record
        new_tokens = total - self.last_tokens
        if new_tokens > 0:
            if record.first_chunk is None:
                record.first_chunk = now
            record.chunk_times.append(now)
            record.chunk_tokens.append(new_tokens)
            if len(record.chunk_times) == 2 and self.on_second_chunk is not None:
                self.on_second_chunk()
            self.last_tokens = total
        record.completion_tokens = total

    def event(self, event: bytes, now: float) -> None:
        if not event.startswith(DATA_PREFIX):
            return  # comments and other SSE fields carry nothing the suite reads
        if not self.completions and event.endswith(b"}"):
            at = event.rfind(TOKENS_KEY)
            if at >= 0:
                tokens = _TOKENS_VALUE.match(event, at)
                finish_at = event.rfind(FINISH_KEY)
                if tokens and finish_at >= 0 and _FINISH_NULL.match(event, finish_at):
                    self.tokens(int(tokens.group(1)), now)
                    return
        payload = event[len(DATA_PREFIX) :].strip()
        if payload == _DONE:
            self.done = True
            return
        try:
            chunk = _decode_chunk(payload)
        except msgspec.DecodeError as exc:
            raise RequestFailed("malformed chunk") from exc
        if chunk.error is not None:
            raise RequestFailed("error chunk")
        if self.completions:
            self._completions_chunk(chunk, now)
        else:
            self._generate_chunk(chunk, now)

    def _generate_chunk(self, chunk: StreamChunk, now: float) -> None:
        meta = chunk.meta_info
        if meta is None:
            raise RequestFailed("chunk without meta_info")
        self.tokens(meta.completion_tokens, now)
        record = self.record
        record.prompt_tokens = meta.prompt_tokens
        if meta.finish_reason is not None:
            self.finished = True
            record.spec_verify_ct = meta.spec_verify_ct
            record.server_e2e_s = meta.e2e_latency
            record.accept_histogram = meta.spec_correct_drafts_histogram
            record.num_retractions = meta.num_retractions
            record.cached_tokens = meta.cached_tokens

    def _completions_chunk(self, chunk: StreamChunk, now: float) -> None:
        record = self.record
        if chunk.usage is not None:
            record.completion_tokens = chunk.usage.completion_tokens
            record.prompt_tokens = chunk.usage.prompt_tokens
            self.usage_seen = True
        for choice in chunk.choices or ():
            if choice.text:
                if record.first_chunk is None:
                    record.first_chunk = now
                record.chunk_times.append(now)
                # OpenAI chunks carry no per-chunk count; spread after the usage chunk arrives.
                record.chunk_tokens.append(0)
                if len(record.chunk_times) == 2 and self.on_second_chunk is not None:
                    self.on_second_chunk()
            if choice.finish_reason is not None:
                self.finished = True

    def close(self) -> None:
        """The body ended: check it was whole and spread OpenAI usage over its chunks."""
        record = self.record
        if self.completions and self.usage_seen and record.chunk_tokens:
            share, extra = divmod(record.completion_tokens, len(record.chunk_tokens))
            record.chunk_tokens = [share + (i < extra) for i in range(len(record.chunk_tokens))]
        if not self.finished or (self.completions and not self.usage_seen):
            raise RequestFailed("truncated stream")
