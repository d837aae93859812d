"""Fault knobs: each one observed from a client."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest

from tests.support.data import sse_payloads
from tests.support.sim import SimServer

FAST = ["--speculative-algorithm", "EAGLE", "--sim-speedup", "50"]
BODY = {
    "text": "a b c",
    "sampling_params": {"max_new_tokens": 200, "temperature": 0, "ignore_eos": True},
    "stream": True,
}


def test_http_error_429_and_rate_is_deterministic(sim: Callable[..., SimServer]) -> None:
    args = [
        *FAST,
        "--sim-fault",
        "http-error",
        "--sim-error-status",
        "429",
        "--sim-fault-rate",
        "0.5",
        "--sim-seed",
        "7",
    ]
    runs = []
    for _ in range(2):
        s = sim(args)
        runs.append([s.post("/generate", json=BODY).status_code for _ in range(12)])
        s.kill()
    assert runs[0] == runs[1]
    assert set(runs[0]) == {200, 429}


def test_malformed_chunk_mid_stream(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "malformed"])
    payloads = sse_payloads(s.post("/generate", json=BODY).text)
    bad = []
    for i, p in enumerate(payloads[:-1]):
        try:
            json.loads(p)
        except ValueError:
            bad.append(i)
    assert len(bad) == 1 and 0 < bad[0] < len(payloads) - 2
    assert payloads[-1] == "[DONE]"


def test_error_chunk_then_done(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "error-chunk"])
    payloads = sse_payloads(s.post("/generate", json=BODY).text)
    assert payloads[-1] == "[DONE]"
    err = json.loads(payloads[-2])
    assert set(err) == {"error"} and {"message", "code"} <= set(err["error"])
    assert "text" in json.loads(payloads[0])


def chunks_before_the_connection_drops(s: SimServer) -> int:
    """Streams BODY until the connection breaks (it must); the chunks that came before."""
    got = 0
    with (
        pytest.raises(httpx.TransportError),
        httpx.stream("POST", s.url + "/generate", json=BODY, timeout=10) as r,
    ):
        for line in r.iter_lines():
            got += line.startswith("data: {")
    return got


def test_reset_closes_connection_mid_stream(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "reset"])
    assert chunks_before_the_connection_drops(s) >= 1
    assert s.get("/health").status_code == 200


def test_truncate_ends_cleanly_without_final_chunk(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "truncate"])
    r = s.post("/generate", json=BODY)
    payloads = sse_payloads(r.text)
    assert r.status_code == 200 and payloads and "[DONE]" not in payloads
    last = json.loads(payloads[-1])
    assert last["meta_info"]["finish_reason"] is None


def test_stall_keeps_connection_open(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "stall"])
    got = 0
    with (
        pytest.raises(httpx.ReadTimeout),
        httpx.stream(
            "POST", s.url + "/generate", json=BODY, timeout=httpx.Timeout(10, read=1.0)
        ) as r,
    ):
        for line in r.iter_lines():
            got += line.startswith("data: {")
    assert got >= 1
    assert s.get("/sim/ground_truth").json()["running"] == 0  # slot freed


def test_wrong_content_type(sim: Callable[..., SimServer]) -> None:
    s = sim([*FAST, "--sim-fault", "wrong-content-type"])
    r = s.post("/generate", json=BODY)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    r = s.post("/v1/completions", json={"prompt": "a", "max_tokens": 3})
    assert r.headers["content-type"].startswith("text/html")


def test_crash_after_n_kills_process_with_streams_in_flight(
    sim: Callable[..., SimServer],
) -> None:
    s = sim([*FAST, "--sim-crash-after", "2"])
    first = s.post(
        "/generate",
        json={
            **BODY,
            "sampling_params": {"max_new_tokens": 5, "temperature": 0, "ignore_eos": True},
        },
    )
    assert first.status_code == 200
    assert chunks_before_the_connection_drops(s) >= 1
    s.proc.wait(timeout=5)
    assert s.proc.returncode == -9


def test_hang_at_boot_never_healthy(sim: Callable[..., SimServer]) -> None:
    s = sim(["--sim-hang-at-boot"], wait_healthy=False)
    for _ in range(5):
        assert s.get("/health_generate").status_code == 503
        time.sleep(0.1)
    assert s.post("/generate", json=BODY).status_code == 503


def test_boot_delay_then_healthy(sim: Callable[..., SimServer]) -> None:
    """Answering 503 first, then 200 once the delay has passed (long enough for a loaded
    machine to ask within it)."""
    t0 = time.monotonic()
    s = sim(["--sim-boot-delay", "3"], wait_healthy=False)
    assert s.get("/health_generate").status_code == 503
    while s.get("/health_generate").status_code != 200:
        time.sleep(0.05)
    assert time.monotonic() - t0 >= 3.0


def test_default_boot_does_not_wait(sim: Callable[..., SimServer]) -> None:
    """Without --sim-boot-delay the server is healthy from its first answer on."""
    s = sim([], wait_healthy=False)
    assert s.get("/health_generate").status_code == 200


def test_slowdown_cuts_throughput(sim: Callable[..., SimServer]) -> None:
    def step(args: list[str]) -> float:
        s = sim([*FAST, *args])
        s.post("/generate", json={**BODY, "stream": False})
        v = s.get("/sim/ground_truth").json()["steps"]["mean_model_s"]
        s.kill()
        return float(v)

    assert step(["--sim-slowdown", "0.2"]) == pytest.approx(step([]) * 1.25, rel=0.01)
