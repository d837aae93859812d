"""server.process: launching, watching and stopping servers; reading /server_info."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from pytest_specperf.errors import ServerArgumentsRefused, ServerStartError, ServerUnreachableError
from pytest_specperf.server.launch import LaunchCommand
from pytest_specperf.server.process import (
    ServerProcess,
    depth_of,
    fetch_server_info,
    free_port,
    launch,
    port_is_free,
    redact,
    summarize_server_info,
)
from tests.support.json_http import Routes, json_server


def python_command(code: str) -> LaunchCommand:
    return LaunchCommand(argv=[sys.executable, "-c", code])


def python_server(
    code: str, tmp_path: Path, *, launch_timeout_s: float = 30, **options: Any
) -> ServerProcess:
    """A "server" that is this Python code, on a free local port, logging under tmp_path."""
    return ServerProcess(
        python_command(code),
        host="127.0.0.1",
        port=free_port(),
        log_path=options.pop("log_path", tmp_path / "server.log"),
        launch_timeout_s=launch_timeout_s,
        stop_grace_s=options.pop("stop_grace_s", 5),
        **options,
    )


def live_group_members(pgid: int) -> list[int]:
    """Processes (not zombies) whose process group is ``pgid``."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (psutil.Error, ProcessLookupError):
            continue
    return members


def load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def info_server() -> Iterator[tuple[str, Routes]]:
    """A real local HTTP server whose routes the test fills in."""
    routes: Routes = {}
    with json_server(routes) as port:
        yield f"http://127.0.0.1:{port}", routes


def test_free_port_is_bindable() -> None:
    """The port free_port returns can be bound on 127.0.0.1."""
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))
        assert sock.getsockname()[1] == port


def test_port_is_free_is_false_while_bound() -> None:
    """A port held by a listening socket is not free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert not port_is_free(sock.getsockname()[1])


def test_redact_replaces_every_secret_occurrence() -> None:
    """Each occurrence of each secret becomes ***; empty secrets are ignored."""
    assert redact("key=abc abc xyz", ("abc", "", "xyz")) == "key=*** *** ***"


def test_summarize_real_server_info(sim_data: Path) -> None:
    """The real SGLang /server_info sample reduces to its KV capacity and speculation."""
    info = load_json(sim_data / "server_info.steps3.bf16-kv.json")
    summary = summarize_server_info("http://x", info)
    assert summary.max_total_num_tokens == 28951187
    assert summary.max_running_requests == 48
    assert summary.speculative_algorithm == "EAGLE"
    assert summary.speculative_num_steps == 3
    assert summary.version == "0.5.12"
    assert summary.sim is None and summary.url == "http://x"


def test_summarize_takes_lifetime_accept_length_from_first_internal_state(
    sim_data: Path,
) -> None:
    """The lifetime accept length is internal_states[0].avg_spec_accept_length."""
    info = load_json(sim_data / "server_info.steps3.bf16-kv.json")
    info["internal_states"] = [{"avg_spec_accept_length": 2.75}, {"avg_spec_accept_length": 9}]
    assert summarize_server_info("u", info).lifetime_accept_length == 2.75


def test_summarize_tolerates_missing_and_odd_fields() -> None:
    """Missing fields, booleans as ints and odd internal_states give None, not errors."""
    summary = summarize_server_info(
        "u", {"max_total_num_tokens": True, "internal_states": "x", "version": 5}
    )
    assert summary.max_total_num_tokens is None
    assert summary.lifetime_accept_length is None
    assert summary.version == "5"


@pytest.mark.parametrize(
    "sample",
    [
        # EAGLE: speculative_num_steps = 3.
        "server_info.steps3.bf16-kv.json",
        # NGRAM: 4 draft tokens, so a chain of 3.
        "server_info.ngram-draft4.qwen3.json",
    ],
)
def test_depth_of_real_server_samples(sim_data: Path, sample: str) -> None:
    """A real server's depth: EAGLE's num_steps, NGRAM's draft tokens minus one."""
    assert depth_of(load_json(sim_data / sample)) == 3


def test_depth_of_non_speculative_server_is_none() -> None:
    """A server without speculation has no depth."""
    assert depth_of({"speculative_algorithm": None, "speculative_num_steps": 3}) is None


def test_fetch_server_info_unreachable_names_url() -> None:
    """A URL where nothing listens raises ServerUnreachableError naming the URL."""
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ServerUnreachableError) as info:
        fetch_server_info(url, timeout_s=2.0)
    assert url in str(info.value)


def test_fetch_server_info_falls_back_to_get_server_info(
    info_server: tuple[str, dict[str, tuple[int, bytes]]],
) -> None:
    """A server without /server_info is asked /get_server_info."""
    url, routes = info_server
    routes["/get_server_info"] = (200, b'{"version": "0.4.0"}')
    assert fetch_server_info(url, timeout_s=5.0) == {"version": "0.4.0"}


def test_fetch_server_info_401_hints_at_api_key(
    info_server: tuple[str, dict[str, tuple[int, bytes]]],
) -> None:
    """A 401 answer points the user at SPECPERF_API_KEY."""
    url, routes = info_server
    routes["/server_info"] = (401, b"{}")
    with pytest.raises(ServerUnreachableError, match="SPECPERF_API_KEY"):
        fetch_server_info(url, timeout_s=5.0)


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]"])
def test_fetch_server_info_non_object_is_unreachable_error(
    info_server: tuple[str, dict[str, tuple[int, bytes]]], body: bytes
) -> None:
    """An answer that is not a JSON object raises ServerUnreachableError."""
    url, routes = info_server
    routes["/server_info"] = (200, body)
    with pytest.raises(ServerUnreachableError, match="JSON"):
        fetch_server_info(url, timeout_s=5.0)


def test_server_that_exits_at_once_raises_start_error_with_code_and_log(tmp_path: Path) -> None:
    """A command that exits during launch fails with its exit code and log tail, no process left."""
    server = python_server("import sys; print('boom'); sys.exit(3)", tmp_path)
    with pytest.raises(ServerStartError) as info, server:
        pass
    assert "code 3" in str(info.value) and "boom" in str(info.value)
    assert server.process is not None and server.watchdog is not None
    assert not psutil.pid_exists(server.process.pid)
    assert server.watchdog.poll() is not None


def test_server_refusing_its_arguments_raises_the_parsers_one_line_reason(tmp_path: Path) -> None:
    """argparse's usage error (SGLang's launch parser prints usage first) is the reason."""
    code = (
        "import argparse, warnings; warnings.warn('launch_server is still supported'); "
        "p = argparse.ArgumentParser(prog='sglang serve'); p.add_argument('--port'); "
        "p.parse_args(['--port', '1', '--sim-slowdwn=0.2'])"
    )
    server = python_server(code, tmp_path)
    with pytest.raises(ServerArgumentsRefused) as info, server:
        pass
    assert str(info.value) == (
        "the server refused its arguments: unrecognized arguments: --sim-slowdwn=0.2 "
        f"(log: {tmp_path / 'server.log'})"
    )
    assert "usage: sglang serve" in (tmp_path / "server.log").read_text()


def test_server_exiting_with_an_error_line_but_not_status_2_is_no_refusal(tmp_path: Path) -> None:
    server = python_server("import sys; print('no GPU: error: none found'); sys.exit(3)", tmp_path)
    with pytest.raises(ServerStartError) as info, server:
        pass
    assert not isinstance(info.value, ServerArgumentsRefused)
    assert "code 3" in str(info.value)


def test_alive_with_a_settle_time_sees_a_server_that_is_about_to_exit(tmp_path: Path) -> None:
    """Asked with a settle time, alive() waits for a dying server to be gone instead of
    answering "alive" while it exits."""
    server = python_server("import time; time.sleep(0.5)", tmp_path)
    server.start()
    try:
        assert server.alive()
        assert not server.alive(settle_s=30)
        assert server.exit_code() == 0
    finally:
        server.stop()


def test_server_never_healthy_times_out_and_stop_empties_its_group(tmp_path: Path) -> None:
    """A command that never answers /health_generate times out; stop() kills its whole group."""
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(60)\n"
    )
    server = python_server(code, tmp_path, launch_timeout_s=1)
    with pytest.raises(ServerStartError, match="did not become healthy within 1 s"), server:
        pass
    assert server.process is not None
    assert live_group_members(server.process.pid) == []


def test_stop_kills_a_process_that_left_the_group_of_a_server_dead_at_launch(
    tmp_path: Path,
) -> None:
    """A server that dies at launch leaves no process behind, even one in a session of its own.

    Seen with SGLang 0.5.12 on an H200: a launch that failed left two of its processes running.
    """
    pid_file = tmp_path / "escaped.pid"
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "sys.exit(3)\n"
    )
    server = python_server(code, tmp_path)
    with pytest.raises(ServerStartError, match="code 3"), server:
        pass
    escaped = int(pid_file.read_text())
    assert not psutil.pid_exists(escaped) or psutil.Process(escaped).status() == "zombie"


def test_saved_server_log_redacts_api_key(tmp_path: Path) -> None:
    """The log copied to log_path has the API key replaced by ***."""
    log_path = tmp_path / "logs" / "server.log"
    server = python_server(
        "print('listening with key s3cret-key')", tmp_path, log_path=log_path, api_key="s3cret-key"
    )
    with pytest.raises(ServerStartError) as info, server:
        pass
    assert "s3cret-key" not in str(info.value)
    text = log_path.read_text(encoding="utf-8")
    assert "with key ***" in text and "s3cret-key" not in text


def ports_tried(tmp_path: Path, script: str, attempts: int, error: str) -> list[int]:
    """The ports launch() tried with a server that runs ``script`` and fails to start."""
    ports: list[int] = []

    def build(port: int) -> LaunchCommand:
        ports.append(port)
        return python_command(script)

    with pytest.raises(ServerStartError, match=error):
        launch(
            build,
            host="127.0.0.1",
            log_path=tmp_path / "server.log",
            launch_timeout_s=30,
            api_key=None,
            attempts=attempts,
        )
    return ports


def test_launch_retries_on_port_conflict(tmp_path: Path) -> None:
    """A server that reports its port in use is retried on another port, up to the attempts."""
    script = "import sys; print('OSError: [Errno 98] Address already in use')"
    assert len(ports_tried(tmp_path, script, 2, "exited")) == 2


def test_launch_does_not_retry_other_start_errors(tmp_path: Path) -> None:
    """A start failure that is not a port conflict is raised at once."""
    assert len(ports_tried(tmp_path, "import sys; sys.exit(1)", 3, "code 1")) == 1


# Prints SGLang-like milestones, then hangs without a word, as the seed-class boot at 128 did
# at the end of CUDA graph capture; one child sleeps, one spins (what describe_tree reports).
SILENT_AFTER_CAPTURE = """
import subprocess, sys, time
print("Load weight end. type=Qwen3NextForCausalLM", flush=True)
sys.stderr.write("Capturing batches (bs=128 avail_mem=26.90 GB): 100%\\r")
sys.stderr.flush()
print("Capture cuda graph end. Time elapsed: 60.1 s.", flush=True)
subprocess.Popen([sys.executable, "-c", "while True: pass"])
time.sleep(120)
"""


def server(code: str, tmp_path: Path, **options: float) -> ServerProcess:
    return ServerProcess(
        LaunchCommand(argv=[sys.executable, "-c", code]),
        host="127.0.0.1",
        port=free_port(),
        log_path=tmp_path / "server.log",
        launch_timeout_s=options.pop("launch_timeout_s", 60),
        stop_grace_s=5,
        **options,
    )


def failed_boot(code: str, tmp_path: Path, **options: float) -> str:
    """The ServerStartError's message of a server running ``code`` that never turns ready."""
    process = server(code, tmp_path, **options)
    process.start()
    try:
        with pytest.raises(ServerStartError) as caught:
            process.wait_ready()
    finally:
        process.stop()
    return str(caught.value)


def test_a_silent_boot_fails_within_the_silence_bound_with_what_it_is_doing(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    message = failed_boot(SILENT_AFTER_CAPTURE, tmp_path, silence_timeout_s=2)
    waited = time.monotonic() - started
    assert waited < 30, "not the 60 s launch timeout"
    assert message.startswith("server stopped without a word during launch")
    assert "--specperf-boot-silence-timeout=2" in message
    assert "the server process still runs" in message
    # What each process does: the launcher asleep, its child spinning a core.
    doing = message.split("--- what its processes are doing ---\n")[1].split("\n---")[0]
    lines = doing.splitlines()
    assert len(lines) == 2 and all("% CPU" in line and "GB RSS" in line for line in lines)
    assert any(line.split(", ")[0].endswith("sleeping") for line in lines)
    assert "Capture cuda graph end" in message.split("--- server log tail ---")[1]


def test_a_boot_that_keeps_logging_is_not_silent(tmp_path: Path) -> None:
    chatty = "import time\nwhile True:\n    print('capturing', flush=True)\n    time.sleep(0.3)"
    message = failed_boot(chatty, tmp_path, silence_timeout_s=1.5, launch_timeout_s=4)
    assert "did not become healthy within 4 s" in message


def test_a_progress_bar_without_newlines_is_a_sign_of_life(tmp_path: Path) -> None:
    bar = (
        "import sys, time\nfor i in range(1000):\n"
        "    sys.stderr.write(f'\\rCapturing batches {i}'); sys.stderr.flush(); time.sleep(0.3)"
    )
    message = failed_boot(bar, tmp_path, silence_timeout_s=1.5, launch_timeout_s=4)
    assert "did not become healthy" in message
