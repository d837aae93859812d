"""server.process: a boot whose server log goes silent fails within the silence bound."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from pytest_specperf.errors import ServerStartError
from pytest_specperf.server.launch import LaunchCommand
from pytest_specperf.server.process import ServerProcess, free_port

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


def test_a_silent_boot_fails_within_the_silence_bound_with_what_it_is_doing(
    tmp_path: Path,
) -> None:
    process = server(SILENT_AFTER_CAPTURE, tmp_path, silence_timeout_s=2)
    process.start()
    started = time.monotonic()
    try:
        with pytest.raises(ServerStartError) as caught:
            process.wait_ready()
    finally:
        process.stop()
    waited = time.monotonic() - started
    message = str(caught.value)
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
    process = server(chatty, tmp_path, silence_timeout_s=1.5, launch_timeout_s=4)
    process.start()
    try:
        with pytest.raises(ServerStartError, match="did not become healthy within 4 s"):
            process.wait_ready()
    finally:
        process.stop()


def test_a_progress_bar_without_newlines_is_a_sign_of_life(tmp_path: Path) -> None:
    bar = (
        "import sys, time\nfor i in range(1000):\n"
        "    sys.stderr.write(f'\\rCapturing batches {i}'); sys.stderr.flush(); time.sleep(0.3)"
    )
    process = server(bar, tmp_path, silence_timeout_s=1.5, launch_timeout_s=4)
    process.start()
    try:
        with pytest.raises(ServerStartError, match="did not become healthy"):
            process.wait_ready()
    finally:
        process.stop()
