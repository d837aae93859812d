"""Boot the simulator for the benchmark scripts through the suite's own launch code.

The default profile at the given depth (EAGLE family, topk 1, steps + 1 draft tokens),
started by `build_launch` + `launch` exactly as a `--specperf-backend=sim` run starts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_specperf.server.launch import LaunchCommand, build_launch
from pytest_specperf.server.process import ServerProcess, launch
from pytest_specperf.server.profiles import DEFAULT_PROFILE, builtin_profiles


def boot_sim(steps: int, speedup: float, log: Path, extra: Sequence[str] = ()) -> ServerProcess:
    """A healthy simulator on a free port; the caller stops it (`server.stop()`)."""
    profile = builtin_profiles()[DEFAULT_PROFILE]

    def command(port: int) -> LaunchCommand:
        return build_launch(
            profile, steps, backend="sim", port=port, sim_speedup=speedup, server_args=extra
        )

    return launch(command, host="127.0.0.1", log_path=log, launch_timeout_s=60, api_key=None)


def sglang_serving_argv(
    python: str,
    url: str,
    *,
    tokenizer: str,
    model: str,
    input_len: int,
    output_len: int,
    prompts: int,
    concurrency: int,
    output_file: str,
) -> list[str]:
    """SGLang's own benchmark client on random token ids of fixed lengths (every output of
    ``output_len`` tokens), its JSON summary appended to ``output_file``."""
    return [
        python, "-m", "sglang.benchmark.serving", "--backend", "sglang", "--base-url", url,
        "--tokenizer", tokenizer, "--model", model, "--dataset-name", "random-ids",
        "--random-input-len", str(input_len), "--random-output-len", str(output_len),
        "--random-range-ratio", "1.0", "--num-prompts", str(prompts),
        "--max-concurrency", str(concurrency), "--output-file", output_file,
    ]  # fmt: skip
