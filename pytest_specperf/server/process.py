"""Starting, watching and stopping a server; reading what it says about itself.

A launched server runs in its own session (own process group) bound to 127.0.0.1 on a free
port. Readiness is SGLang's: ``/health_generate`` answers 200 once a one-token generation
works, and the answer must come from the launched process tree (not from whoever else holds
the port). Teardown stops the whole group, then any descendant that escaped it (psutil), and
waits until the port is free. A watchdog process does the same, and saves the redacted log,
if the suite is killed.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import psutil

from pytest_specperf import interrupts
from pytest_specperf.errors import (
    ServerArgumentsRefused,
    ServerStartError,
    ServerUnreachableError,
)
from pytest_specperf.results.schema import ServerSummary
from pytest_specperf.server.gpu_use import describe_gpus
from pytest_specperf.server.gpus import visible_gpus
from pytest_specperf.server.info import first_internal_state, read_server_info
from pytest_specperf.server.launch import LaunchCommand
from pytest_specperf.server.watchdog import (
    SECRETS_ENV,
    LogSilence,
    describe_tree,
    redact,
    save_redacted_log,
)

DEFAULT_LAUNCH_TIMEOUT_S = 600.0  # SGLang's own popen_launch_server default
# A booting server whose log has not grown for this long has stopped: SGLang logs each
# milestone, and CUDA graph capture draws a progress bar as it goes, so even a capture of
# minutes keeps the log growing.
DEFAULT_BOOT_SILENCE_TIMEOUT_S = 300.0
STOP_GRACE_S = 20.0
# A simulator answers 0.3-0.6 s after its start: asked every 0.25 s it was found ready about
# 0.13 s late on average (40 boots: 0.516 s, 0.384 s polled so), at each of the test suite's
# hundreds of boots. Polled faster for this
# long, a real server's minutes of boot still get a poll every 0.25 s after it.
EARLY_POLLING_S = 2.0
SERVER_TAG_ENV = "SPECPERF_SERVER_TAG"
LOG_TAIL_LINES = 40
_PORT_IN_USE_MARKERS = ("address already in use", "errno 98", "port is already in use")
# argparse's last words on a bad command line, SGLang's ("sglang serve: error: ...") and the
# simulator's alike, with exit status 2.
_USAGE_ERROR = re.compile(r"^[^:\n]+: error: (?P<reason>.+)$")
USAGE_EXIT_CODE = 2


# SGLang derives more ports from --port (e.g. its gRPC port, --port + 10003 by default in
# 0.5.12, which must stay <= 65535: seen failing on a real server launched on port 59570).
# Free ports are therefore drawn from a range that leaves headroom above.
PORT_RANGE = (20000, 45000)


def free_port(host: str = "127.0.0.1", port_range: tuple[int, int] = PORT_RANGE) -> int:
    """A port that is free now, in ``port_range`` (the server may still lose a race for it)."""
    low, high = port_range
    for _ in range(200):
        port = random.randrange(low, high)
        if port_is_free(port, host):
            return port
    raise ServerStartError(f"no free port found in {low}..{high} on {host}")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on the port now.

    SO_REUSEADDR as servers set it (uvicorn, aiohttp): connections of a stopped server that
    linger in TIME_WAIT do not hold the port, a listening socket does.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def listens_on(pid: int, port: int) -> bool | None:
    """Whether ``pid`` or one of its descendants listens on TCP ``port``; None if unreadable."""
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return False
    unknown = False
    for proc in tree:
        try:
            connections = proc.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        except psutil.AccessDenied:
            unknown = True
            continue
        for conn in connections:
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                return True
    return None if unknown else False


def _auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def fetch_server_info(
    base_url: str, api_key: str | None = None, timeout_s: float = 10.0
) -> dict[str, Any]:
    """GET /server_info (falling back to the older /get_server_info)."""
    try:
        with httpx.Client(
            base_url=base_url, timeout=timeout_s, headers=_auth_headers(api_key), trust_env=False
        ) as client:
            response = client.get("/server_info")
            if response.status_code == httpx.codes.NOT_FOUND:
                response = client.get("/get_server_info")
            response.raise_for_status()
            info = response.json()
    except httpx.HTTPStatusError as exc:
        code = exc.response.status_code
        hint = " (wrong or missing API key: set SPECPERF_API_KEY)" if code == 401 else ""
        raise ServerUnreachableError(f"{base_url}/server_info answered HTTP {code}{hint}") from exc
    except httpx.HTTPError as exc:
        raise ServerUnreachableError(
            f"cannot reach {base_url}: {type(exc).__name__}: {exc}"
        ) from exc
    except ValueError as exc:
        raise ServerUnreachableError(f"{base_url}/server_info did not return JSON") from exc
    if not isinstance(info, dict):
        raise ServerUnreachableError(f"{base_url}/server_info did not return a JSON object")
    return info


def inject_slowdown(base_url: str, seconds: float | None, api_key: str | None = None) -> None:
    """SGLang's /slow_down: sleep this long in every forward pass (None resets).

    Meant for proving a gate: a real, server-side regression injected on purpose.
    """
    try:
        with httpx.Client(
            base_url=base_url, timeout=30.0, headers=_auth_headers(api_key), trust_env=False
        ) as client:
            response = client.post("/slow_down", json={"forward_sleep_time": seconds})
            response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ServerUnreachableError(f"{base_url}/slow_down failed: {exc}") from exc


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def summarize_server_info(url: str, info: Mapping[str, Any]) -> ServerSummary:
    read = read_server_info(info)
    accept = first_internal_state(read).avg_spec_accept_length
    return ServerSummary(
        url=url,
        version=str(read.version) if read.version is not None else None,
        model_path=read.model_path,
        tp_size=_int_or_none(read.tp_size),
        speculative_algorithm=read.speculative_algorithm,
        speculative_num_steps=_int_or_none(read.speculative_num_steps),
        speculative_eagle_topk=_int_or_none(read.speculative_eagle_topk),
        speculative_num_draft_tokens=_int_or_none(read.speculative_num_draft_tokens),
        kv_cache_dtype=read.kv_cache_dtype,
        max_total_num_tokens=_int_or_none(read.max_total_num_tokens),
        max_running_requests=_int_or_none(read.max_running_requests),
        lifetime_accept_length=float(accept) if isinstance(accept, int | float) else None,
        sim=dict(read.sim) if isinstance(read.sim, Mapping) else None,
    )


def depth_of(info: Mapping[str, Any]) -> int | None:
    """The speculation depth a running server uses (NGRAM: draft tokens - 1)."""
    read = read_server_info(info)
    algorithm = str(read.speculative_algorithm or "").upper()
    if not algorithm:
        return None
    if algorithm == "NGRAM":
        drafts = _int_or_none(read.speculative_num_draft_tokens)
        return drafts - 1 if drafts else None
    return _int_or_none(read.speculative_num_steps)


class ServerProcess:
    """One launched server. Use as a context manager, or call start/wait_ready/stop."""

    def __init__(
        self,
        command: LaunchCommand,
        *,
        host: str,
        port: int,
        log_path: Path,
        launch_timeout_s: float = DEFAULT_LAUNCH_TIMEOUT_S,
        api_key: str | None = None,
        stop_grace_s: float = STOP_GRACE_S,
        silence_timeout_s: float = 0.0,
    ) -> None:
        self.command = command
        self.host = host
        self.port = port
        self.url = f"http://{host}:{port}"
        self.log_path = log_path
        self.launch_timeout_s = launch_timeout_s
        self.api_key = api_key
        self.stop_grace_s = stop_grace_s
        # A boot whose log stays silent this long fails (0: only the launch timeout counts).
        self.silence_timeout_s = silence_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.boot_s: float | None = None
        # The live log sits in a private directory; the artifact copy is redacted.
        self._private_dir = Path(tempfile.mkdtemp(prefix="specperf-server-"))
        self._live_log = self._private_dir / "server.log"
        self._stopped = False
        # Inherited by everything the server starts, so that stop() finds processes that left
        # its group (a new session of their own) or outlived a leader that died at launch.
        self._tag = uuid.uuid4().hex

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,) if self.api_key else ()

    def start(self) -> None:
        """Start the server and its watchdog; a signal meanwhile waits until both run, so
        that stop() finds the process it must stop."""
        with interrupts.deferred():
            self._start()

    def _start(self) -> None:
        env = {**os.environ, **self.command.env, SERVER_TAG_ENV: self._tag}
        with open(self._live_log, "wb") as log:
            self.process = subprocess.Popen(
                self.command.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        # The secrets go through the environment: argv is visible to every user.
        watchdog_env = {**os.environ, SECRETS_ENV: "\n".join(self.secrets)}
        self.watchdog = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_specperf.server.watchdog",
                str(os.getpid()),
                str(self.process.pid),
                str(self.stop_grace_s),
                str(self._live_log),
                str(self.log_path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=watchdog_env,
            start_new_session=True,
        )

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def alive(self, settle_s: float = 0.0) -> bool:
        """Whether the server process still runs; ``settle_s``: how long to wait for it to be
        gone first. A process that kills itself closes its sockets before the kernel makes it
        a zombie, so a client can see its connections die while ``poll()`` still says it runs
        (on a loaded runner: a crash during C=4 was then reported at C=16)."""
        if self.process is None:
            return False
        if settle_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=settle_s)
        return self.process.poll() is None

    def exit_code(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self._live_log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = (
                self.log_path.read_text(encoding="utf-8", errors="replace")
                if self.log_path.exists()
                else ""
            )
        return redact("\n".join(text.splitlines()[-lines:]), self.secrets)

    def refused_arguments(self) -> str | None:
        """The one-line reason of a server that exited with a usage error, else None."""
        if self.exit_code() != USAGE_EXIT_CODE:
            return None
        lines = [line.strip() for line in self.log_tail(5).splitlines() if line.strip()]
        match = _USAGE_ERROR.match(lines[-1]) if lines else None
        return match["reason"] if match else None

    def port_conflict(self) -> bool:
        tail = self.log_tail(200).lower()
        return any(marker in tail for marker in _PORT_IN_USE_MARKERS)

    def wait_ready(self, poll_s: float = 0.25, early_poll_s: float = 0.05) -> float:
        """Block until /health_generate answers 200; returns the boot time in seconds.

        Asks every ``early_poll_s`` for the first EARLY_POLLING_S seconds, then every ``poll_s``.
        """
        assert self.process is not None, "start() first"
        started = time.monotonic()
        deadline = started + self.launch_timeout_s
        silence = LogSilence(self._live_log, now=started)
        with httpx.Client(
            base_url=self.url, timeout=5.0, headers=_auth_headers(self.api_key), trust_env=False
        ) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    refused = self.refused_arguments()
                    if refused is not None:
                        raise ServerArgumentsRefused(
                            f"the server refused its arguments: {refused} (log: {self.log_path})"
                        )
                    raise ServerStartError(
                        f"server exited with code {code} during launch "
                        f"(log: {self.log_path})\n--- server log tail ---\n{self.log_tail()}"
                    )
                # Only ask once the port is ours: whoever else holds it would answer instead.
                if listens_on(self.process.pid, self.port) is not False:
                    with contextlib.suppress(httpx.HTTPError):
                        if client.get("/health_generate").status_code == httpx.codes.OK:
                            self.boot_s = time.monotonic() - started
                            return self.boot_s
                silent_s = silence.silent_for()
                if self.silence_timeout_s and silent_s >= self.silence_timeout_s:
                    raise ServerStartError(self._silent_boot_message(silent_s, started))
                if time.monotonic() >= deadline:
                    raise ServerStartError(
                        f"server did not become healthy within {self.launch_timeout_s:g} s "
                        f"(/health_generate at {self.url}; raise --specperf-launch-timeout) "
                        f"(log: {self.log_path})\n--- server log tail ---\n{self.log_tail()}"
                    )
                early = time.monotonic() - started < EARLY_POLLING_S
                time.sleep(early_poll_s if early else poll_s)

    def _silent_boot_message(self, silent_s: float, started: float) -> str:
        assert self.process is not None
        alive = "still runs" if self.process.poll() is None else "has exited"
        gpus = describe_gpus(visible_gpus({**os.environ, **self.command.env}))
        return (
            f"server stopped without a word during launch: its log has not grown for "
            f"{silent_s:.0f} s ({time.monotonic() - started:.0f} s after launch; the limit is "
            f"--specperf-boot-silence-timeout={self.silence_timeout_s:g}) and /health_generate "
            f"never answered; the server process {alive} (log: {self.log_path})\n"
            f"--- what its processes are doing ---\n{describe_tree(self.process.pid)}\n"
            + (f"--- its GPUs ---\n{gpus}\n" if gpus else "")
            + f"--- server log tail ---\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Stop the whole process tree, wait for the port, and save the redacted log.

        A Ctrl-C meanwhile does not cut it short (it is raised once the tree is down); a
        second one hurries it: the grace period ends and the tree is killed.
        """
        with interrupts.deferred():
            self._stop()

    def _stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.process is not None:
            descendants = _descendants(self.process.pid)
            # Wait for the port only if it was ours: after a port conflict it is someone else's.
            held_port = self.boot_s is not None or listens_on(self.process.pid, self.port)
            _signal_group(self.process.pid, signal.SIGTERM)
            _wait_unless_hurried(self.process, self.stop_grace_s)
            _signal_group(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            _kill_all(descendants)
            _kill_all(tagged_processes(self._tag))
            if held_port is not False:
                _wait_port_free(self.port, self.host, timeout_s=10.0)
        if self.watchdog is not None:
            with contextlib.suppress(OSError):
                self.watchdog.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.watchdog.wait(timeout=5)
        self._save_log()

    def _save_log(self) -> None:
        save_redacted_log(self._live_log, self.log_path, self.secrets)

    def __enter__(self) -> ServerProcess:
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        children: list[psutil.Process] = psutil.Process(pid).children(recursive=True)
        return children
    except psutil.NoSuchProcess:
        return []


def _wait_unless_hurried(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Wait for the process to exit, at most ``timeout_s``, less if a second Ctrl-C comes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not interrupts.hurry_requested():
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
            return


def tagged_processes(tag: str) -> list[psutil.Process]:
    """The live processes whose environment carries this server's tag."""
    found: list[psutil.Process] = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.pid != os.getpid() and proc.environ().get(SERVER_TAG_ENV) == tag:
                found.append(proc)
    return found


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _kill_all(processes: list[psutil.Process]) -> None:
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(processes, timeout=5)


def _wait_port_free(port: int, host: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not port_is_free(port, host) and time.monotonic() < deadline:
        time.sleep(0.1)


def launch(
    build: Any,
    *,
    host: str,
    log_path: Path,
    launch_timeout_s: float,
    api_key: str | None,
    attempts: int = 3,
    pick_port: Callable[[str], int] = free_port,
    started: Callable[[ServerProcess], None] | None = None,
    silence_timeout_s: float = 0.0,
) -> ServerProcess:
    """Start a server on a free port, retrying on another port if that one was taken.

    ``build(port) -> LaunchCommand`` makes the command for a given port; ``pick_port(host)``
    chooses the port of each attempt. ``started(server)`` is called as soon as a server
    process runs, before it is ready, so that a caller interrupted during the boot can stop it.
    """
    last_error: ServerStartError | None = None
    for _ in range(attempts):
        port = pick_port(host)
        server = ServerProcess(
            build(port),
            host=host,
            port=port,
            log_path=log_path,
            launch_timeout_s=launch_timeout_s,
            api_key=api_key,
            silence_timeout_s=silence_timeout_s,
        )
        with interrupts.deferred():
            server.start()
            if started is not None:
                started(server)
        try:
            server.wait_ready()
        except ServerStartError as exc:
            conflict = server.port_conflict()
            server.stop()
            if not conflict:
                raise
            last_error = exc
            continue
        except BaseException:
            server.stop()
            raise
        return server
    assert last_error is not None
    raise last_error
