"""aiohttp routes: SGLang's HTTP API in front of the simulated scheduler.

Generation handlers only translate: parse a body (parse.py), create a `SimRequest`, submit
it, then drain its queue into chunks (render.py), coalescing what piled up while the client
was slow, as SGLang's tokenizer manager does. Faults (faults.py) are applied per request.
A new endpoint is a handler here plus one line in `build_app`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from pytest_specperf.sim.faults import ACTIONS, Fault, StreamInProgress
from pytest_specperf.sim.info import model_info_body, server_info_body, v1_models_body
from pytest_specperf.sim.parse import BadRequest, Endpoint, GenerationRequest, parse_generation
from pytest_specperf.sim.render import Renderer
from pytest_specperf.sim.scheduler import Emission, SimRequest
from pytest_specperf.sim.state import SimState
from pytest_specperf.sim.wire import DONE, ENCODER, error_response, json_response

_EXEMPT_PREFIXES = ("/health", "/ready", "/metrics")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

STATE_KEY = web.AppKey("sim_state", SimState)


def _state(request: web.Request) -> SimState:
    return request.app[STATE_KEY]


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
            return json_response({"error": "Unauthorized"}, 401)
    return await handler(request)


# ---------------------------------------------------------------------------------------
# Health, info, admin
# ---------------------------------------------------------------------------------------


async def health(request: web.Request) -> web.Response:
    return web.Response(status=200 if _state(request).ready else 503)


async def model_info(request: web.Request) -> web.Response:
    return json_response(model_info_body(_state(request)))


async def server_info(request: web.Request) -> web.Response:
    return json_response(server_info_body(_state(request)))


async def v1_models(request: web.Request) -> web.Response:
    return json_response(v1_models_body(_state(request)))


async def flush_cache(request: web.Request) -> web.Response:
    sched = _state(request).scheduler
    try:
        timeout = float(request.query.get("timeout", "0") or 0)
    except ValueError:
        return error_response("timeout must be a number", 400)
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
            return error_response("body must be JSON", 400)
    value = body.get("forward_sleep_time") if isinstance(body, dict) else None
    if value is not None and (not isinstance(value, int | float) or value < 0):
        return error_response("forward_sleep_time must be a non-negative number or null", 400)
    # SGLang sleeps this many real seconds per forward pass; the simulator divides it by
    # --sim-speedup like every other simulated time.
    _state(request).scheduler.forward_sleep_s = float(value or 0.0)
    return json_response(None)


async def metrics(request: web.Request) -> web.Response:
    """SGLang's Prometheus gauges of its load (served, as SGLang, with --enable-metrics)."""
    st = _state(request)
    if not st.config.server_args.get("enable_metrics"):
        return web.Response(status=404, text="Not Found")
    sched = st.scheduler
    labels = (
        f'{{model_name="{st.config.served_model_name}",engine_type="unified",'
        'tp_rank="0",pp_rank="0"}'
    )
    lines = [
        "# HELP sglang:num_running_reqs The number of running requests.",
        "# TYPE sglang:num_running_reqs gauge",
        f"sglang:num_running_reqs{labels} {len(sched.running)}.0",
        "# HELP sglang:num_queue_reqs The number of requests in the waiting queue.",
        "# TYPE sglang:num_queue_reqs gauge",
        f"sglang:num_queue_reqs{labels} {len(sched.waiting)}.0",
        "# HELP sglang:num_retracted_requests_total Total number of retracted requests.",
        "# TYPE sglang:num_retracted_requests_total counter",
        f"sglang:num_retracted_requests_total{labels} {sched.retractions_total}.0",
        "# HELP sglang:token_usage The token usage.",
        "# TYPE sglang:token_usage gauge",
        f"sglang:token_usage{labels} {sched.kv_used / max(1, st.config.max_total_num_tokens):.4f}",
    ]
    return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")


async def ground_truth(request: web.Request) -> web.Response:
    return json_response(_state(request).scheduler.ground_truth())


async def reset_ground_truth(request: web.Request) -> web.Response:
    _state(request).scheduler.reset_ground_truth()
    return json_response({"success": True})


# ---------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------


async def _read_json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("request body must be JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


async def _parse(request: web.Request, st: SimState, endpoint: Endpoint) -> GenerationRequest:
    parsed = parse_generation(endpoint, await _read_json(request))
    if parsed.prompt_tokens > st.config.max_req_input_len:
        raise BadRequest(
            f"The input ({parsed.prompt_tokens} tokens) is longer than the model's context "
            f"length ({st.config.context_length} tokens)."
        )
    return parsed


async def _serve_generation(request: web.Request, endpoint: Endpoint) -> web.StreamResponse:
    st = _state(request)
    if not st.ready:
        return error_response("The server is not ready yet (starting).", 503, "ServiceUnavailable")
    try:
        parsed = await _parse(request, st, endpoint)
    except BadRequest as e:
        return error_response(str(e), 400)
    fault = st.next_fault()
    before = ACTIONS[fault].before if fault is not None else None
    if before is not None:
        return before(st.config.error_status)
    sched = st.scheduler
    req = sched.new_request(
        parsed.prompt_tokens,
        parsed.max_new_tokens,
        parsed.temperature,
        parsed.ignore_eos,
        parsed.stop,
        parsed.prompt_key,
        parsed.prefix_blocks,
    )
    if not sched.fits_ever(req):
        return error_response("request needs more KV tokens than the server has", 400)
    renderer = Renderer(endpoint=endpoint, config=st.config, req=req, created=int(time.time()))
    if parsed.max_new_tokens == 0:
        req.finish = {"type": "length", "length": 0}
        req.queue.put_nowait(Emission(0, req.finish))
    else:
        sched.submit(req)
    if not parsed.stream:
        return await _whole(request, st, req, renderer, fault)
    return await _stream(request, st, req, renderer, fault, parsed.include_usage)


async def _whole(
    request: web.Request, st: SimState, req: SimRequest, renderer: Renderer, fault: Fault | None
) -> web.StreamResponse:
    try:
        while True:
            em = await req.queue.get()
            if em.finish is not None:
                break
    except asyncio.CancelledError:
        st.scheduler.abort(req)
        raise
    body = renderer.whole()
    action = ACTIONS[fault].whole if fault is not None else None
    if action is not None:
        try:
            return await action(request, ENCODER.encode(body))
        except ConnectionError:
            return web.Response()  # the client is gone: nobody to answer, nothing to log
    return json_response(body)


async def _stream(
    request: web.Request,
    st: SimState,
    req: SimRequest,
    renderer: Renderer,
    fault: Fault | None,
    include_usage: bool,
) -> web.StreamResponse:
    sched = st.scheduler
    resp = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    half = max(1, req.max_new_tokens // 2)
    mid_stream = ACTIONS[fault].mid_stream if fault is not None else None
    try:
        await resp.prepare(request)
        while True:
            em = await req.queue.get()
            while not req.queue.empty():  # coalesce what piled up (slow client)
                em = req.queue.get_nowait()
            if mid_stream is not None and (em.count >= half or em.finish is not None):
                action, mid_stream = mid_stream, None
                progress = StreamInProgress(request, resp, lambda: sched.abort(req))
                if not await action(progress):
                    return resp
            await resp.write(renderer.chunk(em))
            if em.finish is not None:
                break
        if include_usage and endpoint_has_usage_chunk(renderer.endpoint):
            await resp.write(renderer.usage_chunk())
        await resp.write(DONE)
        await resp.write_eof()
    except ConnectionError:
        # The client went away (closed, killed by a Ctrl-C): its stream ends here, quietly;
        # raised, aiohttp logged a traceback per stream ("Cannot write to closing transport").
        sched.abort(req)
    except asyncio.CancelledError:
        sched.abort(req)
        raise
    return resp


def endpoint_has_usage_chunk(endpoint: Endpoint) -> bool:
    """OpenAI endpoints end a stream with a usage chunk when asked; /generate never does."""
    return endpoint is not Endpoint.GENERATE


async def generate(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, Endpoint.GENERATE)


async def completions(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, Endpoint.COMPLETIONS)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _serve_generation(request, Endpoint.CHAT)


def build_app(state: SimState) -> web.Application:
    """The aiohttp application (routes + API-key middleware)."""
    app = web.Application(middlewares=[api_key_middleware], client_max_size=64 * 1024**2)
    app[STATE_KEY] = state
    r = app.router
    # SGLang answers some paths under several names, and some paths to several methods.
    for path in ("/health", "/health_generate", "/ready"):
        r.add_get(path, health)
    for path in ("/server_info", "/get_server_info"):
        r.add_get(path, server_info)
    for path in ("/model_info", "/get_model_info"):
        r.add_get(path, model_info)
    for method in ("GET", "POST"):
        r.add_route(method, "/flush_cache", flush_cache)
        r.add_route(method, "/slow_down", slow_down)
    for method in ("POST", "PUT"):
        r.add_route(method, "/generate", generate)
    r.add_get("/v1/models", v1_models)
    r.add_post("/v1/completions", completions)
    r.add_post("/v1/chat/completions", chat_completions)
    r.add_get("/metrics", metrics)
    r.add_get("/sim/ground_truth", ground_truth)
    r.add_post("/sim/reset_ground_truth", reset_ground_truth)
    return app
