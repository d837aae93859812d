"""Every endpoint against a booted simulator; key sets equal to the real SGLang samples."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support.data import load_json, load_stream, sse_payloads
from tests.support.sim import SPEC_DEPTH3_ARGS, SimServer

SPEC = [
    *SPEC_DEPTH3_ARGS,
    "--sim-speedup",
    "20",
]
GREEDY = {"temperature": 0, "ignore_eos": True}


@pytest.fixture(scope="module")
def server(module_sim: Callable[..., SimServer]) -> SimServer:
    return module_sim(SPEC)


def gen(server: SimServer, n: int, stream: bool = True, **extra: Any) -> httpx.Response:
    body = {
        "text": "the quick brown fox",
        "sampling_params": {**GREEDY, "max_new_tokens": n},
        "stream": stream,
        **extra,
    }
    return server.post("/generate", json=body)


def test_health_ready(server: SimServer) -> None:
    for path in ("/health", "/health_generate", "/ready"):
        assert server.get(path).status_code == 200


def test_server_info_keys_equal_the_real_sample(server: SimServer) -> None:
    sample = load_json("server_info.steps3.bf16-kv.json")
    server.post("/sim/reset_ground_truth")
    for path in ("/server_info", "/get_server_info"):
        info = server.get(path).json()
        assert set(info) == set(sample) | {"sim"}
        assert set(info["internal_states"][0]) - {"avg_spec_accept_length"} == set(
            sample["internal_states"][0]
        )
    assert info["speculative_algorithm"] == "EAGLE"
    assert info["speculative_num_steps"] == 3 and info["speculative_num_draft_tokens"] == 4
    assert info["max_total_num_tokens"] == 295_931 and info["max_running_requests"] == 17
    assert info["version"] == "0.5.23-sim" and info["status"] == "ready"
    assert info["api_key"] is None
    ist = info["internal_states"][0]
    assert ist["effective_max_running_requests_per_dp"] == 17
    assert set(ist["memory_usage"]) == {"weight", "kvcache", "token_capacity", "graph"}
    sim = info["sim"]
    assert sim["speedup"] == 20 and sim["hardware"] == "simulated 4x RTX PRO 6000 Blackwell"
    assert {
        "profile",
        "seed",
        "noise",
        "jitter",
        "slowdown",
        "acceptance",
        "fault",
        "fault_rate",
        "crash_after",
    } <= set(sim)


def test_server_info_reports_the_gpus_the_simulator_was_given(
    sim: Callable[..., SimServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CUDA_VISIBLE_DEVICES of the process, as given, under sim.cuda_visible_devices."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    info = sim(SPEC).get("/server_info").json()
    assert info["sim"]["cuda_visible_devices"] == "4,5"


def test_avg_spec_accept_length_is_lifetime(server: SimServer) -> None:
    gen(server, 200)
    ist = server.get("/server_info").json()["internal_states"][0]
    assert 3.0 < ist["avg_spec_accept_length"] <= 4.0


def test_model_info_and_v1_models_keys(server: SimServer) -> None:
    for path in ("/model_info", "/get_model_info"):
        assert set(server.get(path).json()) == set(load_json("model_info.json"))
    models = server.get("/v1/models").json()
    sample = load_json("v1_models.json")
    assert set(models) == set(sample)
    assert set(models["data"][0]) == set(sample["data"][0])


def test_generate_stream_chunks_match_real_sample(server: SimServer) -> None:
    sample = [json.loads(p) for p in load_stream("generate_stream.steps3.jsonl")[:-1]]
    r = gen(server, 300)
    assert r.headers["content-type"].startswith("text/event-stream")
    payloads = sse_payloads(r.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert set(chunks[0]) == set(sample[0])
    assert set(chunks[0]["meta_info"]) == set(sample[0]["meta_info"])
    for c in chunks[1:-1]:
        assert set(c["meta_info"]) == set(sample[1]["meta_info"])
        assert c["meta_info"]["finish_reason"] is None
    final = chunks[-1]["meta_info"]
    assert set(final) - {"response_sent_to_client_ts"} == set(sample[-1]["meta_info"])
    assert final["finish_reason"] == {"type": "length", "length": 300}
    assert final["completion_tokens"] == 300 == len(chunks[-1]["output_ids"])
    assert len(chunks[-1]["text"].split()) == 300
    # cumulative text/ids; chunks carry several tokens
    counts = [c["meta_info"]["completion_tokens"] for c in chunks]
    assert counts == sorted(counts) and len(chunks) < 120
    for a, b in itertools.pairwise(chunks):
        assert b["text"].startswith(a["text"])
        assert b["output_ids"][: len(a["output_ids"])] == a["output_ids"]
    assert final["spec_verify_ct"] == len(chunks) - 1
    assert final["spec_accept_length"] == pytest.approx(300 / final["spec_verify_ct"])
    assert final["spec_proposed_drafts"] == 3 * final["spec_verify_ct"]


def test_generate_non_stream_and_input_ids(server: SimServer) -> None:
    body = {"input_ids": [1, 2, 3, 4, 5], "sampling_params": {**GREEDY, "max_new_tokens": 40}}
    out = server.post("/generate", json=body).json()
    assert out["meta_info"]["prompt_tokens"] == 5
    assert out["meta_info"]["completion_tokens"] == 40 == len(out["output_ids"])
    assert out["meta_info"]["spec_verify_ct"] > 0


def test_v1_completions_stream_with_usage_matches_sample(server: SimServer) -> None:
    sample = [json.loads(p) for p in load_stream("v1_completions_stream.steps3.jsonl")[:-1]]
    body = {
        "model": "x",
        "prompt": "one two three",
        "max_tokens": 50,
        "ignore_eos": True,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    payloads = sse_payloads(server.post("/v1/completions", json=body).text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    for c in chunks[:-1]:
        assert set(c) == set(sample[0])
        assert set(c["choices"][0]) == set(sample[0]["choices"][0])
        assert c["usage"] is None
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    last = chunks[-1]
    assert last["choices"] == [] and set(last["usage"]) == set(sample[-1]["usage"])
    assert last["usage"]["completion_tokens"] == 50 and last["usage"]["prompt_tokens"] == 3
    assert len("".join(c["choices"][0]["text"] for c in chunks[:-1]).split()) == 50


def test_v1_completions_non_stream(server: SimServer) -> None:
    out = server.post(
        "/v1/completions", json={"prompt": "a b", "max_tokens": 7, "ignore_eos": True}
    ).json()
    assert out["object"] == "text_completion"
    assert out["usage"]["completion_tokens"] == 7
    assert len(out["choices"][0]["text"].split()) == 7


def test_chat_completions_stream_and_not(server: SimServer) -> None:
    msgs = [{"role": "user", "content": "hello there friend"}]
    out = server.post(
        "/v1/chat/completions", json={"messages": msgs, "max_tokens": 9, "ignore_eos": True}
    ).json()
    assert out["object"] == "chat.completion" and out["usage"]["prompt_tokens"] == 3
    assert len(out["choices"][0]["message"]["content"].split()) == 9
    body = {
        "messages": msgs,
        "max_tokens": 12,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    payloads = sse_payloads(server.post("/v1/chat/completions", json=body).text)
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 12
    text = "".join(c["choices"][0]["delta"]["content"] for c in chunks[:-1])
    assert len(text.split()) == 12


def test_flush_cache_200_idle_400_busy(server: SimServer) -> None:
    assert server.get("/flush_cache").status_code == 200
    t = threading.Thread(target=gen, args=(server, 3000))
    t.start()
    time.sleep(0.3)
    try:
        assert server.post("/flush_cache").status_code == 400
    finally:
        t.join()
    assert server.post("/flush_cache").status_code == 200


def test_slow_down_adds_sleep_per_step_and_null_resets(server: SimServer) -> None:
    def step_mean() -> float:
        server.post("/sim/reset_ground_truth")
        gen(server, 120)
        return float(server.get("/sim/ground_truth").json()["steps"]["mean_model_s"])

    base = step_mean()
    r = server.post("/slow_down", json={"forward_sleep_time": 0.1})
    assert r.status_code == 200 and r.text == "null"
    slowed = step_mean()
    assert slowed == pytest.approx(base + 0.1 / 20, rel=0.1)
    server.post("/slow_down", json={"forward_sleep_time": None})
    assert step_mean() == pytest.approx(base, rel=0.1)


def test_ground_truth_records_and_reset(server: SimServer) -> None:
    server.post("/sim/reset_ground_truth")
    t0 = time.monotonic()
    gen(server, 80)
    gt = server.get("/sim/ground_truth").json()
    (rec,) = gt["requests"]
    assert rec["completion_tokens"] == 80 and rec["prompt_tokens"] == 4
    assert t0 < rec["admitted"] <= rec["first_emit"] <= rec["last_emit"] < time.monotonic()
    assert rec["finish_reason"] == {"type": "length", "length": 80}
    assert gt["steps"]["count"] == rec["spec_verify_ct"] + 1
    server.post("/sim/reset_ground_truth")
    assert server.get("/sim/ground_truth").json()["requests"] == []


def test_bad_body_is_400(server: SimServer) -> None:
    assert server.post("/generate", content=b"not json").status_code == 400
    assert server.post("/generate", json={"sampling_params": {}}).status_code == 400


def test_api_key_required_except_health(sim: Callable[..., SimServer]) -> None:
    s = sim(["--api-key", "k3y", "--sim-speedup", "50"])
    assert s.get("/health").status_code == 200
    assert s.get("/health_generate").status_code == 200
    assert s.get("/ready").status_code == 200
    for path in ("/server_info", "/model_info", "/v1/models", "/sim/ground_truth"):
        assert s.get(path).status_code == 401
        assert s.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert s.post("/generate", json={"text": "a"}).status_code == 401
    ok = {"Authorization": "Bearer k3y"}
    info = s.get("/server_info", headers=ok)
    assert info.status_code == 200 and "k3y" not in info.text
    r = s.post(
        "/generate", json={"text": "a", "sampling_params": {"max_new_tokens": 3}}, headers=ok
    )
    assert r.status_code == 200 and r.json()["meta_info"]["completion_tokens"] <= 3
