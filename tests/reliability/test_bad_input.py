"""Bad input: one clear line per bad option or profile, fast failure on a dead URL, and a port
that someone else holds is not mistaken for the server's own.

The option and profile parsers are fuzzed in tests/unit; these go through pytest itself for the
options tests/e2e does not cover.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.process import ServerProcess, fetch_server_info, free_port, launch
from pytest_specperf.server.profiles import DEFAULT_PROFILE, builtin_profiles
from tests.support.json_http import json_server
from tests.support.no_sglang import hiding_sglang

BAD_OPTIONS = [
    ("--specperf-min-success=1.5", "--specperf-min-success: '1.5' must be >= 0 and <= 1"),
    ("--specperf-stall-timeout=0", "--specperf-stall-timeout: '0' must be > 0"),
    ("--specperf-request-timeout=soon", "--specperf-request-timeout: 'soon' is not a number"),
    ("--specperf-launch-timeout=nan", "--specperf-launch-timeout: 'nan' must be > 0"),
    ("--specperf-url=ftp://127.0.0.1:21", "--specperf-url: 'ftp://127.0.0.1:21' is not an http(s)"),
    ("--specperf-server-arg=oops", "--specperf-server-arg: 'oops' must start with '--'"),
    ("--specperf-endpoint=chat", "--specperf-endpoint: 'chat' is not one of generate, completions"),
    ("--specperf-max-new-tokens=0", "--specperf-max-new-tokens: '0' must be >= 1"),
    ("--specperf-temperature=3", "--specperf-temperature: '3' must be >= 0 and <= 2"),
    ("--specperf-tolerance=1", "--specperf-tolerance: '1' must be >= 0 and <= 0.99"),
    ("--specperf-sim-speedup=-2", "--specperf-sim-speedup: '-2' must be > 0"),
    ("--specperf-requests=0", "--specperf-requests: '0' must be >= 1"),
]


@pytest.mark.parametrize(("option", "message"), BAD_OPTIONS, ids=[o for o, _ in BAD_OPTIONS])
def test_bad_option_is_one_usage_error_line(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    """A bad value stops pytest with a usage error: one line naming the option, no traceback."""
    result = pytester.runpytest_inprocess("--specperf-backend=sim", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and message in errors[0], result.stderr.str()
    assert "Traceback" not in result.stderr.str()


def test_bad_profile_field_is_one_usage_error_line(pytester: pytest.Pytester) -> None:
    """A profile file with tp_size = 0 is a usage error naming the file and the field."""
    profile = pytester.path / "mine.toml"
    profile.write_text('name = "mine"\nmodel_path = "m"\ntp_size = 0\n', encoding="utf-8")
    result = pytester.runpytest_inprocess(f"--specperf-profile={profile}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1
    assert str(profile) in errors[0] and "tp_size" in errors[0]
    assert "Traceback" not in result.stderr.str()


def _usage_error_with_url(pytester: pytest.Pytester, url: str, within_s: float) -> pytest.RunResult:
    """A run against ``--specperf-url=URL``: a usage error, within ``within_s`` seconds."""
    started = time.monotonic()
    result = pytester.runpytest_subprocess(f"--specperf-url={url}")
    assert time.monotonic() - started < within_s
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    return result


def test_unreachable_url_fails_within_seconds_naming_it(pytester: pytest.Pytester) -> None:
    """--specperf-url where nothing listens fails within 20 s with the URL in the message."""
    url = f"http://127.0.0.1:{free_port()}"
    result = _usage_error_with_url(pytester, url, within_s=20)
    result.stderr.fnmatch_lines([f"*cannot reach {url}: ConnectError*"])


def test_silent_url_fails_within_bound_naming_it(pytester: pytest.Pytester) -> None:
    """--specperf-url that accepts connections but never answers fails within 40 s, named."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        result = _usage_error_with_url(pytester, url, within_s=40)
    result.stderr.fnmatch_lines([f"*cannot reach {url}: ReadTimeout*"])


# -- ports ----------------------------------------------------------------------------------
def sim_command(port: int) -> LaunchCommand:
    profile = builtin_profiles()[DEFAULT_PROFILE]
    return build_launch(profile, 3, backend="sim", port=port, sim_speedup=10)


@pytest.fixture
def foreign_server() -> Iterator[int]:
    """Someone else's HTTP server on a loopback port, answering 200 to every GET."""
    with json_server({}, otherwise=(200, b'{"who": "someone else"}')) as port:
        yield port


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port held by a plain listening socket."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield int(sock.getsockname()[1])


@contextlib.contextmanager
def _launched_after(first_port: int, log_path: Path) -> Iterator[ServerProcess]:
    """The simulator launched with ``first_port`` picked first, then a free port: it must end
    up on the second port, having tried exactly those two; stopped when the block ends."""
    ports = [first_port, free_port()]
    tried: list[int] = []

    def pick(host: str) -> int:
        tried.append(ports[len(tried)])
        return tried[-1]

    server = launch(
        sim_command,
        host="127.0.0.1",
        log_path=log_path,
        launch_timeout_s=60,
        api_key=None,
        pick_port=pick,
    )
    try:
        assert tried == ports
        assert server.port == ports[1]
        yield server
    finally:
        server.stop()


def test_launch_retries_on_another_port_when_the_first_is_taken(
    tmp_path: Path, taken_port: int
) -> None:
    """The server cannot bind the first port it is given; launch retries on the next one."""
    with _launched_after(taken_port, tmp_path / "server.log") as server:
        assert server.alive()
        assert fetch_server_info(server.url)["sim"]["speedup"] == 10
    assert server.process is not None and server.process.poll() is not None


def test_launch_does_not_take_a_foreign_server_for_its_own(
    tmp_path: Path, foreign_server: int
) -> None:
    """A port answered by someone else's server is not 'ready': launch retries elsewhere."""
    with _launched_after(foreign_server, tmp_path / "server.log") as server:
        assert "sim" in fetch_server_info(server.url)


def test_default_backend_without_sglang_fails_before_boot_with_one_line(
    pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run on a machine without SGLang: the sglang backend's one line suggests the
    simulator; no server was started (no server log)."""
    monkeypatch.setenv("PYTHONPATH", hiding_sglang(pytester.path.parent / "no-sglang"))
    result = pytester.runpytest_subprocess("perf_tests", "--spec-steps=3", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "SGLang is not installed for * (no module sglang.launch_server): *"
            "or run on the simulator with --specperf-backend=sim"
        ]
    )
    assert not list((suite_dir / ".specperf").glob("server-*.log"))
