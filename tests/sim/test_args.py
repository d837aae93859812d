"""Command-line parsing: SGLang's flags and rules, --sim-* knobs, one-line errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_specperf.server.launch import build_launch
from pytest_specperf.server.profiles import builtin_profiles
from pytest_specperf.sim.args import UsageError, build_parser, parse_args
from pytest_specperf.sim.sglang_flags import SGLANG_VERSION


def test_defaults_are_sglang_like_and_fast() -> None:
    cfg = parse_args([])
    assert (cfg.host, cfg.port) == ("127.0.0.1", 30000)
    assert cfg.algorithm is None and cfg.chain == 0
    assert cfg.speedup == 1.0 and cfg.noise == 0.0 and cfg.jitter == 0.0
    assert cfg.fault is None and cfg.crash_after is None and cfg.boot_delay == 0.0
    assert cfg.profile.name == "qwen3.5-122b-a10b-fp8-4x-rtx-pro-6000"


def test_nextn_is_reported_as_eagle_and_algorithm_alone_means_3_1_4() -> None:
    cfg = parse_args(["--speculative-algorithm", "NEXTN"])
    assert cfg.algorithm == "EAGLE"
    assert (cfg.num_steps, cfg.eagle_topk, cfg.num_draft_tokens) == (3, 1, 4)
    assert cfg.server_args["speculative_algorithm"] == "EAGLE"


@pytest.mark.parametrize(
    ("steps", "tokens", "cap"), [(1, 455_357, 26), (2, 377_207, 21), (3, 295_931, 17)]
)
def test_seed_kv_capacity_per_depth(steps: int, tokens: int, cap: int) -> None:
    cfg = parse_args(
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            str(steps),
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            str(steps + 1),
        ]
    )
    assert cfg.max_total_num_tokens == tokens
    assert cfg.max_running_requests == cap
    assert cfg.server_args["max_running_requests"] == cap


def test_explicit_max_running_requests_lowers_only() -> None:
    base = ["--speculative-algorithm", "EAGLE"]
    assert parse_args([*base, "--max-running-requests", "5"]).max_running_requests == 5
    assert parse_args([*base, "--max-running-requests", "500"]).max_running_requests == 17


def test_topk_1_forces_draft_tokens_with_warning() -> None:
    cfg = parse_args(
        [
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "2",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "8",
        ]
    )
    assert cfg.num_draft_tokens == 3
    assert any("adjusted from 8 to 3" in w for w in cfg.warnings)


def test_partial_speculative_triple_is_an_error() -> None:
    with pytest.raises(UsageError, match="together"):
        parse_args(["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2"])


def test_ngram_chain_is_draft_tokens_minus_one() -> None:
    cfg = parse_args(["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "4"])
    assert cfg.algorithm == "NGRAM" and cfg.chain == 3 and cfg.num_steps is None


def test_tensor_parallel_alias_and_api_key_redacted() -> None:
    cfg = parse_args(["--tensor-parallel-size", "4", "--api-key", "sekrit"])
    assert cfg.server_args["tp_size"] == 4
    assert cfg.api_key == "sekrit"
    assert "sekrit" not in repr(cfg.server_args)


def test_sglang_flags_the_sim_does_not_model_are_accepted_with_a_warning() -> None:
    cfg = parse_args(
        [
            "--chunked-prefill-size",
            "4096",
            "--enable-mixed-chunk",
            "--cuda-graph-bs-decode",
            "1",
            "2",
            "4",
            "--no-enable-tf32-matmul",
            "--port",
            "1234",
        ]
    )
    assert cfg.port == 1234
    assert [w.split()[2] for w in cfg.warnings] == [
        "--chunked-prefill-size",
        "--enable-mixed-chunk",
        "--cuda-graph-bs-decode",
        "--no-enable-tf32-matmul",
    ]


def test_unmodelled_sglang_switch_takes_no_value_as_in_sglang() -> None:
    with pytest.raises(UsageError, match="--enable-mixed-chunk: ignored explicit argument"):
        parse_args(["--enable-mixed-chunk=yes"])


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["--sim-slowdwn=0.2"], "--sim-slowdwn=0.2"),
        (["--sim-slowdwn", "0.2"], "--sim-slowdwn 0.2"),
        (["--port", "1234", "--no-such-flag"], "--no-such-flag"),
        (["stray"], "stray"),
    ],
)
def test_flag_neither_sglang_nor_sim_has_is_refused_as_sglang_refuses_it(
    argv: list[str], refused: str
) -> None:
    with pytest.raises(UsageError) as e:
        parse_args(argv)
    assert str(e.value) == f"unrecognized arguments: {refused}"


def test_cli_refuses_misspelt_knob_with_exit_2_and_one_stderr_line() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "pytest_specperf.sim", "--sim-slowdwn=0.2"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "python -m pytest_specperf.sim: error: unrecognized arguments: --sim-slowdwn=0.2"
    ]


@pytest.mark.parametrize("sglang_version", ["0.5.12", SGLANG_VERSION])
@pytest.mark.parametrize("name", sorted(builtin_profiles()))
def test_every_shipped_profile_launch_is_accepted(name: str, sglang_version: str) -> None:
    """The flags a profile passes to an older SGLang too (renamed since) reach the sim."""
    for steps in (0, 3):
        argv = build_launch(
            builtin_profiles()[name], steps, backend="sim", sglang_version=sglang_version
        ).argv
        parse_args(argv[3:])  # after `python -m pytest_specperf.sim`


def test_help_leaves_out_the_sglang_flags_the_sim_ignores() -> None:
    text = build_parser().format_help()
    assert "--chunked-prefill-size" not in text
    assert "--sim-slowdown" in text


def test_slowdown_means_throughput_fraction() -> None:
    assert parse_args(["--sim-slowdown", "0.2"]).slowdown == 0.2
    with pytest.raises(UsageError):
        parse_args(["--sim-slowdown", "1"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            [
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-num-steps",
                "0",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "1",
            ],
            "positive",
        ),
        (
            [
                "--speculative-algorithm",
                "EAGLE",
                "--speculative-num-steps",
                "-2",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "1",
            ],
            "positive",
        ),
        (["--speculative-num-steps", "three"], "invalid int"),
        (["--speculative-algorithm", "MEDUSA"], "invalid choice"),
        (["--port", "70000"], "port"),
        (["--sim-speedup", "0"], "sim-speedup"),
        (["--sim-fault", "explode"], "invalid choice"),
        (["--sim-error-status", "42"], "sim-error-status"),
    ],
)
def test_invalid_values_raise_one_line(argv: list[str], needle: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_args(argv)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_cli_error_exits_2_with_one_stderr_line() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "pytest_specperf.sim", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0] and "port" in lines[0]


def test_help_documents_every_flag() -> None:
    text = build_parser().format_help()
    for flag in [
        "--model-path",
        "--tp-size",
        "--tensor-parallel-size",
        "--host",
        "--port",
        "--speculative-algorithm",
        "--speculative-num-steps",
        "--speculative-eagle-topk",
        "--speculative-num-draft-tokens",
        "--speculative-draft-model-path",
        "--kv-cache-dtype",
        "--mem-fraction-static",
        "--max-running-requests",
        "--trust-remote-code",
        "--api-key",
        "--quantization",
        "--attention-backend",
        "--context-length",
        "--load-format",
        "--disable-radix-cache",
        "--cuda-graph-max-bs",
        "--sampling-backend",
        "--sim-profile",
        "--sim-seed",
        "--sim-speedup",
        "--sim-noise",
        "--sim-jitter",
        "--sim-slowdown",
        "--sim-acceptance",
        "--sim-boot-delay",
        "--sim-crash-after",
        "--sim-hang-at-boot",
        "--sim-fault",
        "--sim-fault-rate",
        "--sim-error-status",
    ]:
        assert flag in text, flag
