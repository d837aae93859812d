"""A reference SGLang-shaped streaming server for measuring clients (stdlib only).

    python lab/studies/stream_server.py --port 31000 --mode paced --rate 234 --truth truth.jsonl

/generate streams SGLang's native chunks (cumulative text, meta_info with completion_tokens,
finish_reason null until the last chunk, which carries e2e_latency and spec_verify_ct);
/v1/completions streams OpenAI delta chunks and a usage chunk; /server_info, /health and
/v1/models answer so `specperf bench` can point at it. Tokens are words " w<i>", so a
whitespace WordLevel tokenizer counts them one to one.

--mode firehose writes chunks as fast as the socket drains (a client's ceiling);
--mode paced emits --chunk tokens every --chunk/--rate seconds per request and, with --truth,
appends the server's own record of every request (arrival, first and last token emit times
on time.monotonic, which is system-wide on Linux, so a client's times compare directly) as JSON
lines: the ground truth a client's figures are held against. --workers N runs N processes on
one port (SO_REUSEPORT), so the server outruns a client with several processes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import time
from typing import Any, TextIO

WORDS = [f" w{index}" for index in range(1000)]


def _options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=31000)
    parser.add_argument("--mode", choices=("firehose", "paced"), default="firehose")
    parser.add_argument("--chunk", type=int, default=4, help="tokens per chunk")
    parser.add_argument("--rate", type=float, default=234.0, help="paced: tokens/s per request")
    parser.add_argument("--truth", default=None, help="paced: append ground truth here (JSONL)")
    parser.add_argument("--steps", type=int, default=3, help="speculation depth it reports")
    parser.add_argument("--workers", type=int, default=1, help="server processes (one port)")
    return parser.parse_args(argv)


class Server:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.truth: TextIO | None = open(options.truth, "a") if options.truth else None  # noqa: SIM115
        steps = options.steps
        self.info = {
            "version": "stream-server",
            "model_path": "stream-server",
            "tp_size": 1,
            "speculative_algorithm": "EAGLE",
            "speculative_num_steps": steps,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": steps + 1,
            "max_running_requests": 4096,
            "max_total_num_tokens": 10**8,
            "internal_states": [{"avg_spec_accept_length": float(options.chunk)}],
        }

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # keep-alive: one request after another on the connection
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                _method, target, _version = request_line.split(" ", 2)
                length = 0
                for line in header_lines:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                await self.route(writer, target.split("?")[0], body)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()

    async def route(self, writer: asyncio.StreamWriter, path: str, body: bytes) -> None:
        request: dict[str, Any] = json.loads(body) if body else {}
        if path in ("/generate", "/v1/completions") and request.get("stream"):
            await self.stream(writer, path == "/generate", request)
        elif path in ("/server_info", "/get_server_info"):
            self.plain(writer, self.info)
        elif path == "/v1/models":
            self.plain(writer, {"object": "list", "data": [{"id": "stream-server"}]})
        elif path in ("/health", "/health_generate", "/model_info", "/get_model_info"):
            self.plain(writer, {"model_path": "stream-server", "is_generation": True})
        else:
            self.plain(writer, {"error": f"not served here: {path}"}, b"404 Not Found")
        await writer.drain()

    @staticmethod
    def plain(writer: asyncio.StreamWriter, answer: object, status: bytes = b"200 OK") -> None:
        data = json.dumps(answer).encode()
        writer.write(
            b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (status, len(data), data)
        )

    async def stream(
        self, writer: asyncio.StreamWriter, native: bool, request: dict[str, Any]
    ) -> None:
        options = self.options
        if native:
            tokens = int(request.get("sampling_params", {}).get("max_new_tokens", 128))
        else:
            tokens = int(request.get("max_tokens", 128))
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        started = time.monotonic()
        period = options.chunk / options.rate if options.mode == "paced" else 0.0
        text: list[str] = []
        emitted = steps = 0
        first_emit = now = 0.0
        while emitted < tokens:
            take = min(options.chunk, tokens - emitted)
            new_text = "".join(WORDS[(emitted + j) % 1000] for j in range(take))
            emitted += take
            steps += 1
            if period:
                delay = started + steps * period - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            now = time.monotonic()
            first_emit = first_emit or now
            last = emitted >= tokens
            chunk: dict[str, Any]
            if native:
                text.append(new_text)
                meta: dict[str, Any] = {
                    "id": "r",
                    "finish_reason": {"type": "length", "length": tokens} if last else None,
                    "prompt_tokens": 8,
                    "completion_tokens": emitted,
                }
                if last:
                    meta.update(e2e_latency=now - started, spec_verify_ct=steps)
                chunk = {"text": "".join(text), "output_ids": [], "meta_info": meta}
            else:
                choice = {"index": 0, "text": new_text, "finish_reason": "length" if last else None}
                chunk = {"id": "r", "object": "text_completion", "choices": [choice]}
            self.event(writer, json.dumps(chunk, separators=(",", ":")).encode())
            if period or steps % 8 == 0:
                await writer.drain()
        if not native and request.get("stream_options", {}).get("include_usage"):
            usage = {"prompt_tokens": 8, "completion_tokens": emitted, "total_tokens": emitted + 8}
            self.event(writer, json.dumps({"id": "r", "choices": [], "usage": usage}).encode())
        self.event(writer, b"[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        if self.truth is not None:
            record = {
                "tokens": emitted,
                "first_tokens": min(options.chunk, tokens),
                "t_start": started,
                "t_first": first_emit,
                "t_last": now,
            }
            self.truth.write(json.dumps(record) + "\n")
            self.truth.flush()

    @staticmethod
    def event(writer: asyncio.StreamWriter, payload: bytes) -> None:
        data = b"data: " + payload + b"\n\n"
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))


def _listening_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(4096)
    return sock


async def _serve(options: argparse.Namespace) -> None:
    server = Server(options)
    sock = _listening_socket(options.host, options.port)
    listener = await asyncio.start_server(server.handle, sock=sock)
    async with listener:
        await listener.serve_forever()


def main(argv: list[str] | None = None) -> None:
    options = _options(argv)
    children: list[int] = []
    for _ in range(options.workers - 1):
        pid = os.fork()
        if pid == 0:
            children = []
            break
        children.append(pid)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        asyncio.run(_serve(options))
    except KeyboardInterrupt:
        pass
    finally:
        for pid in children:
            os.kill(pid, 15)
    sys.exit(0)


if __name__ == "__main__":
    main()
