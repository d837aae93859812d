"""Server launch commands: one builder for SGLang and for the simulator.

The fixture, ``specperf launch-cmd`` and the contract tests all call :func:`build_launch`,
so the command a user copies is the command the suite runs.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pytest_specperf.depth import CONTROL_DEPTH, check_depth
from pytest_specperf.errors import ServerStartError, UsageError
from pytest_specperf.server.profiles import REFERENCE_SGLANG_VERSION, SAME_AS_MODEL, Profile

Backend = Literal["sglang", "sim"]
BACKENDS: tuple[Backend, ...] = ("sglang", "sim")
SGLANG_MODULE = "sglang.launch_server"
SIM_MODULE = "pytest_specperf.sim"
REDACTED = "***"
_SECRET_FLAGS = frozenset({"--api-key", "--admin-api-key"})


@dataclass(frozen=True)
class LaunchCommand:
    """An argv list (never a shell string) plus the environment it adds."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def display(self) -> str:
        """The command as one shell-quoted line, secrets replaced by ***."""
        return shlex.join(redact_argv(self.argv))


def installed_sglang_version() -> str:
    """The version of the SGLang package installed here, or the reference version."""
    try:
        return importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError:
        return REFERENCE_SGLANG_VERSION


def redact_argv(argv: Sequence[str]) -> list[str]:
    shown: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            shown.append(REDACTED)
            hide_next = False
            continue
        flag, sep, _ = arg.partition("=")
        if flag in _SECRET_FLAGS:
            if sep:
                shown.append(f"{flag}={REDACTED}")
            else:
                shown.append(arg)
                hide_next = True
            continue
        shown.append(arg)
    return shown


# SGLang's own knob (srt/environ.py, read in speculative/spec_utils.py): every verify step
# accepts this many tokens on average, whatever the draft proposed (EAGLE and NEXTN paths).
SIMULATE_ACCEPT_LENGTH_ENV = "SGLANG_SIMULATE_ACC_LEN"


def speculative_argv(profile: Profile, steps: int, model_path: str) -> list[str]:
    """The speculative-decoding flags for one depth, following SGLang's rules.

    Steps, topk and draft tokens are always given together (SGLang rejects a partial set);
    with topk = 1 the draft tokens are steps + 1, which SGLang would force anyway. NGRAM has
    no steps: its depth is expressed as steps + 1 draft tokens. Depth 0 is the
    no-speculation control: no speculative flag at all.
    """
    check_depth(steps)
    algorithm = profile.speculative_algorithm
    if algorithm is None or steps == CONTROL_DEPTH:
        return []
    if algorithm.upper() == "NGRAM":
        return [
            "--speculative-algorithm",
            "NGRAM",
            "--speculative-num-draft-tokens",
            str(steps + 1),
        ]
    topk = profile.speculative_eagle_topk
    draft_tokens = steps + 1 if topk == 1 else profile.speculative_num_draft_tokens
    argv = [
        "--speculative-algorithm",
        algorithm,
        "--speculative-num-steps",
        str(steps),
        "--speculative-eagle-topk",
        str(topk),
        "--speculative-num-draft-tokens",
        str(draft_tokens),
    ]
    if profile.draft_model_path is not None:
        draft = profile.draft_model_path
        if draft == SAME_AS_MODEL:
            draft = model_path
        argv += ["--speculative-draft-model-path", draft]
    return argv


_ENV_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def server_environment(
    pairs: Sequence[tuple[str, str]], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """--specperf-server-env's NAME=VALUE pairs as a server's extra environment: ``$NAME`` or
    ``${NAME}`` in a value is this process's (empty when unset), a later pair for a name wins.
    A ``:``-separated element that is only a reference, empty, is dropped with its ``:``: an
    empty element of a search path is the current directory (``PYTHONPATH=/src:$PYTHONPATH``
    with PYTHONPATH unset would put the server's working directory on its path)."""
    environ = os.environ if environ is None else environ

    def expand(value: str) -> str:
        parts = [
            (_ENV_REFERENCE.sub(lambda m: environ.get(m.group(1) or m.group(2), ""), part), part)
            for part in value.split(":")
        ]
        return ":".join(
            found for found, part in parts if found or not _ENV_REFERENCE.fullmatch(part)
        )

    return {name: expand(value) for name, value in pairs}


def build_launch(
    profile: Profile,
    steps: int,
    *,
    backend: Backend = "sglang",
    host: str = "127.0.0.1",
    port: int = 30000,
    server_args: Sequence[str] = (),
    api_key: str | None = None,
    model_path: str | None = None,
    python: str | None = None,
    sim_speedup: float | None = None,
    sglang_version: str | None = None,
) -> LaunchCommand:
    """The full server command for a profile at one speculation depth.

    ``model_path`` overrides the profile's (used when a model factory built the folder).
    ``server_args`` are appended last, so a user's flag wins over the profile's.
    ``sglang_version`` picks version-limited profile flags (default: the installed SGLang's,
    else the reference version the contract tests check).
    """
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    model = model_path or profile.model_path
    module = SGLANG_MODULE if backend == "sglang" else SIM_MODULE
    argv = [
        python or sys.executable,
        "-m",
        module,
        "--model-path",
        model,
        "--tp-size",
        str(profile.tp_size),
        "--host",
        host,
        "--port",
        str(port),
        *speculative_argv(profile, steps, model),
        *profile.extra_argv(
            sglang_version or installed_sglang_version(), speculative=steps != CONTROL_DEPTH
        ),
    ]
    if backend == "sim":
        argv += ["--sim-profile", profile.sim_profile]
        if sim_speedup is not None:
            argv += ["--sim-speedup", f"{sim_speedup:g}"]
    if api_key:
        argv += ["--api-key", api_key]
    argv += list(server_args)
    env = dict(profile.env)
    accept_length = profile.simulated_accept_length_at(steps)
    if backend == "sglang" and accept_length is not None:
        env[SIMULATE_ACCEPT_LENGTH_ENV] = f"{accept_length:g}"
    return LaunchCommand(argv=argv, env=env)


# Finds the module as `python -m` would, without importing it or its package (importing
# sglang pulls in torch): exit 0 when found, 1 when not.
_FIND_MODULE = """
import importlib.machinery, importlib.util, sys
package, _, module = sys.argv[1].rpartition(".")
try:
    spec = importlib.util.find_spec(package)
    found = spec is not None and spec.submodule_search_locations is not None and (
        importlib.machinery.PathFinder.find_spec(sys.argv[1], list(spec.submodule_search_locations))
        is not None
    )
except (ImportError, ValueError):
    found = False
sys.exit(0 if found else 1)
"""


def require_server_module(command: LaunchCommand) -> None:
    """Before booting SGLang: that the command's Python finds it, as ``python -m`` would
    (run with the server's environment), else one line saying what to install, or to run on
    the simulator instead."""
    argv = command.argv
    if len(argv) < 3 or argv[1] != "-m" or argv[2] != SGLANG_MODULE:
        return
    python = argv[0]
    try:
        done = subprocess.run(
            [python, "-c", _FIND_MODULE, SGLANG_MODULE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={**os.environ, **command.env},
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerStartError(f"cannot run the server's Python {python}: {exc}") from None
    if done.returncode != 0:
        raise ServerStartError(
            f"SGLang is not installed for {python} (no module {SGLANG_MODULE}): "
            'pip install "pytest-specperf[sglang]" on a GPU machine, or run on the simulator '
            "with --specperf-backend=sim"
        )
