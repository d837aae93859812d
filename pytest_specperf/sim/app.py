"""aiohttp application: SGLang's HTTP API in front of the simulated scheduler.

Handlers only translate: parse a body, create a `SimRequest`, submit it, then drain its
queue into `data: <json>\\n\\n` chunks (coalescing what piled up while the client was slow,
as SGLang's tokenizer manager does). Faults are injected here, per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import msgspec
from aiohttp import web

from pytest_specperf.sim.args import SIM_VERSION, SimConfig
from pytest_specperf.sim.scheduler import EOS_TOKEN_ID, Emission, Scheduler, SimRequest
from pytest_specperf.sim.sglang_defaults import INTERNAL_STATE_EXTRA_DEFAULTS

_ENC = msgspec.json.Encoder()
_DONE = b"data: [DONE]\n\n"
_EXEMPT_PREFIXES = ("/health", "/ready", "/metrics")
MID_STREAM_FAULTS = ("malformed", "error-chunk", "reset", "truncate", "stall")
DEFAULT_GENERATE_MAX_NEW = 128
DEFAULT_COMPLETIONS_MAX_TOKENS = 16
DEFAULT_CHAT_MAX_TOKENS = 2048

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class BadRequest(Exception):
    """A request body SGLang would refuse (400)."""


@dataclass
class SimState:
    """The server's mutable state, shared by handlers."""

    config: SimConfig
    scheduler: Scheduler
    ready: bool = False
    gen_index: int = 0
    started_wall: float = 0.0

    def words(self) -> list[str]:
        return _WORDS_CACHE.setdefault(
            self.config.profile.vocab_size,
            ["" if i == EOS_TOKEN_ID else f" w{i}" for i in range(self.config.profile.vocab_size)],
        )

    def pick_fault(self) -> str | None:
        """Deterministic per arrival index: same seed, same requests hit."""
        idx = self.gen_index
        self.gen_index += 1
        cfg = self.config
        if cfg.fault is None:
            return None
        draw = random.Random(f"{cfg.seed}:fault:{idx}").random()
        return cfg.fault if draw < cfg.fault_rate else None


_WORDS_CACHE: dict[int, list[str]] = {}


@cache
def _byte_tables(vocab: int) -> tuple[list[bytes], list[bytes]]:
    """JSON-ready bytes of each token's text (no escaping needed) and id."""
    words = [b"" if i == EOS_TOKEN_ID else b" w%d" % i for i in range(vocab)]
    return words, [b"%d" % i for i in range(vocab)]


STATE_KEY = web.AppKey("sim_state", SimState)


def _state(request: web.Request) -> SimState:
    return request.app[STATE_KEY]


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(body=_ENC.encode(obj), status=status, content_type="application/json")


def _error(message: str, status: int, kind: str = "BadRequestError") -> web.Response:
    return _json(
        {"object": "error", "message": message, "type": kind, "param": None, "code": status},
        status,
    )


# ---------------------------------------------------------------------------------------
# Middleware: API key (SGLang exempts /health*, /ready*, /metrics*)
# ---------------------------------------------------------------------------------------


@web.middleware
async def api_key_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    key = _state(request).config.api_key
    if key and request.method != "OPTIONS" and not request.path.startswith(_EXEMPT_PREFIXES):
        auth = request.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or token != key:
            return _json({"error": "Unauthorized"}, 401)
    return await handler(request)


# ---------------------------------------------------------------------------------------
# Health, info, admin
# ---------------------------------------------------------------------------------------


async def health(request: web.Request) -> web.Response:
    return web.Response(status=200 if _state(request).ready else 503)


async def model_info(request: web.Request) -> web.Response:
    cfg = _state(request).config
    sa = cfg.server_args
    return _json(
        {
            "model_path": sa["model_path"],
            "tokenizer_path": sa["tokenizer_path"],
            "is_generation": True,
            "preferred_sampling_params": None,
            "weight_version": "default",
            "has_image_understanding": False,
            "has_audio_understanding": False,
            "model_type": cfg.profile.model_type,
            "architectures": list(cfg.profile.architectures),
        }
    )


def sim_section(st: SimState) -> dict[str, Any]:
    cfg = st.config
    return {
        "profile": cfg.profile.name,
        "hardware": cfg.profile.hardware,
        "speedup": cfg.speedup,
        "seed": cfg.seed,
        "noise": cfg.noise,
        "noise_factor": st.scheduler.noise_factor,
        "jitter": cfg.jitter,
        "slowdown": cfg.slowdown,
        "acceptance": cfg.acceptance,
        "boot_delay": cfg.boot_delay,
        "crash_after": cfg.crash_after,
        "hang_at_boot": cfg.hang_at_boot,
        "fault": cfg.fault,
        "fault_rate": cfg.fault_rate if cfg.fault else 0.0,
        "error_status": cfg.error_status,
        "forward_sleep_time": st.scheduler.forward_sleep_s or None,
        "version": SIM_VERSION,
    }


def server_info_body(st: SimState) -> dict[str, Any]:
    cfg = st.config
    sched = st.scheduler
    prof = cfg.profile
    internal: dict[str, Any] = dict(cfg.server_args)
    internal.update(INTERNAL_STATE_EXTRA_DEFAULTS)
    internal.update(
        context_length=cfg.context_length,
        effective_max_running_requests_per_dp=cfg.max_running_requests,
        last_gen_throughput=sched.last_gen_throughput,
        memory_usage={
            "graph": prof.graph_gb,
            "kvcache": prof.kvcache_gb,
            "token_capacity": cfg.max_total_num_tokens,
            "weight": prof.weight_gb,
        },
    )
    accept = sched.avg_accept_length
    if cfg.algorithm is not None and accept is not None:
        internal["avg_spec_accept_length"] = accept
    body: dict[str, Any] = dict(cfg.server_args)
    body.update(
        internal_states=[dict(sorted(internal.items()))],
        max_req_input_len=cfg.max_req_input_len,
        max_total_num_tokens=cfg.max_total_num_tokens,
        status="ready" if st.ready else "starting",
        version=SIM_VERSION,
    )
    body = dict(sorted(body.items()))
    body["sim"] = sim_section(st)
    return body


async def server_info(request: web.Request) -> web.Response:
    return _json(server_info_body(_state(request)))


async def v1_models(request: web.Request) -> web.Response:
    cfg = _state(request).config
    name = cfg.served_model_name
    return _json(
        {
            "object": "list",
            "data": [
                {
                    "id": name,
                    "object": "model",
                    "created": int(_state(request).started_wall),
                    "owned_by": "sglang",
                    "root": name,
                    "parent": None,
                    "max_model_len": cfg.context_length,
                }
            ],
        }
    )


async def flush_cache(request: web.Request) -> web.Response:
    sched = _state(request).scheduler
    try:
        timeout = float(request.query.get("timeout", "0") or 0)
    except ValueError:
        return _error("timeout must be a number", 400)
    deadline = time.monotonic() + max(0.0, timeout)
    while sched.busy and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    if sched.busy:
        return web.Response(
            status=400,
            text="Flush cache failed: there are running or waiting requests.\n",
        )
    return web.Response(
        status=200,
        text="Cache flushed.\nPlease check backend logs for more details. (When there are "
        "running or waiting requests, the operation will not be performed.)\n",
    )


async def slow_down(request: web.Request) -> web.Response:
    body: Any = None
    if request.can_read_body:
        try:
            body = await request.json()
        except ValueError:
            return _error("body must be JSON", 400)
    value = body.get("forward_sleep_time") if isinstance(body, dict) else None
    if value is not None and (not isinstance(value, int | float) or value < 0):
        return _error("forward_sleep_time must be a non-negative number or null", 400)
    # SGLang sleeps this many real seconds per forward pass; the simulator divides it by
    # --sim-speedup like every other simulated time.
    _state(request).scheduler.forward_sleep_s = float(value or 0.0)
    return _json(None)


async def ground_truth(request: web.Request) -> web.Response:
    return _json(_state(request).scheduler.ground_truth())


async def reset_ground_truth(request: web.Request) -> web.Response:
    _state(request).scheduler.reset_ground_truth()
    return _json({"success": True})


# ---------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------


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


async def _read_json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("request body must be JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


@dataclass
class _Render:
    """Turns the request's state into chunks for one endpoint family."""

    kind: str  # "generate" | "completions" | "chat"
    st: SimState
    req: SimRequest
    rid: str
    created: int
    include_usage: bool
    sent: int = 0
    first: bool = True
    text_buf: bytearray = field(default_factory=lambda: bytearray(b'"'))
    ids_buf: bytearray = field(default_factory=lambda: bytearray(b"["))

    def _new_text(self, count: int) -> str:
        words = self.st.words()
        return "".join(words[t] for t in self.req.tokens[self.sent : count])

    def meta(self, count: int, finish: dict[str, Any] | None, final: bool) -> dict[str, Any]:
        req = self.req
        m: dict[str, Any] = {
            "id": self.rid,
            "finish_reason": finish,
            "prompt_tokens": req.prompt_tokens,
            "weight_version": "default",
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": count,
            "cached_tokens": 0,
            "cached_tokens_details": None,
            "dp_rank": None,
        }
        if self.first:
            m["response_sent_to_client_ts"] = time.time()
        if final:
            m["e2e_latency"] = time.monotonic() - req.created
            cfg = self.st.config
            if cfg.algorithm is not None and req.verify_ct > 0:
                proposed = req.verify_ct * max(1, (cfg.num_draft_tokens or 2) - 1)
                hist = list(req.histogram) or [0]
                m.update(
                    spec_accept_rate=req.accepted_drafts / proposed,
                    spec_accept_length=count / req.verify_ct,
                    spec_num_correct_drafts=req.accepted_drafts,
                    spec_num_proposed_drafts=proposed,
                    spec_verify_ct=req.verify_ct,
                    spec_accepted_drafts=req.accepted_drafts,
                    spec_proposed_drafts=proposed,
                    spec_correct_drafts_histogram=hist,
                    spec_accept_histogram=hist,
                )
        return m

    def chunk(self, em: Emission) -> bytes:
        count, finish = em.count, em.finish
        obj: dict[str, Any]
        if self.kind == "generate":
            return self._generate_chunk(count, finish)
        delta = self._new_text(count)
        if self.kind == "completions":
            obj = {
                "id": self.rid,
                "object": "text_completion",
                "created": self.created,
                "model": self.st.config.served_model_name,
                "choices": [
                    {
                        "index": 0,
                        "text": delta,
                        "logprobs": None,
                        "finish_reason": _oai_finish(finish),
                        "matched_stop": _matched(finish),
                    }
                ],
                "usage": None,
            }
        else:
            obj = {
                "id": self.rid,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.st.config.served_model_name,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "role": "assistant" if self.first else None,
                            "content": delta,
                            "reasoning_content": None,
                        },
                        "logprobs": None,
                        "finish_reason": _oai_finish(finish),
                        "matched_stop": _matched(finish),
                    }
                ],
                "usage": None,
            }
        self.sent = count
        self.first = False
        return b"data: " + _ENC.encode(obj) + b"\n\n"

    def _generate_chunk(self, count: int, finish: dict[str, Any] | None) -> bytes:
        """Cumulative text/output_ids kept as growing JSON byte buffers: O(new tokens)
        work per chunk besides one copy, instead of re-encoding the whole history."""
        words, ids = _byte_tables(self.st.config.profile.vocab_size)
        text_buf, ids_buf = self.text_buf, self.ids_buf
        for t in self.req.tokens[self.sent : count]:
            text_buf += words[t]
            if len(ids_buf) > 1:
                ids_buf += b","
            ids_buf += ids[t]
        meta = _ENC.encode(self.meta(count, finish, finish is not None))
        self.sent = count
        self.first = False
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

    def usage(self) -> dict[str, Any]:
        n = len(self.req.tokens)
        p = self.req.prompt_tokens
        return {
            "prompt_tokens": p,
            "total_tokens": p + n,
            "completion_tokens": n,
            "reasoning_tokens": 0,
        }

    def usage_chunk(self) -> bytes:
        obj: dict[str, Any] = {
            "id": self.rid,
            "object": "text_completion" if self.kind == "completions" else "chat.completion.chunk",
            "created": self.created,
            "model": self.st.config.served_model_name,
            "choices": [],
            "usage": self.usage(),
        }
        return b"data: " + _ENC.encode(obj) + b"\n\n"

    def whole(self) -> dict[str, Any]:
        req = self.req
        count = len(req.tokens)
        finish = req.finish
        text = self._new_text(count)
        if self.kind == "generate":
            return {
                "text": text,
                "output_ids": list(req.tokens),
                "meta_info": self.meta(count, finish, True),
            }
        if self.kind == "completions":
            choice: dict[str, Any] = {
                "index": 0,
                "text": text,
                "logprobs": None,
                "finish_reason": _oai_finish(finish),
                "matched_stop": _matched(finish),
            }
            obj = "text_completion"
        else:
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text, "reasoning_content": None},
                "logprobs": None,
                "finish_reason": _oai_finish(finish),
                "matched_stop": _matched(finish),
            }
            obj = "chat.completion"
        return {
            "id": self.rid,
            "object": obj,
            "created": self.created,
            "model": self.st.config.served_model_name,
            "choices": [choice],
            "usage": self.usage(),
            "metadata": None,
        }


def _oai_finish(finish: dict[str, Any] | None) -> str | None:
    if finish is None:
        return None
    return str(finish["type"])


def _matched(finish: dict[str, Any] | None) -> Any:
    if finish is None or finish.get("type") != "stop":
        return None
    return finish.get("matched")


def _parse_generate(body: dict[str, Any]) -> tuple[int, int, float, bool, tuple[str, ...]]:
    sp = body.get("sampling_params") or {}
    if not isinstance(sp, dict):
        raise BadRequest("sampling_params must be an object")
    prompt = _count_prompt(body.get("text"), body.get("input_ids"))
    return (
        prompt,
        _int_field(sp, "max_new_tokens", DEFAULT_GENERATE_MAX_NEW),
        _float_field(sp, "temperature", 1.0),
        bool(sp.get("ignore_eos", False)),
        _stops(sp.get("stop")),
    )


def _parse_openai(
    body: dict[str, Any], chat: bool
) -> tuple[int, int, float, bool, tuple[str, ...]]:
    if chat:
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise BadRequest("messages must be a non-empty list")
        words = 0
        for m in msgs:
            content = m.get("content") if isinstance(m, dict) else None
            if isinstance(content, str):
                words += len(content.split())
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        words += len(part["text"].split())
        prompt = words
        default_max = DEFAULT_CHAT_MAX_TOKENS
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    else:
        prompt = _count_prompt(body.get("prompt"), None)
        default_max = DEFAULT_COMPLETIONS_MAX_TOKENS
        max_tokens = body.get("max_tokens")
    mx = _int_field({"max_tokens": max_tokens}, "max_tokens", default_max)
    return (
        prompt,
        mx,
        _float_field(body, "temperature", 1.0),
        bool(body.get("ignore_eos", False)),
        _stops(body.get("stop")),
    )


async def _fault_before(st: SimState, fault: str | None) -> web.Response | None:
    if fault == "http-error":
        status = st.config.error_status
        resp = _error(f"simulated fault: HTTP {status}", status, "SimulatedError")
        if status == 429:
            resp.headers["Retry-After"] = "1"
        return resp
    if fault == "wrong-content-type":
        return web.Response(
            status=200,
            content_type="text/html",
            text="<html><body><h1>502 Bad Gateway</h1>(simulated)</body></html>",
        )
    return None


def _hard_reset(request: web.Request) -> None:
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


async def _wait_closed(request: web.Request) -> None:
    while True:
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        await asyncio.sleep(0.2)


def _error_chunk(message: str, code: int) -> bytes:
    err = {
        "error": {"message": message, "type": "SimulatedError", "code": code, "retryable": False}
    }
    return b"data: " + _ENC.encode(err) + b"\n\n"


async def _serve_generation(request: web.Request, kind: str) -> web.StreamResponse:
    st = _state(request)
    if not st.ready:
        return _error("The server is not ready yet (starting).", 503, "ServiceUnavailable")
    try:
        body = await _read_json(request)
        if kind == "generate":
            prompt, max_new, temp, ignore_eos, stop = _parse_generate(body)
            stream = bool(body.get("stream", False))
        else:
            prompt, max_new, temp, ignore_eos, stop = _parse_openai(body, kind == "chat")
            stream = bool(body.get("stream", False))
        if prompt > st.config.max_req_input_len:
            raise BadRequest(
                f"The input ({prompt} tokens) is longer than the model's context length "
                f"({st.config.context_length} tokens)."
            )
    except BadRequest as e:
        return _error(str(e), 400)
    fault = st.pick_fault()
    early = await _fault_before(st, fault)
    if early is not None:
        return early
    sched = st.scheduler
    req = sched.new_request(prompt, max_new, temp, ignore_eos, stop)
    if not sched.fits_ever(req):
        return _error("request needs more KV tokens than the server has", 400)
    opts = body.get("stream_options") or {}
    render = _Render(
        kind=kind,
        st=st,
        req=req,
        rid=req.rid,
        created=int(time.time()),
        include_usage=bool(isinstance(opts, dict) and opts.get("include_usage")),
    )
    if max_new == 0:
        req.finish = {"type": "length", "length": 0}
        req.queue.put_nowait(Emission(0, req.finish))
    else:
        sched.submit(req)
    if not stream:
        return await _whole(request, st, req, render, fault)
    return await _stream(request, st, req, render, fault)


async def _whole(
    request: web.Request, st: SimState, req: SimRequest, render: _Render, fault: str | None
) -> web.StreamResponse:
    try:
        while True:
            em = await req.queue.get()
            if em.finish is not None:
                break
    except asyncio.CancelledError:
        st.scheduler.abort(req)
        raise
    if fault == "malformed" or fault == "truncate":
        return web.Response(
            status=200, content_type="application/json", body=_ENC.encode(render.whole())[:40]
        )
    if fault == "error-chunk":
        return _error("simulated fault: error", 500, "SimulatedError")
    if fault == "reset":
        _hard_reset(request)
        return web.Response(status=500)
    if fault == "stall":
        await _wait_closed(request)
        return web.Response(status=500)
    return _json(render.whole())


async def _stream(
    request: web.Request, st: SimState, req: SimRequest, render: _Render, fault: str | None
) -> web.StreamResponse:
    sched = st.scheduler
    resp = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    half = max(1, req.max_new_tokens // 2)
    mid_fault = fault if fault in MID_STREAM_FAULTS else None
    try:
        await resp.prepare(request)
        while True:
            em = await req.queue.get()
            while not req.queue.empty():  # coalesce what piled up (slow client)
                em = req.queue.get_nowait()
            if mid_fault is not None and (em.count >= half or em.finish is not None):
                kind, mid_fault = mid_fault, None
                if kind == "malformed":
                    await resp.write(b'data: {"text": "w1 w2, "meta_info": {"id": \n\n')
                elif kind == "error-chunk":
                    sched.abort(req)
                    await resp.write(_error_chunk("simulated fault: error mid-stream", 500))
                    await resp.write(_DONE)
                    await resp.write_eof()
                    return resp
                elif kind == "reset":
                    sched.abort(req)
                    _hard_reset(request)
                    return resp
                elif kind == "truncate":
                    sched.abort(req)
                    await resp.write_eof()
                    return resp
                else:  # stall
                    sched.abort(req)
                    await _wait_closed(request)
                    return resp
            await resp.write(render.chunk(em))
            if em.finish is not None:
                break
        if render.include_usage and render.kind != "generate":
            await resp.write(render.usage_chunk())
        await resp.write(_DONE)
        await resp.write_eof()
    except (ConnectionError, asyncio.CancelledError):
        sched.abort(req)
        raise
    return resp


async def generate(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, "generate")


async def completions(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, "completions")


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, "chat")


def build_app(state: SimState) -> web.Application:
    """The aiohttp application (routes + API-key middleware)."""
    app = web.Application(middlewares=[api_key_middleware], client_max_size=64 * 1024**2)
    app[STATE_KEY] = state
    r = app.router
    r.add_get("/health", health)
    r.add_get("/health_generate", health)
    r.add_get("/ready", health)
    r.add_get("/server_info", server_info)
    r.add_get("/get_server_info", server_info)
    r.add_get("/model_info", model_info)
    r.add_get("/get_model_info", model_info)
    r.add_get("/v1/models", v1_models)
    r.add_route("GET", "/flush_cache", flush_cache)
    r.add_route("POST", "/flush_cache", flush_cache)
    r.add_route("GET", "/slow_down", slow_down)
    r.add_route("POST", "/slow_down", slow_down)
    r.add_post("/generate", generate)
    r.add_put("/generate", generate)
    r.add_post("/v1/completions", completions)
    r.add_post("/v1/chat/completions", chat_completions)
    r.add_get("/sim/ground_truth", ground_truth)
    r.add_post("/sim/reset_ground_truth", reset_ground_truth)
    return app
