"""Response bodies: SSE chunks, whole responses and `meta_info`, per endpoint family.

`Renderer` turns a request's progress (`Emission`s) into the bytes SGLang would send.
New `meta_info` fields go in `meta_info` (every chunk) or `speculative_meta` (final chunk
of a speculative request).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pytest_specperf.sim.config import SimConfig
from pytest_specperf.sim.parse import Endpoint
from pytest_specperf.sim.scheduler import EOS_TOKEN_ID, Emission, SimRequest
from pytest_specperf.sim.wire import ENCODER, sse

Finish = dict[str, Any] | None


@cache
def _word_table(vocab: int) -> list[str]:
    """Each token id's text (EOS renders as nothing)."""
    return ["" if i == EOS_TOKEN_ID else f" w{i}" for i in range(vocab)]


@cache
def _byte_tables(vocab: int) -> tuple[list[bytes], list[bytes]]:
    """JSON-ready bytes of each token's text (no escaping needed) and id."""
    words = [b"" if i == EOS_TOKEN_ID else b" w%d" % i for i in range(vocab)]
    return words, [b"%d" % i for i in range(vocab)]


def openai_finish_reason(finish: Finish) -> str | None:
    if finish is None:
        return None
    return str(finish["type"])


def matched_stop(finish: Finish) -> Any:
    if finish is None or finish.get("type") != "stop":
        return None
    return finish.get("matched")


def meta_info(
    req: SimRequest, config: SimConfig, count: int, finish: Finish, *, first: bool, final: bool
) -> dict[str, Any]:
    """/generate's `meta_info` after `count` tokens."""
    meta: dict[str, Any] = {
        "id": req.rid,
        "finish_reason": finish,
        "prompt_tokens": req.prompt_tokens,
        "weight_version": "default",
        "num_retractions": req.num_retractions,
        "reasoning_tokens": 0,
        "completion_tokens": count,
        "cached_tokens": req.cached_tokens,
        "cached_tokens_details": None,
        "dp_rank": None,
    }
    if first:
        meta["response_sent_to_client_ts"] = time.time()
    if final:
        meta["e2e_latency"] = time.monotonic() - req.created
        if config.algorithm is not None and req.verify_ct > 0:
            meta.update(speculative_meta(req, config, count))
    return meta


def speculative_meta(req: SimRequest, config: SimConfig, count: int) -> dict[str, Any]:
    """The `spec_*` fields of a finished speculative request (both SGLang spellings)."""
    proposed = req.verify_ct * max(1, (config.num_draft_tokens or 2) - 1)
    histogram = list(req.histogram) or [0]
    return {
        "spec_accept_rate": req.accepted_drafts / proposed,
        "spec_accept_length": count / req.verify_ct,
        "spec_num_correct_drafts": req.accepted_drafts,
        "spec_num_proposed_drafts": proposed,
        "spec_verify_ct": req.verify_ct,
        "spec_accepted_drafts": req.accepted_drafts,
        "spec_proposed_drafts": proposed,
        "spec_correct_drafts_histogram": histogram,
        "spec_accept_histogram": histogram,
    }


@dataclass
class Renderer:
    """Turns one request's progress into chunks (or a whole body) for its endpoint."""

    endpoint: Endpoint
    config: SimConfig
    req: SimRequest
    created: int
    sent: int = 0
    first: bool = True
    # /generate's cumulative text and output_ids, kept as growing JSON byte buffers.
    text_buf: bytearray = field(default_factory=lambda: bytearray(b'"'))
    ids_buf: bytearray = field(default_factory=lambda: bytearray(b"["))

    def chunk(self, em: Emission) -> bytes:
        if self.endpoint is Endpoint.GENERATE:
            data = self._generate_chunk(em.count, em.finish)
        else:
            data = sse(self._openai_chunk(em.count, em.finish))
        self.sent = em.count
        self.first = False
        return data

    def usage_chunk(self) -> bytes:
        return sse(
            {
                "id": self.req.rid,
                "object": self._chunk_object(),
                "created": self.created,
                "model": self.config.served_model_name,
                "choices": [],
                "usage": self.usage(),
            }
        )

    def usage(self) -> dict[str, Any]:
        n = len(self.req.tokens)
        p = self.req.prompt_tokens
        return {
            "prompt_tokens": p,
            "total_tokens": p + n,
            "completion_tokens": n,
            "reasoning_tokens": 0,
        }

    def whole(self) -> dict[str, Any]:
        """The non-streaming response body of a finished request."""
        req = self.req
        count = len(req.tokens)
        text = self._new_text(count)
        if self.endpoint is Endpoint.GENERATE:
            return {
                "text": text,
                "output_ids": list(req.tokens),
                "meta_info": meta_info(
                    req, self.config, count, req.finish, first=self.first, final=True
                ),
            }
        choice: dict[str, Any] = {"index": 0}
        if self.endpoint is Endpoint.COMPLETIONS:
            choice["text"] = text
            obj = "text_completion"
        else:
            choice["message"] = {"role": "assistant", "content": text, "reasoning_content": None}
            obj = "chat.completion"
        choice.update(
            logprobs=None,
            finish_reason=openai_finish_reason(req.finish),
            matched_stop=matched_stop(req.finish),
        )
        return {
            "id": req.rid,
            "object": obj,
            "created": self.created,
            "model": self.config.served_model_name,
            "choices": [choice],
            "usage": self.usage(),
            "metadata": None,
        }

    def _chunk_object(self) -> str:
        if self.endpoint is Endpoint.COMPLETIONS:
            return "text_completion"
        return "chat.completion.chunk"

    def _new_text(self, count: int) -> str:
        words = _word_table(self.config.profile.vocab_size)
        return "".join(words[t] for t in self.req.tokens[self.sent : count])

    def _openai_chunk(self, count: int, finish: Finish) -> dict[str, Any]:
        delta = self._new_text(count)
        choice: dict[str, Any] = {"index": 0}
        if self.endpoint is Endpoint.COMPLETIONS:
            choice["text"] = delta
        else:
            choice["delta"] = {
                "role": "assistant" if self.first else None,
                "content": delta,
                "reasoning_content": None,
            }
        choice.update(
            logprobs=None,
            finish_reason=openai_finish_reason(finish),
            matched_stop=matched_stop(finish),
        )
        return {
            "id": self.req.rid,
            "object": self._chunk_object(),
            "created": self.created,
            "model": self.config.served_model_name,
            "choices": [choice],
            "usage": None,
        }

    def _generate_chunk(self, count: int, finish: Finish) -> bytes:
        """O(new tokens) work per chunk besides one copy, instead of re-encoding the
        whole history."""
        words, ids = _byte_tables(self.config.profile.vocab_size)
        text_buf, ids_buf = self.text_buf, self.ids_buf
        for t in self.req.tokens[self.sent : count]:
            text_buf += words[t]
            if len(ids_buf) > 1:
                ids_buf += b","
            ids_buf += ids[t]
        meta = ENCODER.encode(
            meta_info(
                self.req, self.config, count, finish, first=self.first, final=finish is not None
            )
        )
        return b"".join(
            (
                b'data: {"text":',
                text_buf,
                b'","output_ids":',
                ids_buf,
                b'],"meta_info":',
                meta,
                b"}\n\n",
            )
        )
